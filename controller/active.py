"""`ActiveController`: everything the elected controller runs, set up by failover and torn
down on resignation (Kafka's `onControllerFailover` / `onControllerResignation`).

Holds the context, both state machines, the request batch, the channel manager and the
managers of the controller's duties: broker changes and offline replicas
(`controller.broker_changes`), topic deletion (`controller.topic_deletion`), partition
reassignment (`controller.reassignment`), preferred and unclean elections with the auto
rebalance (`controller.replica_election`). It handles itself topic changes (creation),
topic config changes and, through `controller.isr_changes`, ISR change notifications.

Event thread only; the ZooKeeper watches it arms run on kazoo's thread and the StopReplica
and LeaderAndIsr response callbacks on the sender threads, and they only enqueue events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from kazoo.protocol.states import WatchedEvent

from controller import events as ev
from controller.broker_changes import BrokerChanges
from controller.channel_manager import (
    BrokerChannel,
    ControllerChannelManager,
    ControlRequest,
    ControlResponse,
    ResponseCallback,
    grpc_channel,
)
from controller.context import ControllerContext
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
from rpc.errors import Errors
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
        self.brokers = BrokerChanges(
            context,
            zk,
            self.channels,
            self.partitions,
            self.replicas,
            self.deletion,
            self.reassignments,
            event_log,
            watchers,
            self._send_update_metadata,
        )

    # -- requests and responses ---------------------------------------------------------------

    def _send(
        self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None
    ) -> bool:
        """The batch's `send` (event thread): a StopReplica keeps its response callback only
        if it deletes partitions, narrowed to those partitions."""
        if isinstance(request, m.StopReplicaRequest) and callback is not None:
            callback = deletion_response_callback(request, callback)
        if isinstance(request, m.LeaderAndIsrRequest):
            callback = self._on_leader_and_isr_response
        return self.channels.send(broker_id, request, callback)

    def _on_leader_and_isr_response(self, broker_id: int, response: ControlResponse) -> None:
        """A LeaderAndIsr was answered (sender thread): enqueue only storage errors."""
        if isinstance(response, m.LeaderAndIsrResponse) and any(
            e.error is Errors.KAFKA_STORAGE_ERROR for e in response.partition_errors
        ):
            self._watchers.enqueue(ev.LeaderAndIsrResponseReceived(broker_id, response))

    def _on_stop_replica_response(self, broker_id: int, response: ControlResponse) -> None:
        """A StopReplica that deleted partitions was answered (sender thread): enqueue."""
        if isinstance(response, m.StopReplicaResponse):
            self._watchers.enqueue(ev.TopicDeletionStopReplicaResponseReceived(broker_id, response))

    # -- watches ----------------------------------------------------------------------------

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
        self._zk.watch_children(paths.BROKER_IDS, self._watchers(ev.BrokerChange()))
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
        reads = self._zk.get_topic_assignments(sorted(topics), self._partition_watch)
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

    def _partition_watch(self, topic: str) -> Callable[[WatchedEvent], None]:
        return self._watchers(ev.PartitionModifications(topic))

    def process_partition_modifications(self, topic: str) -> None:
        """`/brokers/topics/T` changed (Kafka's PartitionModifications): re-arm its watch;
        partitions it lists that the context lacks are created and brought online, unless
        the topic is being deleted."""
        if topic not in self.ctx.all_topics():
            return  # deleted, or never loaded: nothing is watched any more
        reads = self._zk.get_topic_assignments([topic], self._partition_watch)
        for error in reads.malformed.values():
            self._malformed(error.path, error.reason)
        found = reads.found.get(topic)
        if found is None:
            return
        known = {tp.partition for tp in self.ctx.partitions_of(topic)}
        added = {p: a for p, a in sorted(found.partitions.items()) if p not in known}
        if not added:
            return
        deleting = self.ctx.is_topic_queued_for_deletion(topic)
        self._events.emit(
            EventKind.PARTITIONS_ADDED,
            topic=topic,
            partitions=sorted(added),
            created=not deleting,
            controller_epoch=self.ctx.epoch,
        )
        if deleting:
            return  # as Kafka does: no partition is added to a topic being deleted
        for partition, assignment in added.items():
            self.ctx.set_assignment(TopicPartition(topic, partition), assignment)
        self.on_new_partition_creation([TopicPartition(topic, p) for p in added])

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
