"""`Partition` as leader and follower, on a real `PartitionLog` in a temporary directory and
a `FakeIsrStore`: roles, produce and acks=all, fetch limits and epoch checks, ISR shrink and
expansion with conditional writes (and their BADVERSION handling), KIP-101 answers, and the
follower's high watermark and truncation; the replica-level facts of the event log
(`high_watermark_moved` sampled, the ISR join's offsets, the epoch a truncation kept).

Setup (unless a test says otherwise): broker 1 hosts "orders" partition 0, replicas
(1, 2, 3); the controller (epoch 3) made it leader at leader epoch 5 with the state znode at
zkVersion 7, which the fake store holds too. `replica.lag.time.max.ms` is 10 s; the
partition's clock is a `ManualClock` the test moves, so nothing sleeps. Threads appear only
where a produce waiter must be woken; they synchronise on events, never on sleeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from broker_node.partition import Partition
from broker_node.partition_isr import HW_EVENT_INTERVAL_MS, PartitionConfig
from broker_node.storage import PartitionLog
from broker_node.storage.record import split_batches
from broker_node.testing import FakeIsrStore, IsrWrite
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

TP = TopicPartition("orders", 0)
LEADER = 1
REPLICAS = (1, 2, 3)
EPOCH = 5
ZK_VERSION = 7
CONTROLLER_EPOCH = 3
LAG_MS = 10_000
START_MS = 1_000_000
WAITER = "acks-waiter"


class ManualClock:
    """The partition's `clock_ms`: milliseconds that move only when the test says."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        """Move the clock forward by `ms`."""
        self.now_ms += ms


def leadership(
    *,
    leader: int = LEADER,
    epoch: int = EPOCH,
    isr: tuple[int, ...] = REPLICAS,
    zk_version: int = ZK_VERSION,
    controller_epoch: int = CONTROLLER_EPOCH,
    replicas: tuple[int, ...] = REPLICAS,
) -> m.LeaderAndIsrPartitionState:
    """A LeaderAndIsr partition state for `TP`."""
    return m.LeaderAndIsrPartitionState(
        TP.topic, TP.partition, controller_epoch, leader, epoch, isr, zk_version, replicas
    )


def znode(
    leader: int, epoch: int, isr: tuple[int, ...], controller_epoch: int = CONTROLLER_EPOCH
) -> LeaderIsrAndControllerEpoch:
    """State znode content (its zkVersion is the store's business)."""
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, isr), controller_epoch)


@dataclass
class Rig:
    """One partition replica and everything it talks to."""

    partition: Partition
    store: FakeIsrStore
    events: RecordingEventLog
    clock: ManualClock
    isr_changes: list[TopicPartition] = field(default_factory=list)

    def lead(
        self,
        *,
        epoch: int = EPOCH,
        isr: tuple[int, ...] = REPLICAS,
        zk_version: int = ZK_VERSION,
        controller_epoch: int = CONTROLLER_EPOCH,
    ) -> m.LeaderAndIsrPartitionState:
        """The controller makes broker 1 leader (the znode says the same)."""
        state = leadership(
            epoch=epoch, isr=isr, zk_version=zk_version, controller_epoch=controller_epoch
        )
        self.store.put_state(
            TP,
            znode(state.leader, state.leader_epoch, state.isr, state.controller_epoch),
            state.zk_version,
        )
        self.partition.make_leader(state)
        return state

    def follow(self, leader: int = 2, epoch: int = EPOCH) -> None:
        """The controller makes broker 1 a follower of `leader`."""
        state = leadership(leader=leader, epoch=epoch)
        self.store.put_state(TP, znode(leader, epoch, REPLICAS), ZK_VERSION)
        self.partition.make_follower(state)

    def isr(self) -> tuple[int, ...]:
        """The partition's ISR now (a call, so that mypy does not narrow it across asserts)."""
        return self.partition.isr

    def produce(self, count: int, acks: int = 1) -> tuple[Errors, int, int]:
        """Append `count` records as leader."""
        records = [
            m.ProducedRecord(b"k", b"v%d" % i, timestamp_ms=1_700_000_000_000 + i)
            for i in range(count)
        ]
        return self.partition.append_as_leader(records, acks)

    def fetch(
        self, offset: int, replica_id: int = -1, epoch: int = -1, max_records: int = 500
    ) -> m.FetchedPartition:
        """A fetch that does not wait."""
        request = m.FetchPartition(TP.topic, TP.partition, offset, epoch, max_records)
        return self.partition.read(request, replica_id)


