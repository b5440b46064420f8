"""`write_isr`, a leader's conditional ISR write, and bug switch `kafka-2729`: after a
BADVERSION the fixed leader re-reads the znode and adopts its zkVersion when it already
says what the leader wanted; with the switch it never re-reads, keeps its cached zkVersion,
and every later ISR write fails the same way.

Setup: "orders" partition 0, broker 1 leads at leader epoch 5 with ISR (1, 2, 3); the
leader's cached zkVersion is 7, the znode is at 9 (the leader's own shrink to (1, 2)
landed, its answer was lost and the client's retry met BADVERSION).
"""

from __future__ import annotations

from pathlib import Path

from broker_node.isr_writes import write_isr
from broker_node.partition_isr import PartitionConfig
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import EARLY_ISR_JOIN, STALE_ISR_CACHE
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m

TP = TopicPartition("orders", 0)


def _state(
    isr: tuple[int, ...], zk_version: int = 7, epoch: int = 5
) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(1, epoch, isr, zk_version), 3)


def _after_a_lost_answer() -> FakeIsrStore:
    store = FakeIsrStore()
    store.put_state(TP, _state((1, 2)), 9)
    return store


def test_a_conflict_with_what_the_leader_wanted_adopts_the_znodes_version() -> None:
    assert write_isr(_after_a_lost_answer(), TP, _state((1, 2))) == 9


def test_a_conflict_with_a_changed_znode_waits_for_the_controller() -> None:
    store = FakeIsrStore()
    store.put_state(TP, _state((1, 2, 3), epoch=6), 9)
    assert write_isr(store, TP, _state((1, 2))) is None


def test_a_write_at_the_current_version_lands() -> None:
    store = FakeIsrStore()
    store.put_state(TP, _state((1, 2, 3)), 7)
    assert write_isr(store, TP, _state((1, 2)), reread_on_conflict=False) == 8


def test_kafka_2729_keeps_the_stale_version_after_any_conflict() -> None:
    store = _after_a_lost_answer()
    assert write_isr(store, TP, _state((1, 2)), reread_on_conflict=False) is None
    assert write_isr(store, TP, _state((1,)), reread_on_conflict=False) is None
    assert [w.expected_version for w in store.writes] == [7, 7]
    stored = store.state(TP)
    assert stored is not None
    assert stored.leader_and_isr.isr == (1, 2)


def _leader_config(tmp_path: Path, switches: BugSwitches) -> PartitionConfig:
    """The configuration of the partition a `ReplicaManager` creates and leads."""
    store = FakeIsrStore()
    store.put_state(TP, _state((1, 2, 3)), 7)
    manager = ReplicaManager(
        1,
        ReplicationConfig(data_dir=tmp_path, bug_switches=switches),
        store,
        RecordingEventLog("broker-1"),
        lambda _topic: {},
    )
    try:
        state = m.LeaderAndIsrPartitionState(
            TP.topic, TP.partition, 3, 1, 5, (1, 2, 3), 7, (1, 2, 3)
        )
        assert manager.become_leader_or_follower([state], []) == {}
        partition = manager.partition(TP)
        assert partition is not None
        return partition.config
    finally:
        manager.shutdown()


def test_the_replica_manager_hands_the_switch_to_its_partitions(tmp_path: Path) -> None:
    assert _leader_config(tmp_path / "fixed", NO_BUGS).reread_isr_on_conflict is True
    switched = _leader_config(tmp_path / "bug", BugSwitches(frozenset({STALE_ISR_CACHE})))
    assert switched.reread_isr_on_conflict is False
    assert switched.isr_join_needs_epoch_start is True


def test_the_replica_manager_hands_kafka_7128_to_its_partitions(tmp_path: Path) -> None:
    assert _leader_config(tmp_path / "fixed", NO_BUGS).isr_join_needs_epoch_start is True
    switched = _leader_config(tmp_path / "bug", BugSwitches(frozenset({EARLY_ISR_JOIN})))
    assert switched.isr_join_needs_epoch_start is False
    assert switched.reread_isr_on_conflict is True
