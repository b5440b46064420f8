"""Bug switch `kafka-6361` in `ReplicaFetcherThread`: a follower truncates to the end
offset the leader names for the follower's latest epoch, in one round, as Kafka did
between KIP-101 and KIP-279; without the switch it also asks where that epoch ends in its
own log, and a follower that lacks the leader's epoch cuts its log where its largest
earlier epoch ends and asks again (KIP-279).

Setup: broker 1 follows broker 2 for "orders" partition 0 at leader epoch 4. Both logs
start with records of epoch 1; the follower then led briefly (epoch 2 or 3) and wrote a
tail the leader never had, while the leader kept a longer tail of epoch 1 (and of epoch 2)
before it led again: two quick leader changes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from broker_node.fetcher import ReplicaFetcherThread
from broker_node.storage import Record
from broker_node.storage.testing import InMemoryPartitionLog
from broker_node.testing import FakeFollower, FakeLeader
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until

TP = TopicPartition("orders", 0)
EPOCH = 4
DEADLINE_S = 10.0


def _leader(epochs: list[int]) -> FakeLeader:
    """A leader whose records carry `epochs` in order, then one of the current epoch."""
    log = InMemoryPartitionLog()
    for epoch in epochs:
        log.append_as_leader([(b"k", f"v-{epoch}".encode(), 1)], epoch)
    log.append_as_leader([(b"k", b"current", 1)], EPOCH)
    log.set_high_watermark(log.log_end_offset)
    return FakeLeader({TP: log})


def _follower(epochs: list[int]) -> FakeFollower:
    log = InMemoryPartitionLog()
    log.append_as_follower(
        [Record(i, epoch, 1, b"k", f"v-{epoch}".encode()) for i, epoch in enumerate(epochs)]
    )
    log.set_high_watermark(1)
    return FakeFollower(EPOCH, log)


def _records(log: InMemoryPartitionLog) -> list[tuple[int, int, bytes | None]]:
    return [(r.offset, r.leader_epoch, r.value) for r in log.read(0)]


@pytest.fixture
def threads() -> Iterator[list[ReplicaFetcherThread]]:
    started: list[ReplicaFetcherThread] = []
    yield started
    for thread in started:
        thread.stop()


def _run(
    threads: list[ReplicaFetcherThread],
    leader: FakeLeader,
    follower: FakeFollower,
    check_own_epoch_end: bool,
) -> FakeFollower:
    thread = ReplicaFetcherThread(
        1,
        2,
        "leader",
        9092,
        RecordingEventLog("broker-1"),
        20,
        leader,
        check_own_epoch_end=check_own_epoch_end,
    )
    threads.append(thread)
    thread.add({TP: follower})
    thread.start()
    end = leader.logs[TP].log_end_offset
    wait_until(
        lambda: follower.log.log_end_offset == end and follower.log.high_watermark == end,
        DEADLINE_S,
        "the follower never reached the leader's log end",
    )
    return follower


def test_by_default_the_follower_cuts_where_the_answered_epoch_ends_in_its_own_log(
    threads: list[ReplicaFetcherThread],
) -> None:
    """Leader: epoch 1 at offsets 0-3. Follower: epoch 1 at 0-1, epoch 2 at 2-3. The
    leader answers epoch 2 with (1, 4); the follower's epoch 1 ends at 2."""
    leader = _leader([1, 1, 1, 1])
    follower = _run(threads, leader, _follower([1, 1, 2, 2]), check_own_epoch_end=True)
    assert follower.truncations == [2]
    assert _records(follower.log) == _records(leader.logs[TP])


def test_a_follower_without_the_answered_epoch_asks_again_with_an_earlier_one(
    threads: list[ReplicaFetcherThread],
) -> None:
    """Leader: epoch 1 at 0-2, epoch 2 at 3. Follower: epoch 1 at 0-1, epoch 3 at 2-3.
    Asked for epoch 3 the leader answers (2, 4); the follower has no epoch 2, cuts where
    its epoch 1 ends (2) and asks for epoch 1: (1, 3), so it stays at 2."""
    leader = _leader([1, 1, 1, 2])
    follower = _run(threads, leader, _follower([1, 1, 3, 3]), check_own_epoch_end=True)
    assert follower.truncations == [2, 2]
    assert [p.leader_epoch for r in leader.epoch_requests for p in r.partitions] == [3, 1]
    assert _records(follower.log) == _records(leader.logs[TP])


@pytest.mark.parametrize(
    ("leader_epochs", "follower_epochs"),
    [([1, 1, 1, 1], [1, 1, 2, 2]), ([1, 1, 1, 2], [1, 1, 3, 3])],
    ids=["same-epoch", "missing-epoch"],
)
def test_kafka_6361_keeps_the_followers_tail_and_the_logs_diverge(
    threads: list[ReplicaFetcherThread], leader_epochs: list[int], follower_epochs: list[int]
) -> None:
    leader = _leader(leader_epochs)
    follower = _run(threads, leader, _follower(follower_epochs), check_own_epoch_end=False)
    assert follower.truncations == [4]  # the leader's answer: nothing removed
    assert len(leader.epoch_requests) == 1
    mine, theirs = _records(follower.log), _records(leader.logs[TP])
    assert mine[:2] == theirs[:2]
    assert mine[2:4] != theirs[2:4]  # offsets 2 and 3 hold the follower's own tail
    assert mine[4:] == theirs[4:]
