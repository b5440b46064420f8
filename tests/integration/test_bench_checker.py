"""`python -m bench.checker` end to end at a small size: both histories generated, every
phase run in its own process, one row per history with its floor, ratio and peaks, the
results written and the histories deleted. No cluster."""

from __future__ import annotations

import json
from pathlib import Path

from bench.checker.measure import MEASURE, main


def test_the_benchmark_reports_a_row_per_history_and_deletes_them(tmp_path: Path) -> None:
    out, results = tmp_path / "out", tmp_path / "results"
    argv = ["--operations", "20000", "--short-operations", "10000", "--partitions", "8"]
    assert main([*argv, "--out", str(out), "--results", str(results)]) == 0
    document = json.loads((out / "bench.json").read_text())
    rows = document["measures"]
    assert [r["measure"] for r in rows] == [MEASURE, MEASURE]
    assert [r["partitions"] for r in rows] == [8, 8]
    assert rows[0]["operations"] >= 20_000 > rows[1]["operations"] >= 10_000
    for row in rows:
        assert row["verdict_ok"] is True
        assert row["ratio"] > 0
        assert len(row["floor_runs_seconds"]) == 2
        assert row["checker_peak_kib"] > 0
    assert [p["phase"] for p in document["phases"]] == ["decode", "decode", "check"] * 2
    assert len((results / "latest.jsonl").read_text().splitlines()) == 2
    assert not (out / "histories").exists()
