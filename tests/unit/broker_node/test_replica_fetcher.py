"""`ReplicaFetcherThread` against test doubles of what it talks to: a `FakeFollower` (the
`FetcherTarget`: a follower replica over an in-memory log) and a `FakeLeader` (the
`LeaderClient`: the leader's logs answering OffsetsForLeaderEpoch and Fetch). Truncation
before the first fetch (KIP-101), catching up with the leader, parking on a fenced epoch,
asking again when the leader is not ready, truncating again after OFFSET_OUT_OF_RANGE, and
the leader epoch the requests carry.

Setup: broker 1 follows broker 2 for "orders" partition 0 at leader epoch 5 (unless a test
says otherwise). The fetcher thread runs for real; the test thread waits on conditions with a
deadline, never on sleeps, and stops the thread at the end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping

import pytest

from broker_node.fetcher import ReplicaFetcherThread
from broker_node.storage import Record
from broker_node.storage.testing import InMemoryPartitionLog
from broker_node.testing import FakeFollower, FakeLeader
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc.errors import Errors

TP = TopicPartition("orders", 0)
EPOCH = 5

TP1 = TopicPartition("orders", 1)
DEADLINE_S = 10.0

Start = Callable[..., ReplicaFetcherThread]


def leader_log(*epochs: tuple[int, int]) -> InMemoryPartitionLog:
    """A leader log holding `count` records of each (epoch, count), all committed, one
    record a batch (so that a follower's log may end after any of them)."""
    log = InMemoryPartitionLog()
    for epoch, count in epochs:
        for i in range(count):
            log.append_as_leader([(b"k", b"v%d" % i, 1_700_000_000_000)], epoch)
    log.set_high_watermark(log.log_end_offset)
    return log


def follower_log(*epochs: tuple[int, int], high_watermark: int = 0) -> InMemoryPartitionLog:
    """A follower log holding `count` records of each (epoch, count), one record a batch
    (so that a truncation may cut anywhere)."""
    log = InMemoryPartitionLog()
    for epoch, count in epochs:
        for _ in range(count):
            offset = log.log_end_offset
            log.append_as_follower([Record(offset, epoch, 1_700_000_000_000, b"k", b"f")])
    log.set_high_watermark(high_watermark)
    return log


@pytest.fixture
def events() -> RecordingEventLog:
    """The follower broker's event log."""
    return RecordingEventLog("broker-1")


@pytest.fixture
def start(events: RecordingEventLog) -> Iterator[Start]:
    """Starts a fetcher of broker 1 from `leader` (broker 2) following `follower` for `TP`
    (and `others`, by partition)."""
    threads: list[ReplicaFetcherThread] = []

    def run(
        leader: FakeLeader,
        follower: FakeFollower,
        others: Mapping[TopicPartition, FakeFollower] | None = None,
    ) -> ReplicaFetcherThread:
        thread = ReplicaFetcherThread(1, 2, "leader", 9092, events, 20, client=leader)
        threads.append(thread)
        thread.add({TP: follower, **(others or {})})
        thread.start()
        return thread

    yield run
    for thread in threads:
        thread.stop()


def caught_up(leader: FakeLeader, follower: FakeFollower, tp: TopicPartition = TP) -> bool:
    """The follower holds the leader's records and high watermark."""
    mine = [(r.offset, r.leader_epoch) for r in follower.log.read(0)]
    theirs = [(r.offset, r.leader_epoch) for r in leader.logs[tp].read(0)]
    return mine == theirs and follower.log.high_watermark == leader.logs[tp].high_watermark


def produce(leader: FakeLeader, tp: TopicPartition, count: int = 1) -> None:
    """The leader appends `count` records to `tp` and commits them."""
    log = leader.logs[tp]
    log.append_as_leader([(b"k", b"late", 1_700_000_000_000)] * count, EPOCH)
    log.set_high_watermark(log.log_end_offset)


def fetched_partitions(leader: FakeLeader, since: int) -> set[TopicPartition]:
    """The partitions named by the Fetch requests after the first `since`."""
    return {p.topic_partition for r in leader.fetch_requests[since:] for p in r.partitions}


def test_an_empty_follower_truncates_to_its_high_watermark_and_catches_up(
    start: Start,
) -> None:
    leader = FakeLeader({TP: leader_log((3, 2), (EPOCH, 3))})
    follower = FakeFollower(EPOCH)
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    assert follower.truncations == [0]
    assert leader.epoch_requests == []  # nothing to ask about: the log had no epoch


def test_a_diverged_follower_truncates_where_the_leaders_epoch_ended(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((3, 2), (EPOCH, 4))})
    follower = FakeFollower(EPOCH, follower_log((3, 5), high_watermark=1))
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    assert follower.truncations[0] == 2  # epoch 3 ended at offset 2 on the leader
    [asked] = leader.epoch_requests[0].partitions
    assert (asked.current_leader_epoch, asked.leader_epoch) == (EPOCH, 3)


