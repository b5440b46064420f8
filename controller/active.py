"""`ActiveController`: everything the elected controller runs, set up by failover and torn
down on resignation (Kafka's `onControllerFailover` / `onControllerResignation`).

Holds the context, both state machines, the request batch, the channel manager and the
managers of the controller's duties: topic creation, added partitions and topic config
changes (`controller.topic_changes`), broker changes and offline replicas
(`controller.broker_changes`), topic deletion (`controller.topic_deletion`), partition
reassignment (`controller.reassignment`), preferred and unclean elections with the auto
rebalance (`controller.replica_election`) and, through `controller.isr_changes` and
`controller.log_dir_events`, ISR change and log-directory event notifications, and
AlterIsr (`controller.alter_isr`). Brokers' answers reach it as the events the request
batch's response callbacks enqueue (`controller.request_batch`, `.control_responses`).

Historical bug switches (docs/bugs.md) reach the duties from `ControllerConfig`; five
live here: `kafka-6082` (`fencing_version`), `kafka-1681` and `kafka-4443` (failover),
`kafka-5310` (resignation) and `kafka-1367` (ISR change notifications).

Event thread only; the ZooKeeper watches it arms run on kazoo's thread and the response
callbacks on the sender threads, and they only enqueue events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bugs import BugSwitches
from bugs.catalog import (
    LEADER_AND_ISR_FIRST,
    NO_ISR_METADATA,
    NO_RESUME,
    SENDER_DROPS,
    STUCK_BATCH,
    UNCLEAN_ELECTION,
    UNFENCED_ZK_WRITES,
    ZOMBIE_CONTROLLER,
)
from controller import events as ev
from controller.alter_isr import process_alter_isr
from controller.broker_changes import BrokerChanges
from controller.channel_manager import BrokerChannel, ControllerChannelManager, grpc_channel
from controller.config import ControllerConfig
from controller.context import ControllerContext
from controller.isr_changes import process_isr_change_notification
from controller.log_dir_events import process_log_dir_event_notification
from controller.partition_state_machine import ElectionStats, PartitionStateMachine
from controller.reassignment import ReassignmentManager
from controller.replica_election import ReplicaElections
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.topic_changes import TopicChanges
from controller.topic_deletion import TopicDeletionManager
from controller.watchers import Watchers
from domain import TopicPartition
from eventlog import ControllerFailoverDone, ControllerFailoverStep, EventLog, MalformedZnode
from rpc.messages import AlterIsrRequest, AlterIsrResponse
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.fenced_writes import ANY_EPOCH_VERSION
from zkdata.isr_change_notifications import delete_isr_change_notifications
from zkdata.log_dir_event_notifications import delete_log_dir_event_notifications
from zkdata.model import Broker
from zkdata.reassignment import ReassignmentZk
from zkdata.state_readers import ReadStats, StateReaders

#: Seconds from failover to the first auto leader rebalance check (Kafka's fixed 5 s).
FIRST_REBALANCE_DELAY_S = 5.0


def fencing_version(won_zk_version: int, switches: BugSwitches) -> int:
    """The `/controller_epoch` zkVersion every write of this controller is checked at: the
    one its election won, or, with `kafka-6082` on, ZooKeeper's any-version, so that the
    writes of a controller that has been replaced still land (before KAFKA-6082 Kafka's
    controller wrote without checking the epoch znode)."""
    return ANY_EPOCH_VERSION if switches.on(UNFENCED_ZK_WRITES) else won_zk_version


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
        self._readers = StateReaders(config.state_readers) if config.state_readers else None
        switches = config.bug_switches
        self.channels = ControllerChannelManager(
            event_log, connect, drop_failed=switches.on(SENDER_DROPS)
        )
        self.batch = RequestBatch(
            broker_id,
            context,
            self.channels.send,
            on_response_event=watchers.enqueue,
            keep_failed_round=switches.on(STUCK_BATCH),
        )
        self.partitions = PartitionStateMachine(
            context,
            zk,
            self.batch,
            event_log,
            config.unclean_leader_election_enable,
            stats,
            unclean_everywhere=switches.on(UNCLEAN_ELECTION),
        )
        self.replicas = ReplicaStateMachine(context, zk, self.batch, event_log, switches)
        assignments = ReassignmentZk(zk)
        self.topics = TopicChanges(
            context,
            zk,
            self.partitions,
            self.replicas,
            event_log,
            watchers,
            config.unclean_leader_election_enable,
            assignments,
        )
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
            config.leader_imbalance_check_interval_s
            if config.auto_leader_rebalance_enable
            else None,
        )
        self.reassignments = ReassignmentManager(
            context,
            assignments,
            zk,
            self.partitions,
            self.replicas,
            self.batch,
            self.deletion,
            event_log,
            watchers,
            switches,
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
            switches,
        )

    # -- watches ----------------------------------------------------------------------------

    def _deletion_requests(self) -> list[str]:
        """Arm the `/admin/delete_topics` child watch again and list the requests."""
        return self._zk.watch_children(paths.DELETE_TOPICS, self._watchers(ev.TopicDeletion()))

    def arm_admin_watches(self) -> None:
        """The watches of the admin paths and of ISR change and log-directory event
        notifications."""
        self.rearm(ev.TopicDeletion())
        self.rearm(ev.IsrChangeNotification())
        self.rearm(ev.LogDirEventNotification())
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
            case ev.LogDirEventNotification():
                self._zk.watch_children(paths.LOG_DIR_EVENT_NOTIFICATION, callback)
            case ev.PartitionReassignment():
                self._zk.watch_exists(paths.REASSIGN_PARTITIONS, callback)
            case ev.ReplicaLeaderElection():
                self._zk.watch_exists(paths.PREFERRED_REPLICA_ELECTION, callback)
            case _:
                pass

    # -- failover and resignation ---------------------------------------------------------

    def on_failover(self) -> None:
        """Kafka 2.8's `onControllerFailover`, step by step (each step emits
        `controller_failover_step`): register the watches; remove pending log-directory
        event and ISR change notifications; load the context from ZooKeeper (pipelined),
        open the channels and queue the requested deletions; tell every broker the live
        brokers; start both state machines; resume reassignments, then deletions; run a
        pending preferred election; schedule the first auto rebalance 5 s later. With bug
        switch `kafka-1681` the requested deletions are not queued and no reassignment is
        resumed: they wait until their znode changes again; with `kafka-4443` the live
        brokers are told after the state machines' LeaderAndIsr, not before."""
        started = time.monotonic()
        self.ctx.epoch_zk_version = fencing_version(
            self.ctx.epoch_zk_version, self._config.bug_switches
        )
        self._register_watches()
        self._step("watches_registered")
        stale = self._remove_notifications(
            paths.LOG_DIR_EVENT_NOTIFICATION,
            ev.LogDirEventNotification(),
            delete_log_dir_event_notifications,
        )
        removed = self._remove_notifications(
            paths.ISR_CHANGE_NOTIFICATION,
            ev.IsrChangeNotification(),
            delete_isr_change_notifications,
        )
        self._step(
            "notifications_removed",
            isr_change_notifications=removed,
            log_dir_event_notifications=stale,
        )
        self._initialize_context()
        requested = self._deletion_requests()
        resume = not self._config.bug_switches.on(NO_RESUME)  # kafka-1681: nothing resumed
        self.deletion.init(requested if resume else [])
        read = self._readers.last if self._readers is not None else ReadStats()
        self._step(
            "context_initialized",
            state_reader_processes=read.helpers_started,
            read_by_helpers=read.read_by_helpers,
        )
        leader_and_isr_first = self._config.bug_switches.on(LEADER_AND_ISR_FIRST)
        if not leader_and_isr_first:
            self._tell_live_brokers()
        self.replicas.startup()
        self.partitions.startup()
        self._step("state_machines_started")
        if leader_and_isr_first:
            self._tell_live_brokers()
        if resume:
            self.reassignments.on_failover()
        self._step("reassignments_resumed")
        self.deletion.try_topic_deletion()
        self._step("deletions_resumed")
        self.elections.process_preferred_replica_election_znode()
        self._step("preferred_elections_done")
        if self._config.auto_leader_rebalance_enable:
            self.elections.schedule_auto_rebalance(FIRST_REBALANCE_DELAY_S)
            self._step("auto_rebalance_scheduled", delay_s=FIRST_REBALANCE_DELAY_S)
        self._events.emit(
            ControllerFailoverDone(
                controller_epoch=self.ctx.epoch,
                brokers=len(self.ctx.live_brokers()),
                topics=len(self.ctx.all_topics()),
                partitions=self.ctx.partition_count(),
                offline_partitions=self.ctx.offline_partition_count(),
                duration_ms=round((time.monotonic() - started) * 1000, 1),
            ),
        )

    def _tell_live_brokers(self) -> None:
        self._send_update_metadata(self.ctx.live_or_shutting_down_broker_ids(), [])
        self._step("update_metadata_sent")

    def _register_watches(self) -> None:
        """Before anything is read: the child watches of `/brokers/ids`, `/brokers/topics`,
        `/admin/delete_topics`, `/isr_change_notification` and `/log_dir_event_notification`,
        and the exists watches of
        `/admin/reassign_partitions` and `/admin/preferred_replica_election`."""
        self._zk.watch_children(paths.BROKER_IDS, self.brokers.broker_watch())
        self.topics.arm_topic_watch()
        self.arm_admin_watches()

    def _remove_notifications(
        self,
        path: str,
        event: ev.ControllerEvent,
        delete: Callable[[KafkaZkClient, list[str], int], None],
    ) -> int:
        """Delete every pending notification under `path` (fenced) unhandled, re-arming the
        watch that enqueues `event`: the context, loaded next, reads every partition's
        state, and the replica state machine's start sends every broker a LeaderAndIsr for
        its replicas, which a broker that lost its log directory answers with
        KAFKA_STORAGE_ERROR (Kafka's failover)."""
        pending = self._zk.watch_children(path, self._watchers(event))
        if pending:
            delete(self._zk, pending, self.ctx.epoch_zk_version)
        return len(pending)

    def _initialize_context(self) -> None:
        """Kafka's `initializeControllerContext`: live brokers, topics with their assignments
        and configs, every partition's state (pipelined; with many partitions, by helper
        processes as well), then the channels to the live brokers."""
        listing = self._zk.get_all_brokers()
        for name, error in listing.malformed.items():
            self._malformed(error.path or name, error.reason)
        self.ctx.set_live_brokers(listing.brokers.values())
        self.brokers.modifications.watch(sorted(self.ctx.live_or_shutting_down_broker_ids()))
        self.topics.load_all_topics()
        states = self._zk.get_partition_states(self.ctx.all_partitions(), self._readers)
        for tp, state in states.found.items():
            self.ctx.set_leadership(tp, state)
        for error in states.malformed.values():
            self._malformed(error.path, error.reason)
        self.channels.startup(self.ctx.live_brokers())

    def _step(self, step: str, **fields: Any) -> None:
        """Emit `controller_failover_step` for `step` with its own `fields`."""
        self._events.emit(
            ControllerFailoverStep(step=step, controller_epoch=self.ctx.epoch, **fields)
        )

    def on_resignation(self) -> bool:
        """Stop the rebalance timer and close every channel; the caller resets the context
        and forgets this object. False when nothing was torn down: with `kafka-5310` on, a
        resigned controller keeps its timer, channels and context, and the caller keeps
        handing it events, as Kafka's controller did before KAFKA-5310."""
        if self._config.bug_switches.on(ZOMBIE_CONTROLLER):
            return False
        self.elections.stop_rebalance_timer()
        self.channels.shutdown()
        return True

    def _malformed(self, path: str | None, reason: str) -> None:
        self._events.emit(MalformedZnode(path=path, reason=reason))

    def _send_update_metadata(
        self, broker_ids: frozenset[int] | list[int], partitions: list[TopicPartition]
    ) -> None:
        self.batch.new_batch()
        self.batch.add_update_metadata(broker_ids, partitions)
        self.batch.send()

    # -- topic deletion -------------------------------------------------------------------------

    def process_topic_deletion(self) -> None:
        """`/admin/delete_topics` changed: re-arm the watch and hand the requests to the
        deletion manager (Kafka's TopicDeletion event)."""
        self.deletion.on_deletion_requests(self._deletion_requests())

    def process_stop_replica_response(
        self, event: ev.TopicDeletionStopReplicaResponseReceived
    ) -> None:
        """A broker answered a StopReplica that deleted partitions."""
        self.deletion.on_stop_replica_response(event.broker_id, event.result)

    # -- ISR changes --------------------------------------------------------------------------

    def process_isr_change_notification(self) -> None:
        """Leaders recorded ISR changes (`controller.isr_changes`; bug switch `kafka-1367`)."""
        tell = None if self._config.bug_switches.on(NO_ISR_METADATA) else self._send_update_metadata
        process_isr_change_notification(self.ctx, self._zk, self._watchers, self._events, tell)

    def process_alter_isr(self, request: AlterIsrRequest) -> AlterIsrResponse:
        """A partition leader's AlterIsr (`controller.alter_isr`)."""
        return process_alter_isr(
            self.ctx, self._zk, self._events, self._send_update_metadata, request
        )

    def process_log_dir_event_notification(self) -> None:
        """Brokers lost log directories (`controller.log_dir_events`)."""
        process_log_dir_event_notification(
            self.ctx, self._zk, self._watchers, self._events, self.replicas
        )
