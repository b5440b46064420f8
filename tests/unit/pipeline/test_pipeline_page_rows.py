"""A run's row for its pages keeps its events in time order, bounded: past the byte budget
only the events the timeline draws and those a witness names are kept, and the total
still counts them all; the operations kept are those a witness names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline import page_rows
from rundir.history import HistoryOp
from rundir.reader import RunLines


def _lines() -> RunLines:
    broker1 = [
        (i, {"v": 1, "ts": 1_000 + i, "node": "broker1", "kind": "request_accepted", "api": "x"})
        for i in range(1, 6)
    ]
    broker1.append((6, {"v": 1, "ts": 1_001, "node": "broker1", "kind": "leader_elected"}))
    broker2: list[tuple[int, Any]] = [
        (1, {"ts": 999, "kind": "node_started"}),
        (2, {"kind": "no time"}),
        (3, []),
    ]
    return RunLines(Path("/r"), {"broker1": broker1, "broker2": broker2}, {}, [])


def _verdict() -> str:
    violation = {
        "subject": "s",
        "explanation": "e",
        "events": [{"node": "broker1", "line": 5, "ts": 1_005, "kind": "request_accepted"}],
        "ops": ["p0#2"],
    }
    return json.dumps({"ok": False, "invariants": [{"name": "n", "violations": [violation]}]})


def _op(op_id: int) -> HistoryOp:
    return HistoryOp("ok", "send", "p0", 0, 1_010, "t", 0, 3, "v", None, op_id)


def test_past_the_budget_only_drawn_and_named_events_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(page_rows, "PAGE_EVENT_BYTES", 150)
    row = page_rows.page_row(
        "r", _verdict(), _lines(), [{"ts": 1}, "x"], {Path("h"): [_op(1), _op(2)]}
    )
    kept = orjson.loads(row["events_json"])
    assert [(e[0], e[1], e[3]) for e in kept] == [
        ("broker2", 1, "node_started"),
        ("broker1", 1, "request_accepted"),
        ("broker1", 6, "leader_elected"),
        ("broker1", 5, "request_accepted"),
    ]
    assert kept[1][4] == {"api": "x"}
    assert row["events_total"] == 7
    assert [op["op"] for op in orjson.loads(row["ops_json"])] == ["p0#2"]
    assert orjson.loads(row["faults_json"]) == [{"ts": 1}]


def test_within_the_budget_every_event_is_kept() -> None:
    row = page_rows.page_row("r", None, _lines(), [], None)
    assert len(orjson.loads(row["events_json"])) == row["events_total"] == 7
    assert orjson.loads(row["ops_json"]) == []


def test_a_witness_naming_the_final_read_keeps_its_operations_on_that_partition() -> None:
    violation = {"subject": "t-1", "explanation": "e", "events": [], "ops": ["final-read"]}
    verdict = json.dumps({"ok": False, "invariants": [{"name": "n", "violations": [violation]}]})
    final = [
        HistoryOp("ok", "poll", "final-read", 0, 1_020, "t", partition, 9, None, None, op_id)
        for op_id, partition in enumerate((0, 1, 1))
    ]
    row = page_rows.page_row("r", verdict, _lines(), [], {Path("h"): [_op(1), *final]})
    assert [op["op"] for op in orjson.loads(row["ops_json"])] == ["final-read#1", "final-read#2"]