@pytest.fixture
def make_rig(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """Builds rigs (with their own log directories) and closes their logs afterwards."""
    logs: list[PartitionLog] = []

    def build(
        *, min_insync: int = 1, lag_ms: int = LAG_MS, join_at_epoch_start: bool = True
    ) -> Rig:
        log = PartitionLog(tmp_path / f"orders-0-{len(logs)}")
        logs.append(log)
        store = FakeIsrStore()
        events = RecordingEventLog("broker-1")
        clock = ManualClock(START_MS)
        changes: list[TopicPartition] = []
        partition = Partition(
            TP,
            LEADER,
            log,
            store,
            events,
            PartitionConfig(lag_ms, min_insync, isr_join_needs_epoch_start=join_at_epoch_start),
            changes.append,
            clock,
        )
        return Rig(partition, store, events, clock, changes)

    yield build
    for log in logs:
        log.close()


@pytest.fixture
def rig(make_rig: Callable[..., Rig]) -> Rig:
    """The default rig, not yet leading."""
    return make_rig()


def follower_records(epoch: int, first: int, count: int) -> list[m.FetchedRecord]:
    """Records as a leader of `epoch` would send them, from offset `first`."""
    return [
        m.FetchedRecord(o, epoch, 1_700_000_000_000, b"k", b"v")
        for o in range(first, first + count)
    ]


def kinds(events: RecordingEventLog) -> list[str]:
    """The kinds of the events emitted, in order, but for the leader's sampled
    `high_watermark_moved` (`test_partition_replica_facts`)."""
    return [e["kind"] for e in events.events if e["kind"] != EventKind.HIGH_WATERMARK_MOVED]


# -- roles ------------------------------------------------------------------------------------


def test_make_leader_takes_the_controllers_decision(rig: Rig) -> None:
    rig.lead(isr=(1, 2), zk_version=11, controller_epoch=4)
    p = rig.partition
    assert p.is_leader
    assert (p.leader, p.leader_epoch, p.isr, p.replicas) == (1, EPOCH, (1, 2), REPLICAS)
    assert (p.zk_version, p.controller_epoch) == (11, 4)
    assert p.under_replicated()


def test_make_leader_alone_in_the_isr_commits_the_log_end(rig: Rig) -> None:
    rig.follow(epoch=4)
    rig.partition.append_as_follower(follower_records(4, 0, 3), leader_hw=0)
    rig.lead(isr=(1,))
    assert rig.partition.log.high_watermark == 3


def test_make_leader_keeps_the_high_watermark_while_followers_are_unknown(rig: Rig) -> None:
    rig.follow(epoch=4)
    rig.partition.append_as_follower(follower_records(4, 0, 3), leader_hw=1)
    rig.lead()
    assert rig.partition.log.high_watermark == 1
    assert not rig.partition.under_replicated()


def test_a_follower_refuses_produce_fetch_and_epoch_queries(rig: Rig) -> None:
    rig.follow()
    assert not rig.partition.is_leader
    assert rig.produce(1) == (Errors.NOT_LEADER_OR_FOLLOWER, -1, -1)
    assert rig.fetch(0).error is Errors.NOT_LEADER_OR_FOLLOWER
    assert rig.fetch(0, replica_id=2).error is Errors.NOT_LEADER_OR_FOLLOWER
    answer = rig.partition.end_offset_for_epoch(EPOCH, EPOCH)
    assert answer.error is Errors.NOT_LEADER_OR_FOLLOWER
    assert not rig.partition.under_replicated()
    assert rig.partition.log.log_end_offset == 0


def test_a_stopped_replica_neither_leads_nor_serves(rig: Rig) -> None:
    rig.lead()
    rig.partition.stop()
    assert not rig.partition.is_leader
    assert rig.produce(1)[0] is Errors.NOT_LEADER_OR_FOLLOWER
    assert rig.fetch(0).error is Errors.NOT_LEADER_OR_FOLLOWER


# -- produce ----------------------------------------------------------------------------------


def test_append_as_leader_returns_consecutive_offsets_in_the_leader_epoch(rig: Rig) -> None:
    rig.lead(isr=(1,))
    assert rig.produce(3) == (Errors.NONE, 0, 2)
    assert rig.produce(1) == (Errors.NONE, 3, 3)
    records = rig.partition.log.read(0)
    assert [(r.offset, r.leader_epoch, r.value) for r in records] == [
        (0, EPOCH, b"v0"),
        (1, EPOCH, b"v1"),
        (2, EPOCH, b"v2"),
        (3, EPOCH, b"v0"),
    ]
    assert records[1].timestamp_ms == 1_700_000_000_001
    assert rig.partition.log.high_watermark == 4  # alone in the ISR


def test_acks_all_refused_when_the_isr_is_below_min_insync(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(min_insync=2)
    rig.lead(isr=(1,))
    assert rig.produce(2, acks=-1) == (Errors.NOT_ENOUGH_REPLICAS, -1, -1)
    assert rig.partition.log.log_end_offset == 0


@pytest.mark.parametrize("acks", [0, 1])
def test_acks_below_all_ignore_min_insync(make_rig: Callable[..., Rig], acks: int) -> None:
    rig = make_rig(min_insync=2)
    rig.lead(isr=(1,))
    assert rig.produce(2, acks=acks) == (Errors.NONE, 0, 1)


def test_acks_all_accepted_when_the_isr_meets_min_insync(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(min_insync=2)
    rig.lead(isr=(1, 2))
    assert rig.produce(2, acks=-1) == (Errors.NONE, 0, 1)


# -- acks=all ---------------------------------------------------------------------------------


def test_acks_all_answered_once_every_isr_follower_fetched_past_the_offset(rig: Rig) -> None:
    rig.lead()
    _, _, last = rig.produce(3, acks=-1)
    assert (
        rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.0)
        is Errors.REQUEST_TIMED_OUT
    )
    rig.fetch(3, replica_id=2)
    assert rig.partition.log.high_watermark == 0  # follower 3 still holds it
    assert (
        rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.0)
        is Errors.REQUEST_TIMED_OUT
    )
    rig.fetch(2, replica_id=3)
    assert rig.partition.log.high_watermark == 2
    assert rig.partition.wait_for_acks(1, rig.partition.leadership_term, 0.0) is Errors.NONE
    assert (
        rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.0)
        is Errors.REQUEST_TIMED_OUT
    )
    rig.fetch(3, replica_id=3)
    assert rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.0) is Errors.NONE


