"""`ActiveController`: everything the elected controller runs, set up by failover and torn
down on resignation (Kafka's `onControllerFailover` / `onControllerResignation`).

Holds the context, both state machines, the request batch, the channel manager and the
managers of the controller's duties: topic deletion (`controller.topic_deletion`),
partition reassignment (`controller.reassignment`), preferred and unclean elections with
the auto rebalance (`controller.replica_election`). It handles itself broker changes
(startup, failure, bounce), topic changes (creation), ISR change notifications and, through
`controller.controlled_shutdown`, controlled shutdown.

Event thread only; the ZooKeeper watches it arms run on kazoo's thread and StopReplica
response callbacks on the sender threads, and both only enqueue events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from controller import events as ev
from controller.channel_manager import (
    BrokerChannel,
    ControllerChannelManager,
    ControlRequest,
    ControlResponse,
    ResponseCallback,
    grpc_channel,
)
from controller.context import ControllerContext, PartitionReplica
from controller.deletion_decisions import deletion_response_callback
from controller.isr_changes import process_isr_change_notification
from controller.partition_state_machine import (
    ElectionStats,
    OfflineElection,
    PartitionStateMachine,
)
from controller.reassignment import ReassignmentManager
from controller.replica_election import ReplicaElections
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from controller.topic_deletion import TopicDeletionManager
from controller.watchers import Watchers
from eventlog import EventKind, EventLog
from rpc import messages as m
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import Broker, TopicPartition
from zkdata.reassignment import ReassignmentZk


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    """Controller settings taken from the broker's configuration."""

    unclean_leader_election_enable: bool = False
    #: Kafka's `delete.topic.enable`: when false, deletion requests are only removed.
    delete_topic_enable: bool = True
    #: Kafka's `auto.leader.rebalance.enable`, `leader.imbalance.per.broker.percentage`
    #: and `leader.imbalance.check.interval.seconds`.
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    leader_imbalance_check_interval_s: float = 300.0


