"""A LeaderAndIsr that makes the broker leader of many partitions writes one
`leaderships_started` with a column per field, whose facts are the `high_watermark_moved`
lines each partition would have written alone; the followed partitions write nothing."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from eventlog import EventKind, expand
from eventlog.testing import RecordingEventLog
from rpc import messages as m


def _no_overrides(_topics: Collection[str]) -> dict[str, dict[str, str]]:
    return {}


def _state(partition: int, leader: int, epoch: int) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState("t", partition, 1, leader, epoch, (1, 2), 0, (1, 2))


def test_one_round_event_holds_every_new_leadership(tmp_path: Path) -> None:
    events = RecordingEventLog("b1")
    replicas = ReplicaManager(
        1, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), events, _no_overrides
    )
    led = [_state(p, 1, 3) for p in range(5)]
    followed = [_state(p, 2, 3) for p in range(5, 8)]
    replicas.become_leader_or_follower([*led, *followed], [])
    rounds = [e for e in events.events if e["kind"] == EventKind.LEADERSHIPS_STARTED]
    assert len(rounds) == 1
    assert not [e for e in events.events if e["kind"] == EventKind.HIGH_WATERMARK_MOVED]
    facts = expand(rounds[0])
    assert [(f["kind"], f["partition"], f["leader_epoch"], f["reason"]) for f in facts] == [
        ("high_watermark_moved", p, 3, "leader") for p in range(5)
    ]
    assert all(f["isr"] == [1, 2] and f["isr_log_end_offsets"] == [0, -1] for f in facts)


def test_a_new_empty_partitions_first_leadership_writes_nothing(tmp_path: Path) -> None:
    events = RecordingEventLog("b1")
    replicas = ReplicaManager(
        1, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), events, _no_overrides
    )
    replicas.become_leader_or_follower([_state(p, 1, 0) for p in range(3)], [])
    assert not [e for e in events.events if e["kind"] == EventKind.LEADERSHIPS_STARTED]
