"""Reading a run directory into `RunInputs`, and writing its `verdict.json`. File I/O on the
calling thread; the invariants themselves never touch files.

What is read from `<run-dir>`:

- `events/<node>.jsonl`: every node's event log, through `eventlog.read_numbered_events`
  (torn lines skipped, line numbers kept). Every line must carry the supported schema
  version and the node named by its file.
- the workload history: `history.jsonl` and every `history/<process>.jsonl`, merged by
  `chaos.history.read_history`; none of them: no workload.
- `snapshots.jsonl` (optional): one `ClusterSnapshot.to_json()` object per line.

Errors: `RunDirError` (a `ValueError`) for a missing directory, a bad event or snapshot
line; `chaos.history.HistoryFormatError` for a bad history line. Nothing is judged then.
"""

from __future__ import annotations

import json
from pathlib import Path

from chaos.history import HistoryOp, history_files, read_history
from chaos.invariants.convergence import ClusterSnapshot
from chaos.invariants.events import Event, EventFormatError
from chaos.invariants.judge import RunInputs
from chaos.invariants.results import RunVerdict
from chaos.run_dir import RunDir
from eventlog import read_numbered_events
from eventlog.jsonlines import read_numbered_json_lines

__all__ = [
    "VERDICT_FILE",
    "RunDirError",
    "load_events",
    "load_history",
    "load_run",
    "load_snapshots",
    "write_verdict",
]

VERDICT_FILE = RunDir(Path(".")).verdict.name


class RunDirError(ValueError):
    """The run directory is missing or holds a line the invariants cannot read."""


def load_events(run_dir: Path) -> dict[str, tuple[Event, ...]]:
    """Every node's events in log order, keyed by node name (the file's stem)."""
    events_dir = RunDir(run_dir).events
    if not events_dir.is_dir():
        raise RunDirError(f"{run_dir}: no events/ directory")
    logs: dict[str, tuple[Event, ...]] = {}
    for path in sorted(events_dir.glob("*.jsonl")):
        events = []
        for number, record in read_numbered_events(path):
            try:
                event = Event.from_record(record, number)
            except EventFormatError as exc:
                raise RunDirError(f"{path}: {exc}") from None
            if event.node != path.stem:
                raise RunDirError(f"{path}: line {number} is from node {event.node!r}")
            events.append(event)
        logs[path.stem] = tuple(events)
    return logs


def load_history(run_dir: Path) -> tuple[HistoryOp, ...] | None:
    """The workload history, or None when the run has none."""
    paths = [run_dir / "history.jsonl"] if (run_dir / "history.jsonl").exists() else []
    paths += history_files(RunDir(run_dir).history)
    return tuple(read_history(paths)) if paths else None


def load_snapshots(run_dir: Path) -> tuple[ClusterSnapshot, ...]:
    """The cluster snapshots of `snapshots.jsonl` in file order; none when it is missing."""
    path = RunDir(run_dir).snapshots
    snapshots = []
    for number, _, record in read_numbered_json_lines(path):
        if not isinstance(record, dict):
            raise RunDirError(f"{path}: line {number} is not a JSON object")
        try:
            snapshots.append(ClusterSnapshot.from_json(record))
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number}: {exc}") from None
    return tuple(snapshots)


def load_run(
    run_dir: Path,
    *,
    unclean_leader_election: bool = False,
    convergence_bound_ms: int | None = None,
    also: frozenset[str] = frozenset(),
    since_ms: int = 0,
    topics: tuple[str, ...] = (),
) -> RunInputs:
    """Everything `judge` needs from `run_dir`, with the scenario's settings (see
    `RunInputs`)."""
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory")
    return RunInputs(
        events=load_events(run_dir),
        history=load_history(run_dir),
        snapshots=load_snapshots(run_dir),
        unclean_leader_election=unclean_leader_election,
        convergence_bound_ms=convergence_bound_ms,
        also=also,
        since_ms=since_ms,
        topics=topics,
    )


def write_verdict(run_dir: Path, verdict: RunVerdict) -> Path:
    """Write `verdict.json` (indented JSON) into `run_dir` and return its path."""
    path = RunDir(run_dir).verdict
    path.write_text(json.dumps(verdict.to_json(), indent=2, sort_keys=True) + "\n")
    return path
