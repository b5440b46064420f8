"""`PartitionStateMachine`: moves partitions between New, Online, Offline and NonExistent.

Every change runs in one order (STYLE rule 4): current state -> decide with a pure
election -> one fenced, batched ZooKeeper write -> update the context for the writes that
succeeded -> add LeaderAndIsr / UpdateMetadata to the batch -> send once.

The current state comes first from the context, which holds each state znode as last read
or written together with its zkVersion; every write is conditional on that zkVersion, so a
stale context cannot win. A BADVERSION (a leader changed the ISR meanwhile) re-reads that
partition from ZooKeeper (pipelined) and re-decides; so does an election that found no
leader in the context's state, since a leader may have grown the ISR since. Partitions
the context does not know are read at once. A state znode of a newer controller fails
only its partition, and so does a ZooKeeper error (of a read or a write, kazoo's
`ConnectionLoss` or `NoAuthError` for example): those partitions keep their state, each
with a `leader_election_failed` naming the error (a round's elections and failures are
written as one event each, `controller.round_events`), and the requests for the others are
still sent, as Kafka's `doElectLeaderForPartitions` does; the next election retries them.
`ControllerMovedError` (the fenced write's failed epoch check) propagates: the caller
resigns. The election each strategy runs is
`controller.election_strategies`'. Event thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

from controller.context import ControllerContext
from controller.election_strategies import (
    ElectionStrategy,
    OfflineElection,
    decide_elections,
    strategy_name,
)
from controller.leader_election import ElectionResult
from controller.request_batch import LeaderAndIsrEntry, RequestBatch
from controller.round_events import ElectionRound
from controller.states import PartitionState, written_by_newer_controller
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import (
    EventLog,
    InvalidStateTransition,
    MalformedZnode,
    PartitionStateChange,
)
from zkdata.fenced_writes import OpResult, committed_zxid
from zkdata.pipelined_reads import Reads

#: What a state change did to one partition: the new LeaderAndIsr (elections), the target
#: state (other transitions), or the reason (a string) it failed.
StateChangeResult = LeaderAndIsr | PartitionState | str


class PartitionZk(Protocol):
    """The ZooKeeper operations the partition state machine uses (`KafkaZkClient`)."""

    def get_partition_states(
        self, partitions: Iterable[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Read state znodes."""

    def create_partition_states(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Create state znodes, fenced."""

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Conditionally update state znodes, fenced."""


@dataclass(frozen=True, slots=True)
class ElectionStats:
    """Hooks for metrics: called after every election round (event thread)."""

    on_election: Callable[[float], None] = lambda seconds: None
    on_unclean: Callable[[int], None] = lambda count: None


def current_states(
    context: ControllerContext,
    zk: PartitionZk,
    partitions: list[TopicPartition],
    trust_context: bool,
) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
    """The state of `partitions`: from the context where it knows them (`trust_context`),
    otherwise read from ZooKeeper, pipelined."""
    known: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    if trust_context:
        for tp in partitions:
            state = context.leadership(tp)
            if state is not None:
                known[tp] = state
    rest = [tp for tp in partitions if tp not in known]
    if not rest:
        return Reads(known, {})
    reads = zk.get_partition_states(rest)
    return Reads({**known, **reads.found}, reads.malformed)


class PartitionStateMachine:
    """Partition states of the active controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: PartitionZk,
        batch: RequestBatch,
        event_log: EventLog,
        unclean_default: bool = False,
        stats: ElectionStats | None = None,
        unclean_everywhere: bool = False,  # bug switch unclean-election: topic configs ignored
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._batch = batch
        self._events = event_log
        self._unclean_default = unclean_default
        self._unclean_everywhere = unclean_everywhere
        self._stats = stats or ElectionStats()

    def startup(self) -> None:
        """Derive each partition's state from the context, then bring New and Offline
        partitions online."""
        ctx = self._ctx
        states: dict[TopicPartition, PartitionState] = {}
        for tp, _ in ctx.assignments():
            leadership = ctx.leadership(tp)
            if leadership is None:
                states[tp] = PartitionState.NEW
            elif ctx.is_replica_online(leadership.leader_and_isr.leader, True, tp):
                states[tp] = PartitionState.ONLINE
            else:
                states[tp] = PartitionState.OFFLINE
        ctx.set_partition_states(states)
        self.trigger_online_partition_state_change()

    def trigger_online_partition_state_change(
        self, topic: str | None = None
    ) -> dict[TopicPartition, StateChangeResult]:
        """Elect leaders for every New or Offline partition (of `topic` when given) not
        queued for deletion."""
        partitions = [
            tp
            for tp in self._ctx.partitions_in_states(PartitionState.NEW, PartitionState.OFFLINE)
            if not self._ctx.is_topic_queued_for_deletion(tp.topic)
            and (topic is None or tp.topic == topic)
        ]
        return self.handle_state_changes(partitions, PartitionState.ONLINE, OfflineElection())

    def handle_state_changes(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        strategy: ElectionStrategy | None = None,
    ) -> dict[TopicPartition, StateChangeResult]:
        """Move `partitions` to `target` and send the resulting requests. Returns, per
        partition, the new LeaderAndIsr (elections), the target state, or the reason
        (a string) it failed."""
        if not partitions:
            return {}
        self._batch.new_batch()
        try:
            results = self._change(partitions, target, strategy)
        except BaseException:
            self._batch.clear()
            raise
        self._batch.send()
        return results

    def _change(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        strategy: ElectionStrategy | None,
    ) -> dict[TopicPartition, StateChangeResult]:
        valid = []
        allowed = tuple(target.valid_previous)  # found by identity, not by the enum's hash
        for tp in partitions:
            current = self._ctx.partition_state(tp)
            if current in allowed:
                valid.append(tp)
            else:
                self._events.emit(
                    InvalidStateTransition(
                        machine="partition",
                        topic=tp.topic,
                        partition=tp.partition,
                        current=current.value,
                        target=target.value,
                    ),
                )
        results: dict[TopicPartition, StateChangeResult] = {}
        if target is PartitionState.ONLINE:
            new = [tp for tp in valid if self._ctx.partition_state(tp) is PartitionState.NEW]
            is_new = set(new)
            existing = [tp for tp in valid if tp not in is_new]
            results.update(self._initialize_leader_and_isr(new))
            if existing:
                results.update(self._elect_leaders(existing, strategy or OfflineElection()))
            succeeded = [tp for tp, r in results.items() if isinstance(r, LeaderAndIsr)]
        else:
            succeeded = valid
            results.update({tp: target for tp in valid})
        for tp in succeeded:
            self._ctx.set_partition_state(tp, target)
        if valid:
            self._events.emit(
                PartitionStateChange(
                    target=target.value,
                    partitions=len(succeeded),
                    failed=len(valid) - len(succeeded),
                    topics=sorted({tp.topic for tp in succeeded}),
                ),
            )
        return results

    def _initialize_leader_and_isr(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, StateChangeResult]:
        events = ElectionRound(self._events, self._ctx.epoch, "initial")
        try:
            return self._initialize(partitions, events)
        finally:
            events.emit()

    def _initialize(
        self, partitions: list[TopicPartition], events: ElectionRound
    ) -> dict[TopicPartition, StateChangeResult]:
        results: dict[TopicPartition, StateChangeResult] = {}
        states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            live = tuple(r for r in self._ctx.replicas(tp) if self._ctx.is_replica_online(r, tp=tp))
            if not live:
                results[tp] = events.failed(tp, "no live replica to lead a new partition")
                continue
            states[tp] = LeaderIsrAndControllerEpoch(
                LeaderAndIsr(live[0], 0, live, 0), self._ctx.epoch
            )
        if not states:
            return results
        try:
            written = self._zk.create_partition_states(states, self._ctx.epoch_zk_version)
        except KazooException as exc:  # the partitions of this call fail alone (Kafka)
            if self._batch.aborts_on_zk_error:
                raise
            written = dict.fromkeys(states, exc)
        for tp, outcome in written.items():
            if isinstance(outcome, Exception):
                reason = (
                    "state znode already exists"
                    if isinstance(outcome, NodeExistsError)
                    else f"{type(outcome).__name__}"
                )
                results[tp] = events.failed(tp, reason)
                continue
            state = states[tp]
            self._ctx.set_leadership(tp, state)
            lai = state.leader_and_isr
            self._batch.add_leader_and_isr(
                lai.isr, tp, state, self._ctx.assignment(tp), is_new=True
            )
            events.elected(tp, lai, unclean=False)
            results[tp] = lai
        return results

    def _elect_leaders(
        self, partitions: list[TopicPartition], strategy: ElectionStrategy
    ) -> dict[TopicPartition, StateChangeResult]:
        started = time.monotonic()
        events = ElectionRound(self._events, self._ctx.epoch, strategy_name(strategy))
        try:
            results, unclean_count = self._elect(partitions, strategy, events)
        finally:
            events.emit()
        self._stats.on_election(time.monotonic() - started)
        if unclean_count:
            self._stats.on_unclean(unclean_count)
        return results

    def _elect(
        self, partitions: list[TopicPartition], strategy: ElectionStrategy, events: ElectionRound
    ) -> tuple[dict[TopicPartition, StateChangeResult], int]:
        """The elections of `_elect_leaders`, each pipelined write's events emitted when its
        outcomes are recorded; the results and how many were unclean."""
        results: dict[TopicPartition, StateChangeResult] = {}
        remaining = list(partitions)
        unclean_count = 0
        first_round = True
        while remaining:
            try:
                reads = current_states(self._ctx, self._zk, remaining, trust_context=first_round)
            except KazooException as exc:  # the partitions of this call fail alone (Kafka)
                if self._batch.aborts_on_zk_error:
                    raise
                results.update({tp: events.failed(tp, type(exc).__name__) for tp in remaining})
                break
            trusted, first_round = first_round, False
            decided: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, ElectionResult]] = {}
            recheck: list[TopicPartition] = []
            decidable: dict[TopicPartition, LeaderAndIsr] = {}
            for tp in remaining:
                current = reads.found.get(tp)
                if tp in reads.malformed:
                    self._malformed(reads.malformed[tp].path, reads.malformed[tp].reason)
                    results[tp] = events.failed(tp, "state znode does not decode")
                elif current is None:
                    results[tp] = events.failed(tp, "state znode is missing")
                elif current.controller_epoch > self._ctx.epoch:
                    results[tp] = events.failed(
                        tp, written_by_newer_controller(current.controller_epoch, self._ctx.epoch)
                    )
                else:
                    decidable[tp] = current.leader_and_isr
            elections = decide_elections(
                self._ctx, decidable, strategy, self._unclean_everywhere, self._unclean_default
            )
            for tp, election in elections.items():
                if election.leader_and_isr is None and trusted:
                    recheck.append(tp)  # the context may lag a leader's ISR change
                elif election.leader_and_isr is None:
                    results[tp] = events.failed(
                        tp, f"no eligible leader ({strategy_name(strategy)})"
                    )
                else:
                    state = LeaderIsrAndControllerEpoch(election.leader_and_isr, self._ctx.epoch)
                    decided[tp] = (state, election)
            try:
                written = (
                    self._zk.update_leader_and_isr(
                        {tp: d[0] for tp, d in decided.items()}, self._ctx.epoch_zk_version
                    )
                    if decided
                    else {}
                )
            except KazooException as exc:  # the partitions of this call fail alone (Kafka)
                if self._batch.aborts_on_zk_error:
                    raise
                written = dict.fromkeys(decided, exc)
            remaining = recheck
            stored_states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
            told: list[LeaderAndIsrEntry] = []
            for tp, outcome in written.items():
                state, election = decided[tp]
                if isinstance(outcome, BadVersionError):
                    remaining.append(tp)  # re-read and re-decide
                elif isinstance(outcome, NoNodeError):
                    results[tp] = events.failed(tp, "state znode is missing")
                elif isinstance(outcome, Exception):
                    results[tp] = events.failed(tp, type(outcome).__name__)
                else:
                    lai = state.leader_and_isr
                    lai = LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, int(outcome))
                    stored = LeaderIsrAndControllerEpoch(lai, state.controller_epoch)
                    stored_states[tp] = stored
                    told.append((election.recipients, tp, stored, self._ctx.assignment(tp)))
                    events.elected(tp, lai, election.unclean, committed_zxid(outcome))
                    unclean_count += int(election.unclean)
                    results[tp] = lai
            events.emit()  # this write's events
            self._ctx.set_leaderships(stored_states)
            self._batch.add_leader_and_isrs(told, is_new=False)
        return results, unclean_count

    def _malformed(self, path: str | None, reason: str) -> None:
        self._events.emit(MalformedZnode(path=path, reason=reason))