def test_acks_all_times_out_on_a_short_timeout(rig: Rig) -> None:
    rig.lead()
    _, _, last = rig.produce(1, acks=-1)
    assert (
        rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.01)
        is Errors.REQUEST_TIMED_OUT
    )


def test_acks_all_keeps_waiting_across_a_leader_epoch_bump_that_keeps_the_leader(
    rig: Rig,
) -> None:
    """A newer leader epoch with the same leader (the controller shrank the ISR or moves
    replicas) does not fail the waiters: the log was never truncated."""
    rig.lead()
    term = rig.partition.leadership_term
    _, _, last = rig.produce(1, acks=-1)
    rig.lead(epoch=EPOCH + 1, isr=(1,), zk_version=ZK_VERSION + 1)
    assert rig.partition.leadership_term == term
    assert rig.partition.wait_for_acks(last, term, 0.0) is Errors.NONE


def test_acks_all_refused_once_leadership_was_lost_even_if_regained(rig: Rig) -> None:
    rig.lead()
    term = rig.partition.leadership_term
    _, _, last = rig.produce(1, acks=-1)
    rig.follow(epoch=EPOCH + 1)
    assert rig.partition.wait_for_acks(last, term, 0.0) is Errors.NOT_LEADER_OR_FOLLOWER
    rig.lead(epoch=EPOCH + 2, zk_version=ZK_VERSION + 2)
    assert rig.partition.leadership_term != term
    assert rig.partition.wait_for_acks(last, term, 0.0) is Errors.NOT_LEADER_OR_FOLLOWER


def test_acks_all_not_enough_replicas_after_the_isr_shrank(
    make_rig: Callable[..., Rig],
) -> None:
    rig = make_rig(min_insync=2)
    rig.lead(isr=(1, 2))
    error, _, last = rig.produce(1, acks=-1)
    assert error is Errors.NONE
    rig.clock.advance(LAG_MS + 1)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == (1,)
    assert rig.partition.log.high_watermark == 1  # the leader alone commits it
    assert (
        rig.partition.wait_for_acks(last, rig.partition.leadership_term, 0.0)
        is Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    )


class _AnnouncingTime(SimpleNamespace):
    """Stands in for the `time` module inside `broker_node.partition` (monkeypatched) so a
    test knows when a produce waiter is blocked. `wait_for_acks` reads `time.monotonic()`
    once for its deadline, then once per turn of its loop while holding the partition's
    lock, right before `Condition.wait`. The second read by the waiter thread sets
    `about_to_wait`; whatever the test then does under the partition's lock runs only once
    the waiter is inside `wait`, so the wake-up path is exercised deterministically."""

    def __init__(self) -> None:
        super().__init__(time=time.time)
        self.about_to_wait = threading.Event()
        self._reads = 0

    def monotonic(self) -> float:
        if threading.current_thread().name == WAITER:
            self._reads += 1
            if self._reads >= 2:
                self.about_to_wait.set()
        return time.monotonic()


def _start_waiter(partition: Partition, last_offset: int) -> tuple[threading.Thread, list[Errors]]:
    answers: list[Errors] = []

    def wait() -> None:
        answers.append(partition.wait_for_acks(last_offset, partition.leadership_term, 30.0))

    thread = threading.Thread(target=wait, name=WAITER, daemon=True)
    thread.start()
    return thread, answers


