"""`ReplicaStateMachine`: moves replicas through Kafka's seven replica states.

OfflineReplica sends StopReplica and shrinks the ISR of every partition the replica was
in (keeping the last member, KAFKA-5083) in the order decide -> fenced write -> context ->
batch. The first decision starts from the context's states and zkVersions, so a failover
or a broker failure costs no ZooKeeper read per partition; every write is conditional on
the zkVersion it replaces, so a state a leader changed since the context learnt it fails
with BADVERSION, and only those partitions are read from ZooKeeper and decided again
Partitions whose context ISR already lacks the replica are read first, as in Kafka, which
reads every state first (docs/kafka-differences.md), except those whose state this
controller wrote without the replica in the same change (`just_written`: the offline election
just before, which left the offline replica out). A state znode written by
a newer controller fails only its partition (`isr_shrink_failed`, a fact of the round's
`isr_shrinks_failed`), and so does a ZooKeeper
error of a read or a write (Kafka's `doRemoveReplicasFromIsr`); losing the
controllership shows as the fenced write's `ControllerMovedError`. A replica of a partition
without leadership goes offline with an UpdateMetadata to every live broker. Bug switch
`kafka-5083` (docs/bugs.md) empties the ISR of its last member instead. Event thread only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from kazoo.exceptions import BadVersionError, KazooException

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import EMPTY_ISR
from controller.context import ControllerContext, PartitionReplica
from controller.isr_shrinks import decide_isr_shrinks
from controller.partition_state_machine import PartitionZk
from controller.request_batch import LeaderAndIsrEntry, RequestBatch
from controller.round_events import ShrinkRound
from controller.states import ReplicaState, written_by_newer_controller
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import (
    EventLog,
    InvalidStateTransition,
    MalformedZnode,
    ReplicaStateChange,
)
from zkdata.fenced_writes import OpResult, committed_zxid
from zkdata.model import ReplicaAssignment
from zkdata.pipelined_reads import Reads


class ReplicaStateMachine:
    """Replica states of the active controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: PartitionZk,
        batch: RequestBatch,
        event_log: EventLog,
        bug_switches: BugSwitches = NO_BUGS,
    ) -> None:
        self._keep_last_isr_member = not bug_switches.on(EMPTY_ISR)
        self._ctx = context
        self._zk = zk
        self._batch = batch
        self._events = event_log

    def startup(self) -> None:
        """Online replicas to OnlineReplica (sending their LeaderAndIsr), the others to
        OfflineReplica."""
        online, offline = [], []
        for tp, assignment in self._ctx.assignments():
            for r in assignment.replicas:
                replica = PartitionReplica(tp, r)
                if self._ctx.is_replica_online(r, True):
                    self._ctx.set_replica_state(replica, ReplicaState.ONLINE)
                    online.append(replica)
                else:
                    self._ctx.set_replica_state(replica, ReplicaState.DELETION_INELIGIBLE)
                    offline.append(replica)
        self.handle_state_changes(online, ReplicaState.ONLINE)
        self.handle_state_changes(offline, ReplicaState.OFFLINE)

    def handle_state_changes(
        self,
        replicas: Sequence[PartitionReplica],
        target: ReplicaState,
        just_written: Mapping[TopicPartition, LeaderAndIsr] | None = None,
    ) -> None:
        """Move `replicas` to `target` and send the resulting requests. `just_written`: states
        this controller wrote to ZooKeeper earlier in the same change (OfflineReplica
        trusts those it still holds instead of reading them back)."""
        if not replicas:
            return
        self._batch.new_batch()
        try:
            by_broker: dict[int, list[PartitionReplica]] = defaultdict(list)
            for replica in replicas:
                by_broker[replica.replica].append(replica)
            for broker_id in sorted(by_broker):
                self._change(broker_id, by_broker[broker_id], target, just_written or {})
        except BaseException:
            self._batch.clear()
            raise
        self._batch.send()

    def _change(
        self,
        broker_id: int,
        replicas: list[PartitionReplica],
        target: ReplicaState,
        just_written: Mapping[TopicPartition, LeaderAndIsr],
    ) -> None:
        valid, was = [], []
        allowed = tuple(target.valid_previous)  # found by identity, not by the enum's hash
        for replica, current in zip(replicas, self._ctx.replica_states(replicas), strict=True):
            if current in allowed:
                valid.append(replica)
                was.append(current)
            else:
                self._invalid(replica, current, target)
        done: list[PartitionReplica] = []
        match target:
            case ReplicaState.NEW:
                for replica in valid:
                    tp = replica.topic_partition
                    leadership = self._ctx.leadership(tp)
                    if leadership is not None:
                        if leadership.leader_and_isr.leader == broker_id:
                            self._invalid(replica, self._ctx.replica_state(replica), target)
                            continue
                        self._batch.add_leader_and_isr(
                            [broker_id], tp, leadership, self._ctx.assignment(tp), is_new=True
                        )
                    done.append(replica)
            case ReplicaState.ONLINE:
                told: list[LeaderAndIsrEntry] = []
                for replica, current in zip(valid, was, strict=True):
                    tp = replica.topic_partition
                    if current is ReplicaState.NEW:
                        assignment = self._ctx.assignment(tp)
                        if broker_id not in assignment.replicas:
                            self._ctx.set_assignment(
                                tp,
                                ReplicaAssignment(
                                    (*assignment.replicas, broker_id),
                                    assignment.adding_replicas,
                                    assignment.removing_replicas,
                                ),
                            )
                    else:
                        leadership = self._ctx.leadership(tp)
                        if leadership is not None:
                            told.append(((broker_id,), tp, leadership, self._ctx.assignment(tp)))
                    done.append(replica)
                self._batch.add_leader_and_isrs(told, is_new=False)
            case ReplicaState.OFFLINE:
                partitions = [r.topic_partition for r in valid]
                self._batch.add_stop_replicas(broker_id, partitions, delete=False)
                with_leadership = [tp for tp in partitions if self._ctx.leadership(tp)]
                shrunk = self._remove_from_isr(broker_id, with_leadership, just_written)
                self._batch.add_leader_and_isrs(self._told_of_shrinks(broker_id, shrunk), False)
                leaderless = [r for r in valid if self._ctx.leadership(r.topic_partition) is None]
                for replica in leaderless:  # the brokers still learn the replica is offline
                    self._batch.add_update_metadata(
                        self._ctx.live_or_shutting_down_broker_ids(), [replica.topic_partition]
                    )
                done = [r for r in valid if r.topic_partition in shrunk] + leaderless
            case ReplicaState.DELETION_STARTED:
                for replica in valid:
                    self._batch.add_stop_replica([broker_id], replica.topic_partition, delete=True)
                done = valid
            case ReplicaState.NON_EXISTENT:
                for replica in valid:
                    tp = replica.topic_partition
                    a = self._ctx.assignment(tp)
                    self._ctx.set_assignment(
                        tp,
                        ReplicaAssignment(
                            tuple(r for r in a.replicas if r != broker_id),
                            tuple(r for r in a.adding_replicas if r != broker_id),
                            tuple(r for r in a.removing_replicas if r != broker_id),
                        ),
                    )
                done = valid
            case _:
                done = valid
        self._ctx.set_replica_states(done, target)
        if valid:
            self._events.emit(
                ReplicaStateChange(
                    broker_id=broker_id,
                    target=target.value,
                    replicas=len(done),
                    failed=len(valid) - len(done),
                ),
            )

    def _told_of_shrinks(
        self, broker_id: int, shrunk: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
    ) -> list[LeaderAndIsrEntry]:
        """The LeaderAndIsr entries of the partitions whose ISR lost `broker_id`: every
        other live replica is told, except of topics queued for deletion."""
        ctx = self._ctx
        live = ctx.live_or_shutting_down_broker_ids()
        told_of: dict[tuple[int, ...], tuple[int, ...]] = {}  # few distinct replica lists
        entries: list[LeaderAndIsrEntry] = []
        for tp, state in shrunk.items():
            if ctx.is_topic_queued_for_deletion(tp.topic):
                continue
            assignment = ctx.assignment(tp)
            replicas = assignment.replicas
            recipients = told_of.get(replicas)
            if recipients is None:
                recipients = told_of[replicas] = tuple(
                    r for r in replicas if r != broker_id and r in live
                )
            entries.append((recipients, tp, state, assignment))
        return entries

    def _remove_from_isr(
        self,
        broker_id: int,
        partitions: list[TopicPartition],
        just_written: Mapping[TopicPartition, LeaderAndIsr],
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Take `broker_id` out of the ISR (and leadership) of `partitions`, as Kafka's
        `removeReplicasFromIsr` does: decide from the context's states, write the shrunk
        states in one fenced write conditional on their zkVersions, and for the partitions
        that lost a race (BADVERSION: a leader changed its ISR meanwhile) read the state
        znodes from ZooKeeper (pipelined) and start over. Returns the partitions whose state
        is now settled, with that state; the others failed, each with a fact of the round's
        events (`controller.round_events`)."""
        events = ShrinkRound(self._events, self._ctx.epoch, broker_id)
        try:
            return self._shrink(broker_id, partitions, just_written, events)
        finally:
            events.emit()

    def _shrink(
        self,
        broker_id: int,
        partitions: list[TopicPartition],
        just_written: Mapping[TopicPartition, LeaderAndIsr],
        events: ShrinkRound,
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        settled: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = list(partitions)
        try:
            reads = self._first_reads(broker_id, remaining, just_written)
        except KazooException as exc:  # the partitions of this call fail alone (Kafka)
            if self._batch.aborts_on_zk_error:
                raise
            reads, remaining = self._all_failed(remaining, events, exc), []
        while remaining:
            found = reads.found
            if reads.malformed:  # reported, not decided
                found = {tp: s for tp, s in found.items() if tp not in reads.malformed}
            decided = decide_isr_shrinks(
                broker_id, remaining, found, self._ctx.epoch, self._keep_last_isr_member
            )
            self._report_undecided(events, decided.undecided, reads)
            settled.update(decided.unchanged)  # nothing to shrink: keep what was read
            self._ctx.set_leaderships(decided.unchanged)
            updates = decided.writes
            if not updates:
                break
            try:
                written = self._zk.update_leader_and_isr(updates, self._ctx.epoch_zk_version)
            except KazooException as exc:  # the partitions of this call fail alone (Kafka)
                if self._batch.aborts_on_zk_error:
                    raise
                written = dict.fromkeys(updates, exc)
            remaining = self._record_shrinks(events, updates, written, settled)
            events.emit()  # this write's events
            if remaining:
                try:
                    reads = self._zk.get_partition_states(remaining)
                except KazooException as exc:
                    if self._batch.aborts_on_zk_error:
                        raise
                    reads, remaining = self._all_failed(remaining, events, exc), []
        return settled

    def _all_failed(
        self, partitions: list[TopicPartition], events: ShrinkRound, error: KazooException
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """A ZooKeeper error failed the shrink of every one of `partitions`: each fails,
        naming the error; nothing read."""
        for tp in partitions:
            events.failed(tp, type(error).__name__)
        return Reads({}, {})

    def _first_reads(
        self,
        broker_id: int,
        partitions: list[TopicPartition],
        just_written: Mapping[TopicPartition, LeaderAndIsr],
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """The states the first decision starts from: the context's where it has
        `broker_id` in the ISR (a write conditional on its zkVersion follows, which fails if
        the context lags), or where it holds the very state this controller wrote earlier
        in the change (`just_written`); read from ZooKeeper for the others (no write follows a
        decision to leave a partition alone, so that decision must rest on ZooKeeper's
        state, and the context may lag a leader that re-added the replica). A written
        state left the offline replica out because it was offline then; only a fetch from
        it since (a broker cut off from ZooKeeper that still serves) could have put it
        back, the same race Kafka's read has between reading and deciding."""
        found = {}
        unsure = []
        for tp in partitions:
            state = self._ctx.leadership(tp)
            if state is not None and (
                broker_id in state.leader_and_isr.isr
                or just_written.get(tp) == state.leader_and_isr
            ):
                found[tp] = state
            else:
                unsure.append(tp)
        if not unsure:
            return Reads(found, {})
        reads = self._zk.get_partition_states(unsure)
        return Reads({**found, **reads.found}, reads.malformed)

    def _report_undecided(
        self,
        events: ShrinkRound,
        partitions: list[TopicPartition],
        reads: Reads[TopicPartition, LeaderIsrAndControllerEpoch],
    ) -> None:
        """A failure for each of `partitions` whose state could not be shrunk: it does not
        decode, is missing (unless its topic is being deleted) or a newer controller wrote
        it."""
        for tp in partitions:
            current = reads.found.get(tp)
            if tp in reads.malformed:
                error = reads.malformed[tp]
                self._events.emit(MalformedZnode(path=error.path, reason=error.reason))
                events.failed(tp, "state znode does not decode")
            elif current is None:
                if not self._ctx.is_topic_queued_for_deletion(tp.topic):
                    events.failed(tp, "state znode is missing")
            else:
                reason = written_by_newer_controller(current.controller_epoch, self._ctx.epoch)
                events.failed(tp, reason)

    def _record_shrinks(
        self,
        events: ShrinkRound,
        updates: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
        written: Mapping[TopicPartition, OpResult],
        settled: dict[TopicPartition, LeaderIsrAndControllerEpoch],
    ) -> list[TopicPartition]:
        """Record the shrunk ISRs now in ZooKeeper (the context, `events`, `settled`)
        and report the writes that failed; returns the partitions that lost a race
        (BADVERSION), to read and decide again."""
        epoch = self._ctx.epoch
        stored_states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        lost: list[TopicPartition] = []
        for tp, outcome in written.items():
            if isinstance(outcome, BadVersionError):
                lost.append(tp)
                continue
            if isinstance(outcome, Exception):
                events.failed(tp, type(outcome).__name__)
                continue
            new = updates[tp].leader_and_isr
            stored = LeaderAndIsr(new.leader, new.leader_epoch, new.isr, int(outcome))
            stored_states[tp] = LeaderIsrAndControllerEpoch(stored, epoch)
            events.shrunk(tp, stored, committed_zxid(outcome))
        self._ctx.set_leaderships(stored_states)
        settled.update(stored_states)
        return lost

    def _invalid(
        self, replica: PartitionReplica, current: ReplicaState, target: ReplicaState
    ) -> None:
        self._events.emit(
            InvalidStateTransition(
                machine="replica",
                topic=replica.topic_partition.topic,
                partition=replica.topic_partition.partition,
                replica=replica.replica,
                current=current.value,
                target=target.value,
            ),
        )
