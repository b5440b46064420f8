"""`stale_requests_fenced` over the request fault's proxy records: a late copy whose stale
partitions the broker all fenced passes, one it obeyed is named with its witness, and a
run without a late copy is not judged; the reader finds the records among the traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rundir.invariants.judge import SCENARIO_CHECKS, RunInputs
from rundir.invariants.names import STALE_REQUESTS_FENCED
from rundir.invariants.stale_requests import stale_requests_fenced
from rundir.reader import request_records_of


def late(unfenced: list[list[Any]], stale: list[list[Any]] | None = None) -> dict[str, Any]:
    stale = stale if stale is not None else [["t", 0, 4], ["t", 1, 2]]
    return {
        "step": "delivered-late",
        "kind": "LeaderAndIsr",
        "controller_epoch": 3,
        "ts_ms": 1000,
        "stale": stale,
        "fenced": [[t, p, "STALE_CONTROLLER_EPOCH"] for t, p, _ in stale if [t, p] not in
                   [u[:2] for u in unfenced]],
        "unfenced": unfenced,
        "trace": "traces/f2.jsonl",
    }  # fmt: skip


def test_every_stale_partition_fenced_holds() -> None:
    result = stale_requests_fenced([{"step": "held", "kind": "LeaderAndIsr"}, late([])])
    assert result.ok
    assert result.judged
    assert result.checked == 2
    assert "2 of 2 stale partitions fenced" in result.note


def test_a_stale_partition_obeyed_is_named_with_the_proxys_record() -> None:
    result = stale_requests_fenced([late([["t", 1, 2]])])
    assert not result.ok
    (violation,) = result.violations
    assert violation.subject == "t-1"
    assert "controller epoch 3" in violation.explanation
    assert "leader epoch 2" in violation.explanation
    assert "traces/f2.jsonl" in violation.explanation


def test_without_a_late_copy_it_is_not_judged() -> None:
    assert not stale_requests_fenced(None).judged
    assert not stale_requests_fenced([{"step": "dropped", "kind": "StopReplica"}]).judged


def test_scenarios_reach_it_by_name() -> None:
    inputs = RunInputs(events={}, request_records=(late([["t", 0, 4]]),))
    assert not SCENARIO_CHECKS[STALE_REQUESTS_FENCED](inputs).ok


def test_the_reader_takes_the_proxy_records_from_the_traces(tmp_path: Path) -> None:
    assert request_records_of(tmp_path) is None
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "f1.jsonl").write_text(json.dumps({"spell": 1, "leader": "zk1"}) + "\n")
    record = {"step": "delivered-again", "kind": "LeaderAndIsr", "stale": []}
    (traces / "f2.jsonl").write_text(json.dumps(record) + "\n{torn")
    assert request_records_of(tmp_path) == ({**record, "trace": "traces/f2.jsonl"},)
