"""Synthetic runs at scale: as many records as asked for, counted as written, runs the
chaos engine judges sound, and failovers whose live brokers all applied the new epoch."""

from __future__ import annotations

import json
from pathlib import Path

from bench.pipeline.synthetic import SCENARIOS, write_runs
from pipeline.metadata import metadata_current
from pipeline.runs import discover
from pipeline.testing import metadata_rows


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def test_the_runs_hold_the_records_counted_and_are_judged_sound(tmp_path: Path) -> None:
    seen: list[int] = []
    made = write_runs(tmp_path, 20_000, progress=lambda m: seen.append(m.total))
    assert made.total >= 20_000
    assert seen == sorted(seen)
    assert seen[-1] == made.total
    runs = [Path(r.path) for r in discover([tmp_path]).runs]
    assert len(runs) == made.runs >= len(SCENARIOS) - 1
    assert made.records["events"] == _lines([p for r in runs for p in (r / "events").glob("*")])
    assert made.records["history"] == _lines([p for r in runs for p in (r / "history").glob("*")])
    assert made.records["faults"] == _lines([r / "faults.jsonl" for r in runs])
    assert made.records["snapshots"] == _lines([r / "snapshots.jsonl" for r in runs])
    for run in runs:
        verdict = json.loads((run / "verdict.json").read_text())
        assert verdict["ok"], (run.name, verdict["invariants"])


def test_every_failover_updates_every_live_broker(tmp_path: Path) -> None:
    made = write_runs(tmp_path, 5_000, seed=3)
    for run in sorted(p for p in made.root.iterdir()):
        current = metadata_current(metadata_rows(run))
        assert len(current) >= 1
        assert (current["live_brokers"] >= 2).all()
        assert (current["brokers_updated"] == current["live_brokers"]).all()
        assert current["metadata_ms"].notna().all()
