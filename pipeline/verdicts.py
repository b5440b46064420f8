"""The verdicts: each run judged by the chaos engine's own invariants
(`rundir.invariants.judge`, through `pipeline.runs.judge_run`, from the run's lines as the
chaos engine reads them), and cross-checked against the runner's `verdict.json`. One run
per call, on the calling thread: an executor's Python worker in the report's per-run
pass (`pipeline.run_pass`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.runs import RunConfig, judge_run
from rundir.history import HistoryOp
from rundir.reader import RunDirError, RunLines

__all__ = ["VERDICT_KEYS", "verdict_row"]

#: The part of verdict.json that the invariants decide (the rest is the run's summary).
VERDICT_KEYS = ("ok", "not_judged", "invariants")
#: A violation's optional evidence that later checkers add (`ops` of a lost write): a
#: runner's verdict.json written before holds the same verdict without it.
_ADDED_EVIDENCE = ("ops",)


def _as_runner_wrote(decided: Any, runner: Mapping[str, Any]) -> Any:
    """`decided` without the evidence the runner's verdict lacks violation by violation
    (`_ADDED_EVIDENCE`), so that a run directory judged by an older checker still
    matches."""
    theirs = {r.get("name"): r for r in runner.get("invariants") or () if isinstance(r, dict)}
    invariants = []
    for result in decided.get("invariants") or ():
        old = (theirs.get(result["name"]) or {}).get("violations") or ()
        violations = []
        for i, ours in enumerate(result["violations"]):
            their = old[i] if i < len(old) and isinstance(old[i], dict) else None
            if their is not None:
                ours = {k: v for k, v in ours.items() if k not in _ADDED_EVIDENCE or k in their}
            violations.append(ours)
        invariants.append(result | {"violations": violations})
    return decided | {"invariants": invariants}


def _runner_verdict(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads((path / "verdict.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {k: document.get(k) for k in VERDICT_KEYS} if isinstance(document, dict) else None


def _unjudged(error: ValueError) -> dict[str, Any]:
    """The rest of a verdict row when `error` stopped the reading or the judging."""
    return {
        "ok": None,
        "violations": None,
        "violated": [],
        "not_judged": [],
        "recovery_ms": None,
        "verdict_json": None,
        "matches_runner": None,
        "error": f"{type(error).__name__}: {error}",
    }


def verdict_row(
    config: RunConfig,
    lines: RunLines | RunDirError | None = None,
    decoded: Mapping[Path, Sequence[HistoryOp]] | None = None,
) -> dict[str, Any]:
    """One run's row of `schemas.RUN_VERDICT`: the pipeline's verdict, whether it equals
    the runner's (None when the run has no readable verdict.json), or the error that
    stopped the judging. From the run's `lines` when they were read already (or the error
    that stopped the reading), else read here; `decoded`: their history's operations, when
    decoded already."""
    runner = _runner_verdict(Path(config.path))
    row: dict[str, Any] = {
        "run_id": config.run_id,
        "runner_ok": None if runner is None else bool(runner.get("ok")),
    }
    if isinstance(lines, RunDirError):
        return row | _unjudged(lines)
    try:
        verdict, recovery_ms = judge_run(config, lines, decoded)
    except ValueError as exc:
        return row | _unjudged(exc)
    document = verdict.to_json()
    decided = {k: document.get(k) for k in VERDICT_KEYS}
    return row | {
        "ok": verdict.ok,
        "violations": sum(len(r.violations) for r in verdict.results),
        "violated": [r.name for r in verdict.results if not r.ok],
        "not_judged": list(document["not_judged"]),
        "recovery_ms": recovery_ms,
        "verdict_json": json.dumps(document, sort_keys=True),
        "matches_runner": None
        if runner is None
        else runner == _as_runner_wrote(json.loads(json.dumps(decided)), runner),
        "error": None,
    }
