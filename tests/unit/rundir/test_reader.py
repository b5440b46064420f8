"""Reading a run directory: events through the event log reader (schema version checked,
line numbers kept), the workload history in either layout, snapshots, and verdict.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventlog import ControllerElected, EventLog, NodeStarted
from rundir.history import HistoryFormatError
from rundir.invariants import judge
from rundir.reader import (
    RunDirError,
    load_events,
    load_history,
    load_run,
    load_snapshots,
    write_verdict,
)
from rundir.testing import HistoryBuilder


def _run_dir(tmp_path: Path) -> Path:
    for broker, epoch in ((1, 3), (2, 3)):
        log = EventLog(tmp_path, f"broker{broker}")
        log.emit(NodeStarted(broker_id=broker, zk_connect="zk"))
        log.emit(
            ControllerElected(
                controller_id=broker, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
            )
        )
        log.close()
    return tmp_path


def _history(path: Path, *values: str) -> None:
    h = HistoryBuilder()
    for offset, value in enumerate(values):
        h.send("producer-0", 0, value, "ok", offset)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(op.to_json() + "\n" for op in h.ops))


def test_events_are_read_per_node_with_their_line_numbers(tmp_path: Path) -> None:
    logs = load_events(_run_dir(tmp_path))
    assert sorted(logs) == ["broker1", "broker2"]
    elected = logs["broker2"][1]
    assert (elected.node, elected.line, elected.kind) == ("broker2", 2, "controller_elected")
    assert elected.fields == {
        "controller_id": 2,
        "controller_epoch": 3,
        "epoch_zk_version": 0,
        "epoch_zxid": None,
    }


def test_a_run_read_from_disk_is_judged(tmp_path: Path) -> None:
    inputs = load_run(_run_dir(tmp_path), convergence_bound_ms=1000)
    verdict = judge(inputs)
    (violation,) = verdict.result("one_controller_per_epoch").violations
    assert [(e.node, e.line) for e in violation.events] == [("broker1", 2), ("broker2", 2)]
    path = write_verdict(tmp_path, verdict)
    assert json.loads(path.read_text()) == verdict.to_json()


def test_another_schema_version_is_refused_with_file_and_line(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    with open(run / "events" / "broker1.jsonl", "a") as f:
        f.write('{"v":99,"ts":1,"node":"broker1","kind":"node_started"}\n')
    with pytest.raises(RunDirError, match=r"broker1\.jsonl: line 3: event schema version 99"):
        load_events(run)


def test_a_line_from_another_node_is_refused(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    with open(run / "events" / "broker1.jsonl", "a") as f:
        f.write('{"v":1,"ts":1,"node":"broker7","kind":"node_started"}\n')
    with pytest.raises(RunDirError, match="line 3 is from node 'broker7'"):
        load_events(run)


def test_a_torn_line_is_skipped_but_counted(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    path = run / "events" / "broker1.jsonl"
    text = path.read_text().splitlines()
    path.write_text(text[0] + "\n" + '{"v":1,"ts"\n' + text[1] + "\n")
    assert [e.line for e in load_events(run)["broker1"]] == [1, 3]


def test_missing_directories_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not a run directory"):
        load_run(tmp_path / "nowhere")
    with pytest.raises(RunDirError, match="no events/ directory"):
        load_run(tmp_path)


def test_history_is_read_from_history_jsonl_and_the_history_directory(tmp_path: Path) -> None:
    assert load_history(tmp_path) is None
    _history(tmp_path / "history.jsonl", "a")
    _history(tmp_path / "history" / "producer-1.jsonl", "b")
    history = load_history(tmp_path)
    assert history is not None
    assert sorted(str(op.value) for op in history if op.type == "ok") == ["a", "b"]


def test_a_bad_history_line_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "history.jsonl").write_text('{"v":1,"type":"nope"}\n')
    with pytest.raises(HistoryFormatError, match="bad type"):
        load_history(tmp_path)


def test_snapshots_are_read_and_bad_ones_refused(tmp_path: Path) -> None:
    assert load_snapshots(tmp_path) == ()
    good = {
        "after_heal_ms": 5,
        "controller_id": 1,
        "controller_epoch": 2,
        "live_brokers": [1],
        "partitions": [],
    }
    (tmp_path / "snapshots.jsonl").write_text(json.dumps(good) + "\n[]\n")
    with pytest.raises(RunDirError, match="line 2 is not a JSON object"):
        load_snapshots(tmp_path)
    (tmp_path / "snapshots.jsonl").write_text(json.dumps(good) + "\n")
    (snapshot,) = load_snapshots(tmp_path)
    assert snapshot.controller_id == 1
    (tmp_path / "snapshots.jsonl").write_text('{"after_heal_ms": 5}\n')
    with pytest.raises(RunDirError, match="line 1: not a cluster snapshot"):
        load_snapshots(tmp_path)
