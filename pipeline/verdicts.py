"""The verdict job: each run judged by the chaos engine's own invariants
(`chaos.invariants.judge`, through `pipeline.runs.judge_run`), one run per row on the
executors' Python workers (`mapInPandas`), and cross-checked against the runner's
`verdict.json`. The job is built on the driver's thread; `judge_rows` runs in the workers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame

from pipeline import schemas
from pipeline.runs import RunConfig, judge_run

__all__ = ["VERDICT_KEYS", "judge_frame", "judge_rows", "verdict_row"]

#: The part of verdict.json that the invariants decide (the rest is the run's summary).
VERDICT_KEYS = ("ok", "not_judged", "invariants")


def _config(row: Mapping[str, Any]) -> RunConfig:
    return RunConfig(
        path=str(row["path"]),
        run_id=str(row["run_id"]),
        scenario=str(row["scenario"]),
        seed=None if pd.isna(row["seed"]) else int(row["seed"]),
        started_ms=int(row["started_ms"]),
        topic=str(row["topic"]),
        invariants=tuple(str(n) for n in row["invariants"]),
        convergence_bound_s=(
            None if pd.isna(row["convergence_bound_s"]) else float(row["convergence_bound_s"])
        ),
        unclean_leader_election=bool(row["unclean_leader_election"]),
    )


def _runner_verdict(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads((path / "verdict.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {k: document.get(k) for k in VERDICT_KEYS} if isinstance(document, dict) else None


def verdict_row(config: RunConfig) -> dict[str, Any]:
    """One run's row of `schemas.RUN_VERDICT`: the pipeline's verdict, whether it equals
    the runner's (None when the run has no readable verdict.json), or the error that
    stopped the judging."""
    runner = _runner_verdict(Path(config.path))
    row: dict[str, Any] = {
        "run_id": config.run_id,
        "runner_ok": None if runner is None else bool(runner.get("ok")),
    }
    try:
        verdict, recovery_ms = judge_run(config)
    except ValueError as exc:
        return row | {
            "ok": None,
            "violations": None,
            "violated": [],
            "not_judged": [],
            "recovery_ms": None,
            "verdict_json": None,
            "matches_runner": None,
            "error": f"{type(exc).__name__}: {exc}",
        }
    document = verdict.to_json()
    return row | {
        "ok": verdict.ok,
        "violations": sum(len(r.violations) for r in verdict.results),
        "violated": [r.name for r in verdict.results if not r.ok],
        "not_judged": list(document["not_judged"]),
        "recovery_ms": recovery_ms,
        "verdict_json": json.dumps(document, sort_keys=True),
        "matches_runner": None if runner is None else runner == json.loads(json.dumps(document)),
        "error": None,
    }


def judge_rows(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """`mapInPandas` body: one verdict row per run row (on an executor's Python worker)."""
    columns = [f.name for f in schemas.RUN_VERDICT.fields]
    for batch in batches:
        rows = [verdict_row(_config(r)) for r in batch.to_dict("records")]
        yield pd.DataFrame(rows, columns=columns)


def judge_frame(runs: DataFrame, partitions: int) -> DataFrame:
    """One verdict row per run of `runs` (the `RunFrames.runs` frame), the runs spread
    over `partitions` tasks."""
    return runs.repartition(max(1, partitions), "run_id").mapInPandas(
        judge_rows, schema=schemas.RUN_VERDICT
    )
