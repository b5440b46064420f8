"""Bug switch `kip-101` in `ReplicaFetcherThread`: a returning replica truncates to its
own high watermark, as Kafka did before KIP-101, so a tail the leader never had survives
and the replicas diverge; without the switch it truncates where the leader's epoch ended.

Setup (KIP-101's second scenario): broker 1 follows broker 2 for "orders" partition 0 at
leader epoch 5. The follower holds two records of epoch 3 and believes both committed
(high watermark 2); the new leader kept only the first and wrote two of epoch 5 after it.
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
EPOCH = 5
DEADLINE_S = 10.0


def _leader() -> FakeLeader:
    log = InMemoryPartitionLog()
    log.append_as_leader([(b"k", b"old", 1)], 3)
    log.append_as_leader([(b"k", b"new", 1)] * 2, EPOCH)
    log.set_high_watermark(log.log_end_offset)
    return FakeLeader({TP: log})


def _follower() -> FakeFollower:
    log = InMemoryPartitionLog()
    log.append_as_follower([Record(i, 3, 1, b"k", b"old") for i in range(2)])
    log.set_high_watermark(2)
    return FakeFollower(EPOCH, log)


def _epochs(log: InMemoryPartitionLog) -> list[tuple[int, int]]:
    return [(r.offset, r.leader_epoch) for r in log.read(0)]


@pytest.fixture
def threads() -> Iterator[list[ReplicaFetcherThread]]:
    started: list[ReplicaFetcherThread] = []
    yield started
    for thread in started:
        thread.stop()


def _start(threads: list[ReplicaFetcherThread], leader: FakeLeader, by_epoch: bool) -> FakeFollower:
    follower = _follower()
    thread = ReplicaFetcherThread(
        1, 2, "leader", 9092, RecordingEventLog("broker-1"), 20, leader, by_epoch
    )
    threads.append(thread)
    thread.add({TP: follower})
    thread.start()
    return follower


def _run(threads: list[ReplicaFetcherThread], leader: FakeLeader, by_epoch: bool) -> FakeFollower:
    follower = _start(threads, leader, by_epoch)
    wait_until(
        lambda: follower.log.log_end_offset == 3 and follower.log.high_watermark == 3,
        DEADLINE_S,
        "the follower never reached the leader's log end",
    )
    return follower


def test_by_default_the_divergent_tail_is_cut_where_the_leaders_epoch_ended(
    threads: list[ReplicaFetcherThread],
) -> None:
    leader = _leader()
    follower = _run(threads, leader, by_epoch=True)
    assert follower.truncations == [1]
    assert _epochs(follower.log) == _epochs(leader.logs[TP]) == [(0, 3), (1, EPOCH), (2, EPOCH)]


def test_kip_101_truncates_to_the_high_watermark_and_the_replicas_diverge(
    threads: list[ReplicaFetcherThread],
) -> None:
    leader = _leader()
    follower = _run(threads, leader, by_epoch=False)
    assert follower.truncations == [2]
    assert _epochs(follower.log) == [(0, 3), (1, 3), (2, EPOCH)]  # offset 1 is not the leader's
    [asked] = leader.epoch_requests[0].partitions
    assert asked.leader_epoch == EPOCH  # the leader's current epoch: its log end


def test_kip_101_never_truncates_above_the_leaders_log_end(
    threads: list[ReplicaFetcherThread],
) -> None:
    """A leader shorter than the follower's high watermark: the follower goes down to the
    leader's log end, as Kafka's out-of-range handling did, and follows it from there."""
    shorter = InMemoryPartitionLog()
    shorter.append_as_leader([(b"k", b"old", 1)], 3)
    shorter.set_high_watermark(1)
    leader = FakeLeader({TP: shorter})
    follower = _start(threads, leader, by_epoch=False)
    wait_until(lambda: follower.truncations, DEADLINE_S, "never truncated")
    assert follower.truncations[0] == 1