def test_acks_all_waiter_woken_by_follower_fetches(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _AnnouncingTime()
    monkeypatch.setattr("broker_node.partition.time", clock)
    rig.lead()
    _, _, last = rig.produce(2, acks=-1)
    thread, answers = _start_waiter(rig.partition, last)
    assert clock.about_to_wait.wait(5)
    rig.fetch(2, replica_id=2)
    rig.fetch(2, replica_id=3)
    thread.join(5)
    assert not thread.is_alive()
    assert answers == [Errors.NONE]


def test_acks_all_waiter_answered_not_leader_when_the_partition_follows(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _AnnouncingTime()
    monkeypatch.setattr("broker_node.partition.time", clock)
    rig.lead()
    _, _, last = rig.produce(1, acks=-1)
    thread, answers = _start_waiter(rig.partition, last)
    assert clock.about_to_wait.wait(5)
    rig.follow(leader=2, epoch=EPOCH + 1)
    thread.join(5)
    assert not thread.is_alive()
    assert answers == [Errors.NOT_LEADER_OR_FOLLOWER]


# -- fetch ------------------------------------------------------------------------------------


def test_consumers_read_up_to_the_high_watermark(rig: Rig) -> None:
    rig.lead(isr=(1, 2))
    rig.produce(4)
    rig.fetch(2, replica_id=2)
    fetched = rig.fetch(0)
    assert fetched.error is Errors.NONE
    assert [r.offset for r in fetched.records] == [0, 1]
    assert (fetched.high_watermark, fetched.log_end_offset, fetched.log_start_offset) == (2, 4, 0)
    for offset in (2, 3, 4):
        between = rig.fetch(offset)
        assert (between.error, between.records) == (Errors.NONE, ())


def test_followers_read_up_to_the_log_end(rig: Rig) -> None:
    rig.lead(isr=(1, 2))
    rig.produce(4)
    fetched = rig.fetch(1, replica_id=2)
    assert fetched.error is Errors.NONE
    assert [(r.offset, r.leader_epoch, r.key, r.value) for r in fetched.records] == [
        (1, EPOCH, b"k", b"v1"),
        (2, EPOCH, b"k", b"v2"),
        (3, EPOCH, b"k", b"v3"),
    ]
    assert fetched.high_watermark == 1  # its own fetch at 1 moved it


def test_fetch_returns_at_most_max_records(rig: Rig) -> None:
    rig.lead(isr=(1,))
    rig.produce(5)
    assert [r.offset for r in rig.fetch(1, max_records=2).records] == [1, 2]


@pytest.mark.parametrize(
    ("current_leader_epoch", "error"),
    [
        pytest.param(-1, Errors.NONE, id="unchecked"),
        pytest.param(EPOCH, Errors.NONE, id="current"),
        pytest.param(EPOCH - 1, Errors.FENCED_LEADER_EPOCH, id="older-fenced"),
        pytest.param(EPOCH + 1, Errors.UNKNOWN_LEADER_EPOCH, id="newer-unknown"),
    ],
)
@pytest.mark.parametrize("replica_id", [-1, 2])
def test_fetch_checks_the_leader_epoch(
    rig: Rig, current_leader_epoch: int, error: Errors, replica_id: int
) -> None:
    rig.lead(isr=(1, 2))
    rig.produce(2)
    fetched = rig.fetch(0, replica_id=replica_id, epoch=current_leader_epoch)
    assert fetched.error is error
    if error is not Errors.NONE:
        assert fetched.records == ()
        assert rig.partition.log.high_watermark == 0  # a refused fetch reports nothing


@pytest.mark.parametrize("offset", [-1, 4, 100])
def test_fetch_outside_the_log_is_out_of_range(rig: Rig, offset: int) -> None:
    rig.lead(isr=(1,))
    rig.produce(3)
    fetched = rig.fetch(offset)
    assert fetched.error is Errors.OFFSET_OUT_OF_RANGE
    assert fetched.records == ()
    assert (fetched.log_start_offset, fetched.log_end_offset) == (0, 3)


def test_an_out_of_range_follower_fetch_is_not_progress(rig: Rig) -> None:
    """Kafka's `ReplicaManager.updateFollowerFetchState` skips reads that failed: an offset
    the leader does not have says nothing about what the follower holds.

    BUG (broker_node/partition.py `read`, line 191-192): the follower's progress is recorded
    before the range check, so a fetch from offset 5 on a 3-record log counts as a follower
    LEO of 5 and commits offsets 0-2 that no follower has."""
    rig.lead(isr=(1, 2))
    rig.produce(3)
    fetched = rig.fetch(5, replica_id=2)
    assert fetched.error is Errors.OFFSET_OUT_OF_RANGE
    assert rig.partition.log.high_watermark == 0


def test_an_out_of_range_follower_fetch_does_not_join_the_isr(rig: Rig) -> None:
    """BUG (same place as above): a follower outside the ISR fetching past the leader's log
    end is taken as caught up and added to the ISR, though it may hold nothing."""
    rig.lead(isr=(1, 2))
    rig.produce(3)
    fetched = rig.fetch(10, replica_id=3)
    assert fetched.error is Errors.OFFSET_OUT_OF_RANGE
    assert rig.isr() == (1, 2)
    assert rig.store.writes == []


# -- ISR shrink -------------------------------------------------------------------------------


def test_a_follower_at_the_log_end_stays_in_sync_however_long(rig: Rig) -> None:
    rig.lead()
    for _ in range(3):
        rig.produce(2)
        rig.clock.advance(3 * LAG_MS)
        leo = rig.partition.log.log_end_offset
        rig.fetch(leo, replica_id=2)
        rig.fetch(leo, replica_id=3)
        rig.partition.maybe_shrink_isr()
    rig.clock.advance(100 * LAG_MS)  # idle: nobody fetches, nothing is appended
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == REPLICAS
    assert rig.store.writes == []


def test_a_lagging_follower_is_removed_with_a_conditional_write(rig: Rig) -> None:
    rig.lead()
    rig.produce(2)
    rig.fetch(2, replica_id=2)  # follower 3 never fetches
    rig.clock.advance(LAG_MS)
    rig.partition.maybe_shrink_isr()
    assert rig.store.writes == []  # exactly the lag time is not too long
    rig.clock.advance(1)
    rig.partition.maybe_shrink_isr()

    assert rig.store.writes == [
        IsrWrite(
            TP,
            LeaderIsrAndControllerEpoch(
                LeaderAndIsr(LEADER, EPOCH, (1, 2), ZK_VERSION), CONTROLLER_EPOCH
            ),
            ZK_VERSION,
            ZK_VERSION + 1,
        )
    ]
    assert rig.store.state(TP) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(LEADER, EPOCH, (1, 2), ZK_VERSION + 1), CONTROLLER_EPOCH
    )
    p = rig.partition
    assert (p.isr, p.zk_version, p.leader_epoch) == ((1, 2), ZK_VERSION + 1, EPOCH)
    assert p.log.high_watermark == 2  # follower 3 no longer holds it back
    assert rig.isr_changes == [TP]
    [changed] = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert changed["reason"] == "shrink"
    assert (changed["old_isr"], changed["isr"]) == ([1, 2, 3], [1, 2])
    assert (changed["leader"], changed["leader_epoch"], changed["zk_version"]) == (
        LEADER,
        EPOCH,
        ZK_VERSION + 1,
    )


def test_a_follower_one_fetch_behind_stays_until_it_stops_fetching(rig: Rig) -> None:
    """Caught up as of the previous fetch when it reaches the LEO the leader had then."""
    rig.lead(isr=(1, 2))
    for _ in range(4):
        rig.produce(1)
        rig.clock.advance(6_000)
        # always one record behind: asks for the leader's LEO before this append
        rig.fetch(rig.partition.log.log_end_offset - 1, replica_id=2)
        rig.partition.maybe_shrink_isr()
        assert rig.isr() == (1, 2)
    rig.clock.advance(LAG_MS - 6_000)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == (1, 2)  # caught up as of the previous fetch, LAG_MS ago
    rig.clock.advance(1)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == (1,)


def test_a_follower_does_not_shrink_the_isr(rig: Rig) -> None:
    rig.follow()
    rig.clock.advance(10 * LAG_MS)
    rig.partition.maybe_shrink_isr()
    assert rig.store.writes == []


# -- ISR expansion ----------------------------------------------------------------------------


def _leader_after_epoch_4(rig: Rig) -> None:
    """Broker 1 followed at epoch 4 (4 records, HW 2), then leads epoch 5 with ISR (1, 2):
    the epoch starts at offset 4 and the HW stays 2 until follower 2 fetches."""
    rig.follow(epoch=4)
    rig.partition.append_as_follower(follower_records(4, 0, 4), leader_hw=2)
    rig.lead(isr=(1, 2))
    assert rig.partition.log.high_watermark == 2


def test_expansion_waits_for_the_high_watermark_and_the_epoch_start(rig: Rig) -> None:
    _leader_after_epoch_4(rig)
    rig.fetch(1, replica_id=3)
    assert rig.isr() == (1, 2)  # below the HW
    rig.fetch(2, replica_id=3)
    assert rig.isr() == (1, 2)  # at the HW, below the epoch start
    assert rig.store.writes == []
    rig.fetch(4, replica_id=3)
    assert rig.store.writes == [
        IsrWrite(
            TP,
            LeaderIsrAndControllerEpoch(
                LeaderAndIsr(LEADER, EPOCH, (1, 2, 3), ZK_VERSION), CONTROLLER_EPOCH
            ),
            ZK_VERSION,
            ZK_VERSION + 1,
        )
    ]
    assert (rig.isr(), rig.partition.zk_version) == ((1, 2, 3), ZK_VERSION + 1)
    assert rig.isr_changes == [TP]
    [changed] = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert (changed["reason"], changed["isr"]) == ("expand", [1, 2, 3])


def test_kafka_7128_lets_a_follower_join_at_the_high_watermark_below_the_epoch_start(
    make_rig: Callable[..., Rig],
) -> None:
    """Bug switch `kafka-7128`: the high watermark (2) is enough, although the leader's
    epoch started at 4; the `isr_changed` says so, which `isr_join_after_epoch_start`
    reads."""
    rig = make_rig(join_at_epoch_start=False)
    _leader_after_epoch_4(rig)
    rig.fetch(1, replica_id=3)
    assert rig.isr() == (1, 2)  # below the HW: still out
    rig.fetch(2, replica_id=3)
    assert rig.isr() == (1, 2, 3)
    [changed] = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert changed["reason"] == "expand"
    assert (changed["follower_log_end_offset"], changed["epoch_start_offset"]) == (2, 4)


def test_a_rejoined_follower_holds_the_high_watermark(rig: Rig) -> None:
    rig.lead(isr=(1, 2))
    rig.produce(3)
    rig.fetch(3, replica_id=2)
    assert rig.partition.log.high_watermark == 3
    rig.fetch(3, replica_id=3)
    assert rig.isr() == (1, 2, 3)
    rig.produce(2)
    rig.fetch(5, replica_id=2)
    assert rig.partition.log.high_watermark == 3  # follower 3 is in the ISR now
    rig.fetch(5, replica_id=3)
    assert rig.partition.log.high_watermark == 5


def test_a_replica_outside_the_assignment_never_joins(rig: Rig) -> None:
    rig.lead(isr=(1, 2))
    rig.fetch(0, replica_id=9)
    assert rig.isr() == (1, 2)
    assert rig.store.writes == []


# -- BADVERSION -------------------------------------------------------------------------------


def test_badversion_adopts_the_version_of_a_znode_that_already_says_the_same(rig: Rig) -> None:
    """Our own write landed but its answer was lost (or a retry repeated it): the znode at
    zkVersion 9 already holds leader 1, epoch 5, ISR (1, 2)."""
    rig.lead()
    rig.store.put_state(TP, znode(LEADER, EPOCH, (1, 2)), 9)
    rig.produce(1)
    rig.fetch(1, replica_id=2)
    rig.clock.advance(LAG_MS + 1)
    rig.partition.maybe_shrink_isr()
    assert [w.new_version for w in rig.store.writes] == [None]
    assert (rig.isr(), rig.partition.zk_version) == ((1, 2), 9)
    assert rig.isr_changes == [TP]
    assert kinds(rig.events) == [str(EventKind.ISR_CHANGED)]
    assert rig.events.of_kind(EventKind.ISR_CHANGED)[0]["zk_version"] == 9


@pytest.mark.parametrize(
    "held",
    [
        pytest.param(znode(LEADER, EPOCH + 1, REPLICAS), id="newer-leader-epoch"),
        pytest.param(znode(LEADER, EPOCH + 1, (1, 2)), id="newer-epoch-same-isr"),
        pytest.param(znode(LEADER, EPOCH, (1, 3)), id="other-isr"),
        pytest.param(znode(2, EPOCH + 1, (2, 3)), id="other-leader"),
    ],
)
def test_badversion_on_a_changed_znode_leaves_the_isr_and_reports(
    rig: Rig, held: LeaderIsrAndControllerEpoch
) -> None:
    rig.lead()
    rig.store.put_state(TP, held, 9)
    rig.produce(1)
    rig.fetch(1, replica_id=2)
    rig.clock.advance(LAG_MS + 1)
    rig.partition.maybe_shrink_isr()
    assert (rig.isr(), rig.partition.zk_version) == (REPLICAS, ZK_VERSION)
    assert rig.isr_changes == []
    assert rig.events.of_kind(EventKind.ISR_CHANGED) == []
    [failed] = rig.events.of_kind(EventKind.ISR_UPDATE_FAILED)
    assert (failed["isr"], failed["wanted"], failed["leader_epoch"]) == ([1, 2, 3], [1, 2], EPOCH)
    assert rig.store.state(TP) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(
            held.leader_and_isr.leader,
            held.leader_and_isr.leader_epoch,
            held.leader_and_isr.isr,
            9,
        ),
        held.controller_epoch,
    )