def test_a_follower_behind_the_leaders_epoch_end_keeps_its_log(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((3, 4), (EPOCH, 1))})
    follower = FakeFollower(EPOCH, follower_log((3, 2), high_watermark=2))
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    assert follower.truncations == [2]  # capped at its own log end: nothing removed


def test_a_fenced_leader_epoch_parks_the_partition(start: Start, events: RecordingEventLog) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 3))})
    leader.fail(TP, Errors.FENCED_LEADER_EPOCH)
    follower = FakeFollower(EPOCH, follower_log((EPOCH, 1)))
    start(leader, follower)
    [parked] = wait_until(
        lambda: events.of_kind(EventKind.FETCHER_PARKED), DEADLINE_S, "never parked"
    )
    assert (parked["leader"], parked["leader_epoch"], parked["error"]) == (
        2,
        EPOCH,
        "FENCED_LEADER_EPOCH",
    )
    assert follower.truncations == []
    assert leader.fetch_requests == []


@pytest.mark.parametrize(
    "error", [Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION]
)
def test_a_leader_not_ready_yet_is_asked_again_until_it_is(
    start: Start, events: RecordingEventLog, error: Errors
) -> None:
    """A new topic's follower may get its LeaderAndIsr before the leader does: the leader
    answers UNKNOWN_TOPIC_OR_PARTITION (or NOT_LEADER_OR_FOLLOWER) for a moment, and the
    follower must catch up once it answers, never stay parked out of the ISR."""
    leader = FakeLeader({TP: leader_log((EPOCH, 3))})
    leader.fail(TP, error)
    follower = FakeFollower(EPOCH, follower_log((EPOCH, 1)))
    start(leader, follower)
    wait_until(lambda: len(leader.epoch_requests) >= 2, DEADLINE_S, "never asked again")
    leader.heal(TP)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    assert events.of_kind(EventKind.FETCHER_PARKED) == []


def test_partitions_not_ready_are_logged_in_one_line_per_answer(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """A new topic's thousands of partitions whose leader is not ready yet make one log
    line per answer, naming a few of them and how many more, not one line each."""
    tps = [TopicPartition("fresh", p) for p in range(20)]
    leader = FakeLeader({tp: leader_log((EPOCH, 1)) for tp in tps})
    for tp in tps:
        leader.fail(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    caplog.set_level(logging.INFO, logger="broker_node.fetcher")
    thread = ReplicaFetcherThread(1, 2, "leader", 9092, RecordingEventLog("b1"), 20, client=leader)
    thread.add({tp: FakeFollower(EPOCH) for tp in tps})
    thread.start()
    try:
        wait_until(lambda: "asking again" in caplog.text, DEADLINE_S, "nothing logged")
    finally:
        thread.stop()
    lines = [r.getMessage() for r in caplog.records if "asking again" in r.getMessage()]
    assert lines[0] == (
        "fresh-0, fresh-1, fresh-2 and 17 more from leader 2: UNKNOWN_TOPIC_OR_PARTITION; "
        "asking again in 1 s"
    )


def test_a_fetch_answered_not_leader_is_retried_after_a_backoff(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 3)), TP1: leader_log((EPOCH, 1))})
    follower, other = FakeFollower(EPOCH), FakeFollower(EPOCH)
    start(leader, follower, {TP1: other})
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    leader.fail(TP, Errors.NOT_LEADER_OR_FOLLOWER)
    produce(leader, TP1, 2)
    wait_until(lambda: caught_up(leader, other, TP1), DEADLINE_S, "the other never caught up")
    leader.heal(TP)
    produce(leader, TP)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "never fetched again")


