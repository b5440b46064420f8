"""A run's coverage from hand-made event logs: event kinds, state machine moves from and
to, refused transitions, fencing by error, elections by strategy, request errors,
resignations, ISR writes, sessions and parked fetchers by why; only events since the
run's start count, the earlier ones give the states the run's moves start from;
coverage.json is written, read back, and computed for a run recorded without one."""

from __future__ import annotations

import json
from pathlib import Path

from eventlog import (
    ControllerElected,
    ControllerResigned,
    ControlResponseReceived,
    FetcherParked,
    InvalidStateTransition,
    IsrUpdateFailed,
    PartitionFenced,
    PartitionStateChange,
    ReplicaStateChange,
    RequestFailed,
    RequestRejected,
    ZkSessionState,
)
from rundir.coverage import (
    COVERAGE_VERSION,
    coverage_of,
    read_coverage,
    run_coverage,
    write_coverage,
)
from rundir.invariants.testing import EventLogBuilder
from rundir.layout import RunDir


def _elected(epoch: int = 1) -> ControllerElected:
    return ControllerElected(
        controller_id=1, controller_epoch=epoch, epoch_zk_version=epoch, epoch_zxid=None
    )


def _partitions(target: str, *topics: str) -> PartitionStateChange:
    return PartitionStateChange(target=target, partitions=3, failed=0, topics=list(topics))


def _replicas(broker: int, target: str) -> ReplicaStateChange:
    return ReplicaStateChange(broker_id=broker, target=target, replicas=2, failed=0)


def test_partition_moves_start_from_the_topics_last_target_since_the_election() -> None:
    logs = EventLogBuilder()
    logs.emit("broker1", _elected())
    logs.emit("broker1", _partitions("NewPartition", "a"))
    logs.emit("broker1", _partitions("OnlinePartition", "a", "b"))
    logs.emit("broker1", _partitions("OfflinePartition", "a"))
    logs.emit("broker1", _elected(2))
    logs.emit("broker1", _partitions("OnlinePartition", "a"))
    reached = coverage_of(logs.logs())
    assert {b for b in reached if b.startswith("partition:")} == {
        "partition:-->NewPartition",
        "partition:NewPartition->OnlinePartition",
        "partition:-->OnlinePartition",
        "partition:OnlinePartition->OfflinePartition",
    }


def test_replica_moves_are_followed_per_broker() -> None:
    logs = EventLogBuilder()
    logs.emit("broker2", _replicas(1, "OnlineReplica"))
    logs.emit("broker2", _replicas(3, "OfflineReplica"))
    logs.emit("broker2", _replicas(1, "OfflineReplica"))
    reached = coverage_of(logs.logs())
    assert {b for b in reached if b.startswith("replica:")} == {
        "replica:-->OnlineReplica",
        "replica:-->OfflineReplica",
        "replica:OnlineReplica->OfflineReplica",
    }