def test_after_badversion_the_controllers_leadership_lets_the_shrink_through(rig: Rig) -> None:
    rig.lead()
    rig.store.put_state(TP, znode(LEADER, EPOCH + 1, REPLICAS), 9)
    rig.produce(1)
    rig.clock.advance(LAG_MS + 1)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == REPLICAS
    rig.lead(epoch=EPOCH + 1, zk_version=9)  # the LeaderAndIsr that follows the change
    rig.clock.advance(LAG_MS + 1)
    rig.fetch(1, replica_id=2)
    rig.partition.maybe_shrink_isr()
    assert (rig.isr(), rig.partition.zk_version) == ((1, 2), 10)
    assert rig.store.writes[-1].expected_version == 9
    assert rig.store.writes[-1].state.leader_and_isr.leader_epoch == EPOCH + 1


def test_a_missing_state_znode_fails_the_isr_update_not_the_fetch(rig: Rig) -> None:
    """Kafka's `conditionalUpdatePath` answers NONODE as a failed update, (false, -1); the
    follower's fetch is served and the ISR stays as it was.

    BUG (zkdata/client.py `update_partition_state`, line 393-401, reached from
    broker_node/partition.py `_update_isr` line 287): only `BadVersionError` is caught, so
    kazoo's `NoNodeError` (e.g. a topic being deleted) escapes `read` and fails the whole
    Fetch request of the follower whose progress triggered the expansion."""
    rig.partition.make_leader(leadership(isr=(1, 2)))  # no state znode in the store
    rig.produce(1)
    fetched = rig.fetch(1, replica_id=3)
    assert fetched.error is Errors.NONE
    assert rig.isr() == (1, 2)
    assert len(rig.events.of_kind(EventKind.ISR_UPDATE_FAILED)) == 1


