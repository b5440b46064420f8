"""`rundir.disturbances`: which faults of a run's `faults.jsonl` did more than take broker
processes away, when they held, and whom they reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.disturbances import Disturbance, disturbances, disturbances_of
from rundir.reader import load_run


def _record(
    fault: str, kind: str, ts: int, *targets: str, phase: str = "start"
) -> dict[str, object]:
    return {"fault": fault, "kind": kind, "ts": ts, "targets": list(targets), "phase": phase}


def test_broker_processes_taken_away_disturb_nothing() -> None:
    records = [
        _record("step-0", "kill", 100, "broker2"),
        _record("step-0", "kill", 900, "broker2", phase="undone"),
        _record("step-1", "bounce", 200, "broker1", "broker3"),
        _record("step-2", "stop", 300, "broker3"),
    ]
    assert disturbances(records) == ()


@pytest.mark.parametrize(
    ("kind", "target"),
    [
        ("kill", "zk2"),  # a ZooKeeper server
        ("pause", "broker1"),
        ("session-expire", "broker2"),
        ("broker-isolate", "broker3"),
        ("latency", "broker1"),
        ("zk-lost-reply", "broker1"),
        ("clock", "broker2"),
    ],
)
def test_every_other_fault_disturbs_from_its_first_record_to_its_last(
    kind: str, target: str
) -> None:
    records = [
        _record("step-3", kind, 1_000, target),
        _record("step-0", "kill", 1_500, "broker1"),
        _record("step-3", kind, 1_200, target, phase="took_effect"),
        _record("step-3", kind, 4_000, target, phase="stop"),
        _record("step-3", kind, 4_300, target, phase="undone"),
    ]
    assert disturbances(records) == (Disturbance(1_000, 4_300, frozenset({target})),)


def test_a_fault_on_brokers_and_a_server_at_once_disturbs() -> None:
    (found,) = disturbances([_record("step-1", "kill", 5, "broker1", "zk1")])
    assert (found.start_ms, found.end_ms) == (5, 5)
    assert found.reaches(["broker3"])  # through ZooKeeper


def test_a_disturbance_reaches_its_targets_or_everyone_through_zookeeper() -> None:
    on_broker = Disturbance(0, 1, frozenset({"broker2"}))
    assert on_broker.reaches(["broker1", "broker2"])
    assert not on_broker.reaches(["broker1", "broker3"])
    assert Disturbance(0, 1, frozenset({"zk3"})).reaches(["broker1"])
    (unnamed,) = disturbances([{"fault": "step-0", "kind": "pause", "ts": 1}])
    assert unnamed.reaches(["broker1"])


@pytest.mark.parametrize(
    "record",
    [
        "a string",
        {"fault": "step-0", "kind": "kill", "targets": ["broker1"]},  # no ts
        {"fault": "step-0", "kind": "kill", "ts": True, "targets": ["broker1"]},
        {"kind": "kill", "ts": 4, "targets": ["broker1"]},  # no fault name
    ],
)
def test_a_record_that_does_not_read_disturbs_the_whole_run(record: object) -> None:
    (found,) = disturbances([_record("step-0", "kill", 1, "broker1"), record])
    assert found.start_ms == 0
    assert found.end_ms > 10**15
    assert found.reaches(["broker9"])


def test_meets_lengthens_the_span_by_its_tail() -> None:
    d = Disturbance(100, 200, frozenset({"broker1"}))
    assert d.meets(150, 160)
    assert d.meets(50, 100)
    assert not d.meets(201, 300)
    assert d.meets(201, 300, tail_ms=1)
    assert not d.meets(0, 99)


def test_a_run_without_faults_jsonl_has_unknown_faults(tmp_path: Path) -> None:
    assert disturbances_of(tmp_path) is None


def test_load_run_reads_the_spans_of_the_run(tmp_path: Path) -> None:
    (tmp_path / "events").mkdir()
    lines = [
        _record("step-0", "latency", 10, "broker1"),
        _record("step-0", "latency", 70, "broker1", phase="undone"),
        _record("step-1", "kill", 20, "broker2"),
    ]
    (tmp_path / "faults.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert load_run(tmp_path).disturbances == (Disturbance(10, 70, frozenset({"broker1"})),)
