"""`ReplicaManager.stop_replicas`: StopReplica with delete removes a partition's log
directory, whether or not the broker opened the partition since it started. And one round
of the `isr-expiration` thread (`ReplicaManager.expire_isr_round`)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors

TP = TopicPartition("orders", 0)


def manager(data_dir: Path) -> ReplicaManager:
    def no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
        return {}

    config = ReplicationConfig(data_dir=data_dir)
    return ReplicaManager(1, config, FakeIsrStore(), RecordingEventLog("b1"), no_overrides)


def lead(replicas: ReplicaManager) -> None:
    """Lead `TP` and append one record to it (a new log has no directory before that)."""
    state = m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 1, 1, 1, (1,), 0, (1,))
    replicas.become_leader_or_follower([state], [])
    partition = replicas.partition(TP)
    assert partition is not None
    partition.log.append_as_leader([(b"k", b"v", 1)], 1)


def test_delete_removes_the_log_of_a_hosted_partition(tmp_path: Path) -> None:
    replicas = manager(tmp_path)
    lead(replicas)
    assert (tmp_path / "orders-0").is_dir()
    replicas.stop_replicas([TP], delete=[TP])
    assert not (tmp_path / "orders-0").exists()
    assert replicas.partition(TP) is None


def test_delete_removes_a_log_left_from_before_a_restart(tmp_path: Path) -> None:
    """The broker restarted and was never told about the partition again: its files
    from the previous run are removed all the same."""
    before = manager(tmp_path)
    lead(before)
    before.shutdown()
    after = manager(tmp_path)
    after.stop_replicas([TP], delete=[TP])
    assert not (tmp_path / "orders-0").exists()


def test_stop_without_delete_keeps_the_log(tmp_path: Path) -> None:
    before = manager(tmp_path)
    lead(before)
    before.shutdown()
    after = manager(tmp_path)
    after.stop_replicas([TP], delete=[])
    assert (tmp_path / "orders-0").is_dir()


def test_an_isr_expiration_round_shrinks_a_lagging_isr_and_answers_what_was_parked(
    tmp_path: Path,
) -> None:
    """Broker 1 leads with ISR (1, 2); broker 2 never fetches. A round after
    `replica.lag.time.max.ms` writes the ISR without it, which moves the high watermark
    and answers the acks=all Produce parked on the partition; the round that follows
    writes nothing more."""

    def no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
        return {}

    store = FakeIsrStore()
    config = ReplicationConfig(data_dir=tmp_path, lag_time_max_ms=1)
    replicas = ReplicaManager(1, config, store, RecordingEventLog("b1"), no_overrides)
    replicas.purgatory.start()
    try:
        state = m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 1, 1, 1, (1, 2), 0, (1, 2))
        store.put_state(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 1, (1, 2), 0), 1), 0)
        replicas.become_leader_or_follower([state], [])
        record = m.ProducedRecord(None, b"v")
        answer = replicas.produce(
            m.ProduceRequest.single(TP.topic, TP.partition, (record,), -1, 30_000)
        )
        assert not answer.done()
        assert replicas.purgatory.parked_partitions() == {TP}

        def shrunk() -> bool:
            replicas.expire_isr_round()
            return answer.done()

        wait_until(shrunk, 10.0, "the ISR shrank and the Produce was answered")
        assert answer.result().only.error is Errors.NONE
        written = store.state(TP)
        assert written is not None
        assert written.leader_and_isr.isr == (1,)
        writes = len(store.writes)
        replicas.expire_isr_round()
        assert len(store.writes) == writes
    finally:
        replicas.shutdown()