# -- OffsetsForLeaderEpoch (KIP-101) ----------------------------------------------------------


@pytest.fixture
def led_three_epochs(rig: Rig) -> Rig:
    """Leader at epochs 1 (offsets 0-2), 3 (3-4) and now 5 (5-6), alone in the ISR."""
    for epoch, count in ((1, 3), (3, 2), (EPOCH, 2)):
        rig.lead(epoch=epoch, isr=(1,))
        rig.produce(count)
    return rig


@pytest.mark.parametrize(
    ("requested", "answer"),
    [
        pytest.param(-1, (-1, -1), id="undefined"),
        pytest.param(0, (0, 0), id="below-the-first-epoch"),
        pytest.param(1, (1, 3), id="first-epoch-ends-where-3-starts"),
        pytest.param(2, (1, 3), id="gap-answers-the-epoch-below"),
        pytest.param(3, (3, 5), id="middle-epoch"),
        pytest.param(4, (3, 5), id="gap-before-the-current"),
        pytest.param(EPOCH, (EPOCH, 7), id="current-epoch-ends-at-the-leo"),
        pytest.param(EPOCH + 1, (EPOCH, 7), id="above-the-current"),
    ],
)
def test_end_offset_for_epoch(
    led_three_epochs: Rig, requested: int, answer: tuple[int, int]
) -> None:
    for current in (EPOCH, -1):
        found = led_three_epochs.partition.end_offset_for_epoch(current, requested)
        assert found == m.EpochEndOffset(TP.topic, TP.partition, Errors.NONE, *answer)


@pytest.mark.parametrize(
    ("current", "error"),
    [
        pytest.param(EPOCH - 1, Errors.FENCED_LEADER_EPOCH, id="older-fenced"),
        pytest.param(EPOCH + 1, Errors.UNKNOWN_LEADER_EPOCH, id="newer-unknown"),
    ],
)
def test_end_offset_for_epoch_checks_the_leader_epoch(
    led_three_epochs: Rig, current: int, error: Errors
) -> None:
    found = led_three_epochs.partition.end_offset_for_epoch(current, 3)
    assert found == m.EpochEndOffset(TP.topic, TP.partition, error)


def test_a_new_leader_without_records_answers_its_log_end(rig: Rig) -> None:
    rig.lead(epoch=1, isr=(1,))
    rig.produce(3)
    rig.lead(epoch=2, isr=(1,))
    answer = rig.partition.end_offset_for_epoch(2, 1)
    assert (answer.error, answer.end_offset) == (Errors.NONE, 3)


# -- follower ---------------------------------------------------------------------------------


