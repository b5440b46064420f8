"""Writing the files of a synthetic run directory as the chaos runner and the nodes write
them (docs/runs.md, version 1): event-log lines, JSON lines, `config.json`, the four
phases of a fault in `faults.jsonl`, and `verdict.json` judged by the chaos engine's own
`load_run` and `judge`. Shared by the test doubles (`pipeline.testing`) and the runs at
scale (`bench.pipeline.synthetic`). For tests and benchmarks only; the calling thread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eventlog import Event, event_record
from rundir.invariants import names
from rundir.invariants.judge import judge
from rundir.layout import RUN_DIR_VERSION, RunDir
from rundir.reader import load_run, write_verdict
from rundir.results import RunVerdict

__all__ = [
    "CONVERGENCE_BOUND_S",
    "INVARIANTS",
    "SESSION_TIMEOUT_MS",
    "event",
    "fault_phases",
    "write_config",
    "write_jsonl",
    "write_runner_verdict",
]

#: What the synthetic runs are judged by (the scenario checks are left out).
INVARIANTS = (
    names.ONE_CONTROLLER_PER_EPOCH,
    names.CONTROLLER_EPOCH_FENCING,
    names.BROKER_EPOCH_FENCING,
    names.ONE_LEADER_PER_LEADER_EPOCH,
    names.ACKNOWLEDGED_WRITES,
    names.CONVERGES_AFTER_HEAL,
)
CONVERGENCE_BOUND_S = 30
SESSION_TIMEOUT_MS = 6000


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """`records` as the JSON lines of `path`."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def event(ts: int, node: str, written: Event) -> dict[str, Any]:
    """The event-log line `node` writes for `written` at `ts`, as `EventLog` writes it."""
    return event_record(written, ts, node)


def write_config(
    run: RunDir, *, scenario: str, topic: str, started_ms: int, partitions: int, seed: int = 1
) -> None:
    """The run's `config.json` as the chaos runner writes it, judged by `INVARIANTS`."""
    run.write_json(
        run.config,
        {
            "run_dir_version": RUN_DIR_VERSION,
            "scenario": scenario,
            "seed": seed,
            "replay": False,
            "project": "synthetic",
            "topic": topic,
            "invariants": sorted(INVARIANTS),
            "convergence_bound_s": CONVERGENCE_BOUND_S,
            "session_timeout_ms": SESSION_TIMEOUT_MS,
            "started_ms": started_ms,
            "versions": {},
            "workload": {
                "partitions": partitions,
                "replication_factor": 3,
                "unclean_leader_election": False,
                "acks": -1,
            },
        },
    )


def fault_phases(
    fault: str, kind: str, target: str, start: int, effect_ms: int, stop: int, undo_ms: int
) -> list[dict[str, Any]]:
    """The four lines of faults.jsonl of one fault of `kind` on `target`."""
    common = {"fault": fault, "kind": kind, "targets": [target], "ok": True}
    return [
        {
            **common,
            "ts": start,
            "phase": "start",
            "detail": "started",
            "params": {"targets": [target]},
        },
        {
            **common,
            "ts": start + effect_ms,
            "phase": "took_effect",
            "detail": f"{target} {kind} took effect",
            "elapsed_ms": effect_ms,
        },
        {**common, "ts": stop, "phase": "stop", "detail": "stopped"},
        {
            **common,
            "ts": stop + undo_ms,
            "phase": "undone",
            "detail": f"{target} running",
            "elapsed_ms": undo_ms,
        },
    ]


def write_runner_verdict(
    run: RunDir, *, scenario: str, topic: str, started_ms: int, faults: int, seed: int = 1
) -> RunVerdict:
    """Judge the written run as the chaos runner does and write its `verdict.json`."""
    inputs = load_run(
        run.root,
        convergence_bound_ms=CONVERGENCE_BOUND_S * 1000,
        since_ms=started_ms,
        topics=(topic,),
    )
    verdict = RunVerdict(tuple(r for r in judge(inputs).results if r.name in INVARIANTS))
    write_verdict(run.root, verdict)
    document = run.read_json(run.verdict)
    document.update(scenario=scenario, seed=seed, run_id=run.root.name, faults=faults)
    run.write_json(run.verdict, document)
    return verdict