def test_an_unknown_leader_epoch_is_asked_again(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 3))})
    leader.fail(TP, Errors.UNKNOWN_LEADER_EPOCH)
    follower = FakeFollower(EPOCH, follower_log((EPOCH, 1)))
    start(leader, follower)
    wait_until(lambda: len(leader.epoch_requests) >= 2, DEADLINE_S, "never asked again")
    assert follower.truncations == []
    assert leader.fetch_requests == []


def test_out_of_range_truncates_again(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 3))})
    follower = FakeFollower(EPOCH)
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    leader.logs[TP].truncate_to(1)  # the leader's log is now shorter than the follower's
    leader.logs[TP].set_high_watermark(1)
    wait_until(lambda: len(leader.epoch_requests) >= 1, DEADLINE_S, "never truncated again")
    wait_until(lambda: follower.log.log_end_offset == 1, DEADLINE_S, "never cut to the leader")
    assert follower.truncations[-1] == 1


def test_requests_carry_the_leader_epoch_of_the_partition_when_added(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 2))})
    follower = FakeFollower(EPOCH)
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    follower.leader_epoch = EPOCH + 1  # changed without a new add(): not this fetch's epoch
    first = len(leader.fetch_requests)
    wait_until(lambda: len(leader.fetch_requests) > first, DEADLINE_S, "no further fetch")
    epochs = {p.current_leader_epoch for r in leader.fetch_requests for p in r.partitions}
    assert epochs == {EPOCH}


def test_a_removed_partition_is_no_longer_fetched(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 2)), TP1: leader_log((EPOCH, 1))})
    follower, other = FakeFollower(EPOCH), FakeFollower(EPOCH)
    thread = start(leader, follower, {TP1: other})
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    thread.remove([TP])
    assert not thread.is_empty()
    produce(leader, TP)
    since = len(leader.fetch_requests) + 1  # one fetch naming TP may still be in flight
    produce(leader, TP1, 2)
    wait_until(lambda: caught_up(leader, other, TP1), DEADLINE_S, "the other never caught up")
    wait_until(lambda: len(leader.fetch_requests) > since, DEADLINE_S, "no fetch after the removal")
    assert TP not in fetched_partitions(leader, since)
    assert follower.log.log_end_offset == 2  # records of an in-flight fetch are dropped
    thread.remove([TP1])
    assert thread.is_empty()


def test_a_removed_partition_leaves_the_fetch_session(start: Start) -> None:
    leader = FakeLeader({TP: leader_log((EPOCH, 2)), TP1: leader_log((EPOCH, 1))})
    follower, other = FakeFollower(EPOCH), FakeFollower(EPOCH)
    thread = start(leader, follower, {TP1: other})
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    thread.remove([TP])
    produce(leader, TP1)
    wait_until(lambda: caught_up(leader, other, TP1), DEADLINE_S, "the other never caught up")
    assert any(TP in r.forgotten for r in leader.fetch_requests)
    [session_id] = leader.sessions.ids()
    session = leader.sessions.session(session_id)
    assert session is not None
    assert set(session.partitions) == {TP1}