def test_append_as_follower_follows_the_leader_high_watermark(rig: Rig) -> None:
    rig.follow()
    rig.partition.append_as_follower(follower_records(EPOCH, 0, 3), leader_hw=10)
    assert rig.partition.log.log_end_offset == 3
    assert rig.partition.log.high_watermark == 3  # never past its own log end
    rig.partition.append_as_follower([], leader_hw=2)
    assert rig.partition.log.high_watermark == 2
    rig.partition.append_as_follower(follower_records(EPOCH, 3, 2), leader_hw=4)
    assert rig.partition.log.high_watermark == 4
    assert [r.offset for r in rig.partition.log.read(0)] == [0, 1, 2, 3, 4]


def test_truncate_to_reports_the_removed_records(rig: Rig) -> None:
    rig.follow()
    rig.partition.append_as_follower(follower_records(EPOCH, 0, 2), leader_hw=2)
    rig.partition.append_as_follower(follower_records(EPOCH, 2, 3), leader_hw=4)
    assert rig.partition.truncate_to(2) == 3
    assert rig.partition.log.log_end_offset == 2
    assert rig.partition.log.high_watermark == 2
    [truncated] = rig.events.of_kind(EventKind.LOG_TRUNCATED)
    assert (truncated["topic"], truncated["partition"]) == (TP.topic, TP.partition)
    assert (truncated["to_offset"], truncated["removed"], truncated["leader_epoch"]) == (
        2,
        3,
        EPOCH,
    )
    assert truncated["removed_records"] == [[2, "v"], [3, "v"], [4, "v"]]


def test_a_truncation_inside_a_batch_removes_and_reports_the_whole_batch(rig: Rig) -> None:
    rig.follow()
    rig.partition.append_as_follower(follower_records(EPOCH, 0, 2), leader_hw=2)
    rig.partition.append_as_follower(follower_records(EPOCH, 2, 3), leader_hw=4)
    assert rig.partition.truncate_to(3) == 3
    [truncated] = rig.events.of_kind(EventKind.LOG_TRUNCATED)
    assert (truncated["to_offset"], truncated["removed"]) == (2, 3)
    assert truncated["removed_records"] == [[2, "v"], [3, "v"], [4, "v"]]


def test_truncate_to_names_each_removed_record_by_offset_and_value(rig: Rig) -> None:
    rig.follow()
    values = [b"value-0", b"value-1", b"value-2", b"value-3", b"\xff"]
    records = [m.FetchedRecord(o, EPOCH, 1_700_000_000_000, None, v) for o, v in enumerate(values)]
    rig.partition.append_as_follower(records[:1], leader_hw=1)
    rig.partition.append_as_follower(records[1:], leader_hw=3)
    rig.partition.truncate_to(1)
    [truncated] = rig.events.of_kind(EventKind.LOG_TRUNCATED)
    assert truncated["removed_records"] == [
        [1, "value-1"],
        [2, "value-2"],
        [3, "value-3"],
        [4, "\ufffd"],  # undecodable bytes are replaced, not an error
    ]


def test_truncate_to_at_or_past_the_log_end_is_silent(rig: Rig) -> None:
    rig.follow()
    rig.partition.append_as_follower(follower_records(EPOCH, 0, 2), leader_hw=2)
    assert rig.partition.truncate_to(2) == 0
    assert rig.partition.truncate_to(9) == 0
    assert rig.events.of_kind(EventKind.LOG_TRUNCATED) == []


# -- incremental fetch sessions -------------------------------------------------------------


def read_if_changed(
    rig: Rig, offset: int, hw: int, replica_id: int = 2
) -> m.FetchedPartition | None:
    request = m.FetchPartition(TP.topic, TP.partition, offset, EPOCH)
    return rig.partition.read_if_changed(request, replica_id, hw, 0)


def test_an_idle_session_partition_answers_nothing_but_keeps_its_follower_in_sync(
    rig: Rig,
) -> None:
    rig.lead()
    rig.produce(2)
    for replica in (2, 3):
        rig.fetch(2, replica_id=replica, epoch=EPOCH)
    hw = rig.partition.log.high_watermark
    assert hw == 2
    for _ in range(3):
        rig.clock.advance(LAG_MS)
        assert read_if_changed(rig, 2, hw, replica_id=2) is None
        assert read_if_changed(rig, 2, hw, replica_id=3) is None
        rig.partition.maybe_shrink_isr()
    assert rig.isr() == REPLICAS  # the short path recorded every fetch


def test_the_short_path_records_when_an_isr_follower_was_last_caught_up(rig: Rig) -> None:
    """An ISR follower asking again for the log end takes the shortest path, which still
    moves its caught-up time: once the log end moves past it, it stays in the ISR for
    `replica.lag.time.max.ms` after that fetch, not after its last full read."""
    rig.lead()
    rig.produce(2)
    for replica in (2, 3):
        rig.fetch(2, replica_id=replica, epoch=EPOCH)
    rig.clock.advance(3 * LAG_MS)
    for replica in (2, 3):
        assert read_if_changed(rig, 2, 2, replica_id=replica) is None
    rig.produce(1)
    rig.clock.advance(LAG_MS)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == REPLICAS
    rig.clock.advance(1)
    rig.partition.maybe_shrink_isr()
    assert rig.isr() == (1,)


def test_a_session_partition_is_answered_when_its_high_watermark_moved(rig: Rig) -> None:
    rig.lead()
    rig.produce(2)
    rig.fetch(2, replica_id=2, epoch=EPOCH)
    answer = read_if_changed(rig, 2, 0, replica_id=3)  # 3 reaches the end: hw 0 -> 2
    assert answer is not None
    assert (answer.error, answer.high_watermark, answer.records) == (Errors.NONE, 2, ())
    assert read_if_changed(rig, 2, 2, replica_id=3) is None