class ActiveController:
    """The state and duties of the controller while it is active."""

    def __init__(
        self,
        broker_id: int,
        context: ControllerContext,
        zk: KafkaZkClient,
        event_log: EventLog,
        watchers: Watchers,
        config: ControllerConfig,
        connect: Callable[[Broker], BrokerChannel] = grpc_channel,
        stats: ElectionStats | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.ctx = context
        self._zk = zk
        self._events = event_log
        self._watchers = watchers
        self._config = config
        self.channels = ControllerChannelManager(event_log, connect)
        self.batch = RequestBatch(
            broker_id,
            context,
            self._send,
            on_stop_replica_response=self._on_stop_replica_response,
        )
        self.partitions = PartitionStateMachine(
            context, zk, self.batch, event_log, config.unclean_leader_election_enable, stats
        )
        self.replicas = ReplicaStateMachine(context, zk, self.batch, event_log)
        self.deletion = TopicDeletionManager(
            context,
            TopicDeletionZk(zk),
            self.partitions,
            self.replicas,
            self.batch,
            event_log,
            config.delete_topic_enable,
        )
        self.elections = ReplicaElections(
            context,
            zk,
            self.partitions,
            event_log,
            watchers,
            config.leader_imbalance_per_broker_percentage,
        )
        self.reassignments = ReassignmentManager(
            context,
            ReassignmentZk(zk),
            zk,
            self.partitions,
            self.replicas,
            self.batch,
            self.deletion,
            event_log,
            watchers,
        )

    # -- requests and responses ---------------------------------------------------------------

    def _send(
        self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None
    ) -> bool:
        """The batch's `send` (event thread): a StopReplica keeps its response callback only
        if it deletes partitions, narrowed to those partitions."""
        if isinstance(request, m.StopReplicaRequest) and callback is not None:
            callback = deletion_response_callback(request, callback)
        return self.channels.send(broker_id, request, callback)

    def _on_stop_replica_response(self, broker_id: int, response: ControlResponse) -> None:
        """A StopReplica that deleted partitions was answered (sender thread): enqueue."""
        if isinstance(response, m.StopReplicaResponse):
            self._watchers.enqueue(ev.TopicDeletionStopReplicaResponseReceived(broker_id, response))

    # -- watches ----------------------------------------------------------------------------

    def _arm_broker_watch(self) -> list[str]:
        return self._zk.watch_children(paths.BROKER_IDS, self._watchers(ev.BrokerChange()))

    def _arm_topic_watch(self) -> set[str]:
        return self._zk.get_all_topics(watch=self._watchers(ev.TopicChange()))

    def _deletion_requests(self) -> list[str]:
        """Arm the `/admin/delete_topics` child watch again and list the requests."""
        return self._zk.watch_children(paths.DELETE_TOPICS, self._watchers(ev.TopicDeletion()))

    def arm_admin_watches(self) -> None:
        """The watches of the admin paths and of ISR change notifications."""
        self.rearm(ev.TopicDeletion())
        self.rearm(ev.IsrChangeNotification())
        self.rearm(ev.PartitionReassignment())
        self.rearm(ev.ReplicaLeaderElection())

    def rearm(self, event: ev.ControllerEvent) -> None:
        """Arm again the one-shot watch of an admin path (the handlers of deletion,
        reassignment and preferred election re-arm their own watch when they read)."""
        callback = self._watchers(event)
        match event:
            case ev.TopicDeletion():
                self._zk.watch_children(paths.DELETE_TOPICS, callback)
            case ev.IsrChangeNotification():
                self._zk.watch_children(paths.ISR_CHANGE_NOTIFICATION, callback)
            case ev.PartitionReassignment():
                self._zk.watch_exists(paths.REASSIGN_PARTITIONS, callback)
            case ev.ReplicaLeaderElection():
                self._zk.watch_exists(paths.PREFERRED_REPLICA_ELECTION, callback)
            case _:
                pass

    # -- failover and resignation ---------------------------------------------------------

    def on_failover(self) -> None:
        """Load the cluster from ZooKeeper (pipelined), open channels, tell every broker,
        and start both state machines."""
        started = time.monotonic()
        self._arm_broker_watch()
        listing = self._zk.get_all_brokers()
        for name, error in listing.malformed.items():
            self._malformed(error.path or name, error.reason)
        self.ctx.set_live_brokers(listing.brokers.values())
        self._load_topics(self._arm_topic_watch())
        self.arm_admin_watches()
        partitions = self.ctx.all_partitions()
        states = self._zk.get_partition_states(partitions)
        for tp, state in states.found.items():
            self.ctx.set_leadership(tp, state)
        for error in states.malformed.values():
            self._malformed(error.path, error.reason)
        self.deletion.init(self._deletion_requests())
        self.channels.startup(self.ctx.live_brokers())
        self._send_update_metadata(self.ctx.live_or_shutting_down_broker_ids(), [])
        self.replicas.startup()
        self.partitions.startup()
        self.reassignments.on_failover()
        self.deletion.try_topic_deletion()
        self.elections.process_preferred_replica_election_znode()
        self.process_isr_change_notification()
        if self._config.auto_leader_rebalance_enable:
            self.elections.start_rebalance_timer(self._config.leader_imbalance_check_interval_s)
        self._events.emit(
            EventKind.CONTROLLER_FAILOVER_DONE,
            controller_epoch=self.ctx.epoch,
            brokers=len(self.ctx.live_brokers()),
            topics=len(self.ctx.all_topics()),
            partitions=len(partitions),
            offline_partitions=self.ctx.offline_partition_count(),
            duration_ms=round((time.monotonic() - started) * 1000, 1),
        )

    def on_resignation(self) -> None:
        """Stop the rebalance timer and close every channel; the caller resets the context."""
        self.elections.stop_rebalance_timer()
        self.channels.shutdown()

    def _load_topics(self, topics: set[str]) -> list[str]:
        """Read the assignments and configs of `topics` into the context; return the ones
        that loaded (malformed ones are reported and skipped)."""
        reads = self._zk.get_topic_assignments(sorted(topics))
        for error in reads.malformed.values():
            self._malformed(error.path, error.reason)
        configs = self._zk.get_topic_configs(sorted(reads.found))
        for error in configs.malformed.values():
            self._malformed(error.path, error.reason)
        for topic, assignment in sorted(reads.found.items()):
            self.ctx.add_topic(topic, assignment.partitions)
            self.ctx.set_topic_config(
                topic, configs.found[topic].config if topic in configs.found else {}
            )
        return sorted(reads.found)

    def _malformed(self, path: str | None, reason: str) -> None:
        self._events.emit(EventKind.MALFORMED_ZNODE, path=path, reason=reason)

    def _send_update_metadata(
        self, broker_ids: frozenset[int] | list[int], partitions: list[TopicPartition]
    ) -> None:
        self.batch.new_batch()
        self.batch.add_update_metadata(broker_ids, partitions)
        self.batch.send()

    # -- topics ---------------------------------------------------------------------------

    def process_topic_change(self) -> None:
        """New topics get their partitions created and brought online; vanished topics are
        forgotten."""
        topics = self._arm_topic_watch()
        known = self.ctx.all_topics()
        deleted = known - topics
        for topic in sorted(deleted):
            self.ctx.remove_topic(topic)
        added = self._load_topics(topics - known)
        self._events.emit(EventKind.TOPIC_CHANGE, added=added, removed=sorted(deleted))
        new_partitions = [tp for topic in added for tp in self.ctx.partitions_of(topic)]
        if new_partitions:
            self.on_new_partition_creation(new_partitions)

    def process_topic_config_change(self, topic: str) -> None:
        """Reload a topic's overrides; when unclean leader election is now enabled for it,
        elect leaders for its offline partitions."""
        if topic not in self.ctx.all_topics():
            return
        configs = self._zk.get_topic_configs([topic])
        for error in configs.malformed.values():
            self._malformed(error.path, error.reason)
            return
        found = configs.found.get(topic)
        self.ctx.set_topic_config(topic, dict(found.config) if found else {})
        if self.ctx.unclean_enabled(topic, self._config.unclean_leader_election_enable):
            self.partitions.trigger_online_partition_state_change(topic)

    def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        """New -> Online for partitions and their replicas (Kafka's onNewPartitionCreation)."""
        replicas = self.ctx.replicas_for_partitions(partitions)
        self.partitions.handle_state_changes(partitions, PartitionState.NEW)
        self.replicas.handle_state_changes(replicas, ReplicaState.NEW)
        self.partitions.handle_state_changes(partitions, PartitionState.ONLINE, OfflineElection())
        self.replicas.handle_state_changes(replicas, ReplicaState.ONLINE)

    # -- topic deletion -------------------------------------------------------------------------

    def process_topic_deletion(self) -> None:
        """`/admin/delete_topics` changed: re-arm the watch and hand the requests to the
        deletion manager (Kafka's TopicDeletion event)."""
        self.deletion.on_deletion_requests(self._deletion_requests())

    def process_stop_replica_response(
        self, event: ev.TopicDeletionStopReplicaResponseReceived
    ) -> None:
        """A broker answered a StopReplica that deleted partitions."""
        self.deletion.on_stop_replica_response(event.broker_id, event.response)

    # -- ISR changes --------------------------------------------------------------------------

    def process_isr_change_notification(self) -> None:
        """Leaders recorded ISR changes (`controller.isr_changes`)."""
        process_isr_change_notification(
            self.ctx, self._zk, self._watchers, self._events, self._send_update_metadata
        )

    # -- brokers --------------------------------------------------------------------------

    def process_broker_change(self) -> None:
        """Compare `/brokers/ids` (with czxid epochs) to the live set: start new brokers,
        fail dead ones, and fail-then-start bounced ones (same id, larger epoch)."""
        self._arm_broker_watch()
        listing = self._zk.get_all_brokers()
        for name, error in listing.malformed.items():
            self._malformed(error.path or name, error.reason)
        current = listing.brokers
        known = self.ctx.live_or_shutting_down_broker_ids()
        new = sorted(set(current) - known)
        dead = sorted(known - set(current))
        bounced = sorted(
            b for b in set(current) & known if current[b].epoch > self.ctx.broker_epoch(b)
        )
        self._events.emit(
            EventKind.BROKER_CHANGE,
            new=new,
            dead=dead,
            bounced=bounced,
            live=sorted(current),
            epochs={str(b): current[b].epoch for b in sorted(current)},
        )
        for broker_id in bounced + dead:
            self.channels.remove_broker(broker_id)
        for broker_id in new + bounced:
            self.channels.add_broker(current[broker_id])
        if new:
            self.ctx.add_live_brokers(current[b] for b in new)
            self.on_broker_startup(new)
        if bounced:
            self.ctx.remove_live_brokers(bounced)
            self.on_broker_failure(bounced)
            self.ctx.add_live_brokers(current[b] for b in bounced)
            self.on_broker_startup(bounced)
        if dead:
            self.ctx.remove_live_brokers(dead)
            self.on_broker_failure(dead)

    def on_broker_startup(self, new_brokers: list[int]) -> None:
        """Tell everyone about the new brokers, give them full metadata and their replicas,
        bring offline partitions back online, and resume the deletion of topics with
        replicas on them."""
        existing = self.ctx.live_or_shutting_down_broker_ids() - set(new_brokers)
        self._send_update_metadata(existing, [])
        self._send_update_metadata(frozenset(new_brokers), self.ctx.partitions_with_leaders())
        replicas = self.ctx.replicas_on_brokers(new_brokers)
        self.replicas.handle_state_changes(replicas, ReplicaState.ONLINE)
        self.partitions.trigger_online_partition_state_change()
        self.reassignments.on_broker_startup(new_brokers)
        deleting = {
            r.topic_partition.topic
            for r in replicas
            if self.ctx.is_topic_queued_for_deletion(r.topic_partition.topic)
        }
        if deleting:
            self.deletion.resume_deletion_for_topics(deleting)

    def on_broker_failure(self, dead_brokers: list[int]) -> None:
        """Move leaderships off dead brokers and take their replicas offline; the replicas
        of topics being deleted fail their deletion instead (the topics wait for the
        brokers to return)."""
        not_deleting: list[PartitionReplica] = []
        deleting: list[PartitionReplica] = []
        for r in self.ctx.replicas_on_brokers(dead_brokers):
            queued = self.ctx.is_topic_queued_for_deletion(r.topic_partition.topic)
            (deleting if queued else not_deleting).append(r)
        offline_leaders = self.ctx.partitions_with_offline_leader()
        self.partitions.handle_state_changes(offline_leaders, PartitionState.OFFLINE)
        self.partitions.trigger_online_partition_state_change()
        self.replicas.handle_state_changes(not_deleting, ReplicaState.OFFLINE)
        if deleting:
            self.deletion.on_replicas_offline(deleting)
        if not offline_leaders:
            self._send_update_metadata(self.ctx.live_or_shutting_down_broker_ids(), [])