def test_fetches_in_a_session_name_only_partitions_whose_offset_moved(start: Start) -> None:
    """Setup: a follower of TP and TP1, both caught up. Steps: produce to TP only.
    Validate: after the first full fetch every fetch is incremental, and none after the
    session opened names TP1, whose offset never moved; TP's records still arrive."""
    leader = FakeLeader({TP: leader_log((EPOCH, 2)), TP1: leader_log((EPOCH, 3))})
    follower, other = FakeFollower(EPOCH), FakeFollower(EPOCH)
    start(leader, follower, {TP1: other})
    wait_until(
        lambda: caught_up(leader, follower) and caught_up(leader, other, TP1),
        DEADLINE_S,
        "followers never caught up",
    )
    since = len(leader.fetch_requests) + 1  # the fetch in flight may carry TP1's offset
    produce(leader, TP, 3)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "never fetched the new records")
    wait_until(lambda: len(leader.fetch_requests) > since + 1, DEADLINE_S, "no further fetch")
    requests = leader.fetch_requests
    assert requests[0].session_epoch == 0  # the first fetch is full and opens the session
    assert [p.topic_partition for p in requests[0].partitions] == [TP, TP1]
    later = requests[since:]
    assert all(r.session_epoch > 0 for r in later)
    assert TP1 not in fetched_partitions(leader, since)
    assert caught_up(leader, other, TP1)


def test_an_evicted_session_is_replaced_by_a_full_fetch(start: Start) -> None:
    """Setup: a follower in a session with its leader. Steps: the leader forgets every
    session (as after a restart or an eviction), then takes new records. Validate: the
    follower's next fetch is refused FETCH_SESSION_ID_NOT_FOUND, the one after is full and
    opens a new session, and the records arrive."""
    leader = FakeLeader({TP: leader_log((EPOCH, 2))})
    follower = FakeFollower(EPOCH)
    start(leader, follower)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "follower never caught up")
    [old] = wait_until(leader.sessions.ids, DEADLINE_S, "no session opened")
    leader.evict_sessions()
    since = len(leader.fetch_requests)
    produce(leader, TP, 2)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "never caught up again")
    full = [r for r in leader.fetch_requests[since:] if r.is_full]
    assert full, "no full fetch after the eviction"
    assert [p.topic_partition for p in full[0].partitions] == [TP]
    [new] = leader.sessions.ids()
    assert new != old


class _CountingLog(InMemoryPartitionLog):
    """A follower log that counts how often its log end is read."""

    def __init__(self) -> None:
        super().__init__()
        self.end_reads = 0

    @property
    def log_end_offset(self) -> int:
        self.end_reads += 1
        return super().log_end_offset


def test_a_round_looks_only_at_partitions_that_moved(start: Start) -> None:
    """Setup: a follower of TP and TP1, both caught up; TP1's log counts the reads of its
    log end. Steps: produce to TP and let several more rounds run. Validate: TP's records
    arrive, and no round after the catch-up read TP1's log end (a round costs the
    partitions that moved, not every partition fetched)."""
    leader = FakeLeader({TP: leader_log((EPOCH, 2)), TP1: leader_log((EPOCH, 3))})
    counting = _CountingLog()
    follower, other = FakeFollower(EPOCH), FakeFollower(EPOCH, counting)
    start(leader, follower, {TP1: other})
    wait_until(
        lambda: caught_up(leader, follower) and caught_up(leader, other, TP1),
        DEADLINE_S,
        "followers never caught up",
    )
    since = len(leader.fetch_requests) + 1  # the round in flight may still read it
    wait_until(lambda: len(leader.fetch_requests) > since, DEADLINE_S, "no further fetch")
    reads = counting.end_reads
    produce(leader, TP, 2)
    wait_until(lambda: caught_up(leader, follower), DEADLINE_S, "never fetched the new records")
    wait_until(lambda: len(leader.fetch_requests) > since + 5, DEADLINE_S, "no further fetch")
    assert counting.end_reads == reads
    assert TP1 not in fetched_partitions(leader, since)
