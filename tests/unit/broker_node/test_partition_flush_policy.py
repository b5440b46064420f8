"""Kafka's `flush.messages` on a replica: the log is synced once that many appended
messages are not, before the leader counts them or the follower fetches on; unset, never."""

from __future__ import annotations

import pytest

from broker_node.partition import Partition
from broker_node.partition_isr import PartitionConfig
from broker_node.storage.testing import InMemoryPartitionLog
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m

TP = TopicPartition("orders", 0)


def replica(interval: int | None) -> tuple[Partition, InMemoryPartitionLog]:
    log = InMemoryPartitionLog()
    partition = Partition(
        TP,
        1,
        log,  # type: ignore[arg-type]
        FakeIsrStore(),
        RecordingEventLog("broker-1"),
        PartitionConfig(flush_interval_messages=interval),
        lambda tp: None,
    )
    return partition, log


def leads(partition: Partition) -> None:
    partition.make_leader(
        m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 0, 1, 1, (1,), 0, (1,))
    )


def produce(partition: Partition, count: int) -> None:
    records = [m.ProducedRecord(b"k", b"v", timestamp_ms=1) for _ in range(count)]
    assert partition.append_as_leader(records, acks=1)[0] == 0


@pytest.mark.parametrize(("interval", "batches", "syncs"), [(None, 5, 0), (1, 5, 5), (3, 5, 2)])
def test_a_leader_syncs_once_the_interval_is_reached(
    interval: int | None, batches: int, syncs: int
) -> None:
    partition, log = replica(interval)
    leads(partition)
    for _ in range(batches):
        produce(partition, 2)
    assert log.syncs == syncs


def test_a_follower_syncs_each_fetched_batch_with_an_interval_of_one() -> None:
    partition, log = replica(1)
    records = [m.FetchedRecord(o, 0, 1, b"k", b"v") for o in range(4)]
    partition.append_as_follower(records[:2], leader_hw=0)
    partition.append_as_follower(records[2:], leader_hw=2)
    partition.append_as_follower([], leader_hw=4)
    assert log.syncs == 2
