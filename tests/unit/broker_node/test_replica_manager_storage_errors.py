"""`ReplicaManager.become_leader_or_follower` with a log that cannot be opened: that
partition answers KAFKA_STORAGE_ERROR and is not hosted; the others are applied."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

GOOD, BAD = TopicPartition("orders", 0), TopicPartition("orders", 1)


def lead(tp: TopicPartition) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 1, 1, 1, (1,), 0, (1,))


def test_one_unreadable_log_fails_only_its_partition(tmp_path: Path) -> None:
    bad_dir = tmp_path / "orders-1"
    bad_dir.mkdir()
    (bad_dir / "hw-checkpoint").write_text("not a checkpoint\n")
    events = RecordingEventLog("broker1")

    def no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
        return {}

    replicas = ReplicaManager(
        1, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), events, no_overrides
    )
    failed = replicas.become_leader_or_follower([lead(BAD), lead(GOOD)], [])
    assert failed == {BAD: Errors.KAFKA_STORAGE_ERROR}
    assert replicas.partition(BAD) is None
    good = replicas.partition(GOOD)
    assert good is not None
    assert good.is_leader
    [unavailable] = events.of_kind(EventKind.LOG_UNAVAILABLE)
    assert (unavailable["topic"], unavailable["partition"]) == ("orders", 1)
    assert "CorruptLogError" in unavailable["reason"]


def test_an_append_the_log_refuses_is_answered_kafka_storage_error(tmp_path: Path) -> None:
    """A log that refuses the append (here: closed) answers Kafka's storage error, which a
    producer retries, instead of failing the call."""
    replicas = ReplicaManager(
        1, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), RecordingEventLog(), lambda _t: {}
    )
    replicas.become_leader_or_follower([lead(GOOD)], [])
    partition = replicas.partition(GOOD)
    assert partition is not None
    partition.log.close()
    reply = (
        replicas.produce(m.ProduceRequest.single("orders", 0, (m.ProducedRecord(None, b"v"),), 1))
        .result(timeout=5)
        .only
    )
    assert reply.error is Errors.KAFKA_STORAGE_ERROR
    assert reply.base_offset == -1