def test_a_session_partition_with_records_or_an_error_is_read_in_full(rig: Rig) -> None:
    rig.lead()
    rig.produce(3)
    behind = read_if_changed(rig, 1, 0)
    assert behind is not None
    assert [r.offset for r in behind.records] == [1, 2]
    rig.follow()
    refused = read_if_changed(rig, 3, 0)
    assert refused is not None
    assert refused.error is Errors.NOT_LEADER_OR_FOLLOWER


def test_an_encoded_follower_fetch_carries_the_stored_bytes(rig: Rig) -> None:
    rig.lead()
    rig.produce(3)
    request = m.FetchPartition(TP.topic, TP.partition, 1, EPOCH)
    plain = rig.partition.read(request, 2)
    encoded = rig.partition.read(request, 2, encoded=True)
    assert encoded.records == ()
    assert encoded.has_records
    stored, _ = split_batches(encoded.record_data)
    assert [r.offset for r in stored] == [0, 1, 2], "the whole batch holding offset 1"
    assert [(r.offset, r.leader_epoch, r.key, r.value) for r in stored[1:]] == [
        (r.offset, r.leader_epoch, r.key, r.value) for r in plain.records
    ]


# -- replica-level facts: high_watermark_moved, the ISR join, the kept epoch -------------------


def test_becoming_leader_writes_the_high_watermark_and_log_end(rig: Rig) -> None:
    _leader_after_epoch_4(rig)
    [moved] = rig.events.of_kind(EventKind.HIGH_WATERMARK_MOVED)
    assert moved["reason"] == "leader"
    assert (moved["leader_epoch"], moved["high_watermark"], moved["log_end_offset"]) == (
        EPOCH,
        2,
        4,
    )
    assert moved["epoch_start_offset"] == 4
    assert (moved["isr"], moved["isr_log_end_offsets"]) == ([1, 2], [4, -1])
    assert moved["skipped"] == 0


def test_the_first_leader_of_an_empty_partition_writes_nothing_until_it_moves(
    rig: Rig,
) -> None:
    rig.lead(epoch=0, isr=(1,))
    assert rig.events.of_kind(EventKind.HIGH_WATERMARK_MOVED) == []
    rig.produce(1)
    [moved] = rig.events.of_kind(EventKind.HIGH_WATERMARK_MOVED)
    assert (moved["reason"], moved["high_watermark"], moved["leader_epoch"]) == ("moved", 1, 0)


def test_high_watermark_moves_are_sampled_once_per_interval(rig: Rig) -> None:
    rig.lead(isr=(1,))
    for _ in range(5):
        rig.produce(1)  # alone in the ISR: every append moves the HW
    assert rig.partition.log.high_watermark == 5
    moves = [
        e for e in rig.events.of_kind(EventKind.HIGH_WATERMARK_MOVED) if e["reason"] == "moved"
    ]
    assert moves == []  # within the interval of the leader's line
    rig.clock.advance(HW_EVENT_INTERVAL_MS)
    rig.produce(1)
    [moved] = [
        e for e in rig.events.of_kind(EventKind.HIGH_WATERMARK_MOVED) if e["reason"] == "moved"
    ]
    assert (moved["high_watermark"], moved["log_end_offset"], moved["skipped"]) == (6, 6, 5)
    assert moved["isr_log_end_offsets"] == [6]


def test_an_isr_join_names_the_followers_offset_and_the_epoch_start(rig: Rig) -> None:
    _leader_after_epoch_4(rig)
    rig.fetch(4, replica_id=3)
    [changed] = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert changed["reason"] == "expand"
    assert (changed["follower_log_end_offset"], changed["epoch_start_offset"]) == (4, 4)


def test_a_truncation_names_the_epoch_and_high_watermark_it_kept(rig: Rig) -> None:
    rig.follow(epoch=EPOCH + 1)
    rig.partition.append_as_follower(follower_records(EPOCH - 1, 0, 3), leader_hw=2)
    rig.partition.append_as_follower(follower_records(EPOCH, 3, 3), leader_hw=2)
    rig.partition.truncate_to(3)
    [truncated] = rig.events.of_kind(EventKind.LOG_TRUNCATED)
    assert (truncated["to_offset"], truncated["last_epoch"]) == (3, EPOCH - 1)
    assert truncated["high_watermark"] == 2


def test_audited_names_the_leadership_offsets_and_epochs(rig: Rig) -> None:
    rig.lead(isr=(1,))
    rig.produce(3)
    audited = rig.partition.audited()
    assert (audited.topic, audited.partition, audited.leader, audited.leader_epoch) == (
        TP.topic,
        TP.partition,
        LEADER,
        EPOCH,
    )
    assert (audited.log_start_offset, audited.log_end_offset, audited.high_watermark) == (0, 3, 3)
    assert [(e.leader_epoch, e.start_offset, e.end_offset) for e in audited.epochs] == [
        (EPOCH, 0, 3)
    ]
    assert audited.error_message == ""


def test_audited_names_a_log_that_cannot_be_read(rig: Rig) -> None:
    rig.lead(isr=(1,))
    rig.partition.log.close()
    audited = rig.partition.audited()
    assert audited.epochs == ()
    assert audited.log_end_offset == -1
    assert "closed" in audited.error_message.lower()