def test_fencing_errors_elections_and_resignations_are_named_without_numbers() -> None:
    logs = EventLogBuilder()
    logs.emit(
        "broker2",
        RequestRejected(
            api="LeaderAndIsr",
            error="STALE_CONTROLLER_EPOCH",
            error_code=11,
            controller_id=1,
            controller_epoch=3,
            request_broker_epoch=10,
            broker_epoch=10,
            highest_controller_epoch=4,
        ),
    )
    logs.emit(
        "broker3",
        PartitionFenced(
            api="StopReplica",
            controller_id=1,
            controller_epoch=4,
            count=2,
            errors={"FENCED_LEADER_EPOCH": 2},
            sample=[],
        ),
    )
    logs.emit(
        "broker1",
        ControlResponseReceived(
            api="UpdateMetadata", broker_id=2, controller_epoch=4, error="NONE", partition_errors=0
        ),
    )
    logs.emit(
        "broker1",
        ControlResponseReceived(
            api="StopReplica",
            broker_id=2,
            controller_epoch=4,
            error="STALE_BROKER_EPOCH",
            partition_errors=0,
        ),
    )
    logs.emit(
        "broker2",
        RequestFailed(
            api="Produce", error="NOT_LEADER_OR_FOLLOWER", error_code=6, exception="E", message="m"
        ),
    )
    logs.leader_elected("broker1", 0, 2, 5, 3, strategy="preferred")
    logs.emit_partial("broker1", "leader_elected", strategy="offline", unclean=True)
    logs.emit(
        "broker1",
        InvalidStateTransition(
            machine="partition",
            topic="t",
            partition=0,
            current="NewPartition",
            target="OfflinePartition",
        ),
    )
    for reason in ("/controller names broker 3", "an epoch-fenced write failed: BadVersion 17"):
        logs.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=4, reason=reason))
    reached = coverage_of(logs.logs())
    assert {
        "fenced:LeaderAndIsr:STALE_CONTROLLER_EPOCH",
        "fenced:StopReplica:FENCED_LEADER_EPOCH",
        "response:StopReplica:STALE_BROKER_EPOCH",
        "error:Produce:NOT_LEADER_OR_FOLLOWER",
        "election:preferred",
        "election:offline:unclean",
        "refused:partition:NewPartition->OfflinePartition",
        "resigned:/controller names broker N",
        "resigned:an epoch-fenced write failed",
        "kind:controller_resigned",
        "kind:request_rejected",
    } <= reached
    assert "response:UpdateMetadata:NONE" not in reached


def test_only_events_since_the_start_count_but_earlier_ones_give_the_states() -> None:
    logs = EventLogBuilder()
    logs.emit("broker1", _elected())
    logs.emit("broker1", _partitions("OnlinePartition", "a"))
    logs.advance(1000)
    start = logs.emit("broker1", _partitions("OfflinePartition", "a")).ts
    reached = coverage_of(logs.logs(), since_ms=start)
    assert reached == {"kind:partition_state_change", "partition:OnlinePartition->OfflinePartition"}


def _write_run(root: Path, logs: EventLogBuilder, started_ms: int) -> Path:
    run = RunDir(root / "run").create()
    run.write_json(run.config, {"started_ms": started_ms})
    for node, events in logs.logs().items():
        lines = [
            json.dumps({"v": 1, "ts": e.ts, "node": node, "kind": e.kind, **e.fields})
            for e in events
        ]
        (run.events / f"{node}.jsonl").write_text("\n".join(lines) + "\n")
    return run.root


def test_a_run_recorded_without_coverage_gets_it_computed_and_written(tmp_path: Path) -> None:
    logs = EventLogBuilder()
    logs.emit("broker1", _elected())
    logs.advance(1000)
    start = logs.emit("broker1", _partitions("OnlinePartition", "a")).ts
    root = _write_run(tmp_path, logs, start)
    expected = {"kind:partition_state_change", "partition:-->OnlinePartition"}
    assert run_coverage(root) == expected
    assert read_coverage(root) == expected
    written = json.loads(RunDir(root).coverage.read_text())
    assert written == {
        "coverage_version": COVERAGE_VERSION,
        "since_ms": start,
        "behaviours": sorted(expected),
    }


def test_a_written_coverage_is_read_back_without_the_event_logs(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    write_coverage(root, {"kind:b", "kind:a"}, 7)
    assert read_coverage(root) == {"kind:a", "kind:b"}


def test_isr_writes_sessions_and_parked_fetchers_are_named_by_why() -> None:
    logs = EventLogBuilder()
    logs.emit("broker2", ZkSessionState(state="suspended", session_id=None))
    logs.emit(
        "broker3",
        FetcherParked(
            topic="t", partition=0, leader=1, leader_epoch=4, error="FENCED_LEADER_EPOCH"
        ),
    )
    logs.emit(
        "broker1",
        IsrUpdateFailed(
            topic="t", partition=0, reason="state znode changed (BADVERSION); waiting 3"
        ),
    )
    logs.emit_partial("broker1", "isr_changed", reason="shrink")
    assert {
        "session:suspended",
        "parked:FENCED_LEADER_EPOCH",
        "isr-update-failed:state znode changed",
        "isr:shrink",
    } <= coverage_of(logs.logs())
