"""`BrokerChanges`: what the active controller does when brokers come, go or bounce
(Kafka's BrokerChange handling with `onBrokerStartup`, `onBrokerFailure` and
`onReplicasBecomeOffline`), and when a live broker reports partitions whose log it cannot
open (KAFKA_STORAGE_ERROR in a LeaderAndIsr answer, KIP-112's offline replicas). Event
thread only. The data watches of the known brokers' registrations, and what their changes
do, are `controller.broker_modifications`'.

Bug switches (docs/bugs.md): `kip-380` does not see a broker whose registration changed
but whose id stayed as bounced, as before KIP-380 (`classify_brokers`); `kafka-3085`
decides on the broker list the watch read when it fired, not on `/brokers/ids` as it is
when the event is processed; `kafka-13225` tells the brokers of the failure only when no
partition lacks a live leader, so a broker hosting no replica dies unannounced while some
partition is offline; `kafka-1120` tells new and dead brokers apart by id only, as before
KIP-380: a broker that bounced between two notifications has its registration (and broker
epoch) refreshed in the context but is neither failed nor started, so its new process is
sent nothing (`refreshed_registrations`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import (
    ENQUEUE_TIME_BROKERS,
    IDS_ONLY_BROKER_CHANGE,
    NO_BROKER_EPOCH,
    NO_METADATA_FOR_EMPTY_BROKER,
)
from controller import events as ev
from controller.broker_modifications import BrokerModificationHandler
from controller.channel_manager import ControllerChannelManager
from controller.context import ControllerContext, PartitionReplica
from controller.partition_state_machine import PartitionStateMachine
from controller.reassignment import ReassignmentManager
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import SendUpdateMetadata
from controller.states import PartitionState, ReplicaState
from controller.topic_deletion import TopicDeletionManager
from controller.watchers import Watchers
from domain import LeaderAndIsr
from eventlog import BrokerChange, EventLog, MalformedZnode, ReplicasOffline
from zkdata import paths
from zkdata.client import BrokerListing, KafkaZkClient, WatchCallback


@dataclass(frozen=True, slots=True)
class BrokerDelta:
    """How the registered brokers differ from the ones the controller knows."""

    new: list[int]
    dead: list[int]
    bounced: list[int]


def classify_brokers(
    registered: Mapping[int, int], known: Mapping[int, int], detect_bounces: bool = True
) -> BrokerDelta:
    """New, dead and bounced brokers from the registered ids with their broker epochs and
    the known ids with the epochs the controller holds. A bounce (same id, larger epoch)
    is only seen with `detect_bounces` (KIP-380); without it the new incarnation passes
    for the old one."""
    bounced = [b for b in registered.keys() & known.keys() if registered[b] > known[b]]
    return BrokerDelta(
        sorted(registered.keys() - known.keys()),
        sorted(known.keys() - registered.keys()),
        sorted(bounced) if detect_bounces else [],
    )


def refreshed_registrations(
    registered: Mapping[int, int], known: Mapping[int, int], delta: BrokerDelta
) -> list[int]:
    """With `kafka-1120`: the known ids whose registration changed (another broker epoch)
    but which `delta` does not report as bounced; the controller only takes their new
    registration, as Kafka's did before KIP-380 (it kept the brokers read, compared the
    ids)."""
    same_ids = registered.keys() & known.keys()
    return sorted(b for b in same_ids if registered[b] != known[b] and b not in delta.bounced)


class BrokerChanges:
    """Broker start-up, failure and bounce, and offline replicas, for the active controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: KafkaZkClient,
        channels: ControllerChannelManager,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        deletion: TopicDeletionManager,
        reassignments: ReassignmentManager,
        event_log: EventLog,
        watchers: Watchers,
        send_update_metadata: SendUpdateMetadata,
        bug_switches: BugSwitches = NO_BUGS,
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._channels = channels
        self._partitions = partitions
        self._replicas = replicas
        self._deletion = deletion
        self._reassignments = reassignments
        self._events = event_log
        self._watchers = watchers
        self._send_update_metadata = send_update_metadata
        self._ids_only = bug_switches.on(IDS_ONLY_BROKER_CHANGE)
        self._detect_bounces = not (bug_switches.on(NO_BROKER_EPOCH) or self._ids_only)
        self._read_at_watch = bug_switches.on(ENQUEUE_TIME_BROKERS)
        self._announce_empty_failures = not bug_switches.on(NO_METADATA_FOR_EMPTY_BROKER)
        self.modifications = BrokerModificationHandler(
            context, zk, watchers, event_log, send_update_metadata
        )

    def broker_watch(self) -> WatchCallback:
        """The callback of the `/brokers/ids` child watch: enqueue BrokerChange (with
        `kafka-3085`, one carrying the registrations read when the watch fired)."""
        if self._read_at_watch:
            return self._watchers.reading(
                ev.BrokerChange(), lambda: ev.BrokerChange(self._zk.get_all_brokers())
            )
        return self._watchers(ev.BrokerChange())

    def process_broker_change(self, read_at_watch: BrokerListing | None = None) -> None:
        """Compare `/brokers/ids` (with czxid epochs) to the live set: start new brokers,
        fail dead ones, and fail-then-start bounced ones (same id, larger epoch). The
        registrations are read now, unless the event carried them (`kafka-3085`)."""
        self._zk.watch_children(paths.BROKER_IDS, self.broker_watch())
        listing = read_at_watch if read_at_watch is not None else self._zk.get_all_brokers()
        for name, error in listing.malformed.items():
            self._events.emit(MalformedZnode(path=error.path or name, reason=error.reason))
        current = listing.brokers
        registered = {b: broker.epoch for b, broker in current.items()}
        known = {b: self._ctx.broker_epoch(b) for b in self._ctx.live_or_shutting_down_broker_ids()}
        delta = classify_brokers(registered, known, self._detect_bounces)
        new, dead, bounced = delta.new, delta.dead, delta.bounced
        if self._ids_only:  # kafka-1120: the new registration replaces the old, unnoticed
            refreshed = refreshed_registrations(registered, known, delta)
            self._ctx.add_live_brokers(current[b] for b in refreshed)
        self._events.emit(
            BrokerChange(
                new=new,
                dead=dead,
                bounced=bounced,
                live=sorted(current),
                epochs={str(b): current[b].epoch for b in sorted(current)},
            ),
        )
        for broker_id in bounced + dead:
            self._channels.remove_broker(broker_id)
        for broker_id in new + bounced:
            self._channels.add_broker(current[broker_id])
        self.modifications.watch(new + bounced)
        if new:
            self._ctx.add_live_brokers(current[b] for b in new)
            self.on_broker_startup(new)
        if bounced:
            self._ctx.remove_live_brokers(bounced)
            self.on_broker_failure(bounced)
            self._ctx.add_live_brokers(current[b] for b in bounced)
            self.on_broker_startup(bounced)
        if dead:
            self._ctx.remove_live_brokers(dead)
            self.on_broker_failure(dead)

    def on_broker_startup(self, new_brokers: list[int]) -> None:
        """Tell everyone about the new brokers, give them full metadata and their replicas,
        bring offline partitions back online, and resume the deletion of topics with
        replicas on them."""
        existing = self._ctx.live_or_shutting_down_broker_ids() - set(new_brokers)
        self._send_update_metadata(existing, [])
        self._send_update_metadata(frozenset(new_brokers), self._ctx.partitions_with_leaders())
        replicas = self._ctx.replicas_on_brokers(new_brokers)
        self._replicas.handle_state_changes(replicas, ReplicaState.ONLINE)
        self._partitions.trigger_online_partition_state_change()
        self._reassignments.on_broker_startup(new_brokers)
        deleting = {
            r.topic_partition.topic
            for r in replicas
            if self._ctx.is_topic_queued_for_deletion(r.topic_partition.topic)
        }
        if deleting:
            self._deletion.resume_deletion_for_topics(deleting)

    def on_broker_failure(self, dead_brokers: list[int]) -> None:
        """Dead brokers: every replica they hold is offline."""
        self.on_replicas_become_offline(self._ctx.replicas_on_brokers(dead_brokers))

    def process_leader_and_isr_response(self, event: ev.LeaderAndIsrResponseReceived) -> None:
        """A live broker could not open some partitions' logs (KAFKA_STORAGE_ERROR in its
        LeaderAndIsr answer): those replicas are offline until the broker restarts."""
        broker_id = event.broker_id
        if broker_id not in self._ctx.live_or_shutting_down_broker_ids():
            return
        failed = event.result.storage_errors
        new = sorted(tp for tp in failed - self._ctx.replicas_offline_on(broker_id))
        if not new:
            return
        self._ctx.mark_replicas_offline(broker_id, new)
        self._events.emit(
            ReplicasOffline(
                broker_id=broker_id,
                partitions=[f"{tp.topic}-{tp.partition}" for tp in new],
                controller_epoch=self._ctx.epoch,
            ),
        )
        self.on_replicas_become_offline(
            [PartitionReplica(tp, broker_id) for tp in new if broker_id in self._ctx.replicas(tp)]
        )

    def on_replicas_become_offline(self, offline: list[PartitionReplica]) -> None:
        """Kafka's onReplicasBecomeOffline: move leaderships off offline replicas and take
        them offline; the replicas of topics being deleted fail their deletion instead (the
        topics wait for the replicas to return). The live brokers learn of the failure from
        the requests of those changes; when no election took place, or no replica went
        offline (a broker hosting none died: KAFKA-13225, unless `kafka-13225`), from an
        UpdateMetadata of their own."""
        not_deleting: list[PartitionReplica] = []
        deleting: list[PartitionReplica] = []
        for r in offline:
            queued = self._ctx.is_topic_queued_for_deletion(r.topic_partition.topic)
            (deleting if queued else not_deleting).append(r)
        offline_leaders = self._ctx.partitions_with_offline_leader()
        self._partitions.handle_state_changes(offline_leaders, PartitionState.OFFLINE)
        results = self._partitions.trigger_online_partition_state_change()
        elected = {tp: r for tp, r in results.items() if isinstance(r, LeaderAndIsr)}
        self._replicas.handle_state_changes(not_deleting, ReplicaState.OFFLINE, elected)
        if deleting:
            self._deletion.on_replicas_offline(deleting)
        if not offline_leaders or (self._announce_empty_failures and not offline):
            self._send_update_metadata(self._ctx.live_or_shutting_down_broker_ids(), [])
