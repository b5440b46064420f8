"""Reading a run directory into `RunInputs`, and writing its `verdict.json`. File I/O on the
calling thread; the invariants themselves never touch files.

What is read from `<run-dir>`:

- `events/<node>.jsonl`: every node's event log, through `eventlog.read_numbered_events`
  (torn lines skipped, line numbers kept, a round's columns expanded into its partitions'
  facts, each with the round's line; a round that does not expand is a `RunDirError`).
  Every line must carry a schema version the testbed reads and the node named by its
  file. Its `ts` is put on the host's time line when `config.json` holds the run's clock
  anchor (`rundir.host_time`).
- the workload history: `history.jsonl` and every `history/<process>.jsonl`, merged by
  `rundir.history.read_history`; none of them: no workload.
- `snapshots.jsonl` (optional): one `ClusterSnapshot.to_json()` object per line.
- `audit.json` (optional): the end-of-run replica audit (`rundir.audit.read_audit`).
- `traces/*.jsonl` (optional): the records of the `request` fault's proxy among the
  faults' traces (those with a `step` and a `kind`), each tagged with its file's name.
- `faults.jsonl` (optional): when, and on which containers, each fault that did more
  than take broker processes away held (`rundir.disturbances`).

Errors: `RunDirError` (a `ValueError`) for a missing directory, a bad event or snapshot
line, an unreadable `audit.json`; `rundir.history.HistoryFormatError` (a `RunDirError`
too) for a bad history line. Nothing is judged then.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from eventlog import EventDecodeError, read_numbered_events
from eventlog.jsonlines import numbered_json_lines
from rundir.audit import ReplicaReport, read_audit
from rundir.disturbances import disturbances_of
from rundir.errors import RunDirError
from rundir.events import Event, EventFormatError
from rundir.history import (
    HistoryOp,
    decode_history_file,
    history_files,
    merged_history,
    read_history,
)
from rundir.history_stream import HistoryFiles, scan_history_file
from rundir.host_time import ClockAnchor, on_host_time
from rundir.invariants.convergence import ClusterSnapshot
from rundir.invariants.judge import RunInputs
from rundir.layout import RunDir
from rundir.results import RunVerdict

__all__ = [
    "VERDICT_FILE",
    "RunDirError",
    "RunLines",
    "RunSettings",
    "audit_of",
    "clock_anchor",
    "events_of",
    "history_by_file",
    "load_events",
    "load_history",
    "load_run",
    "load_snapshots",
    "read_lines",
    "request_records_of",
    "run_inputs",
    "snapshots_of",
    "write_verdict",
]

VERDICT_FILE = RunDir(Path(".")).verdict.name


@dataclass(frozen=True)
class RunLines:
    """Every complete line of a run directory's files that the invariants read, decoded
    from JSON but not yet checked against its schema: the events (node -> numbered values,
    as `eventlog.read_numbered_events`), the history files (path -> lines and values, as
    `eventlog.jsonlines.read_json_lines`) and the snapshots (numbered lines and values).
    A reader that needs the raw lines too (the PySpark pipeline's figures) reads the files
    once this way and decodes them with `run_inputs`."""

    run_dir: Path
    events: dict[str, list[tuple[int, dict[str, Any]]]]
    history: dict[Path, list[tuple[str, object]]]
    snapshots: list[tuple[int, str, object]]


def read_lines(run_dir: Path, *, events_required: bool = True) -> RunLines:
    """The lines of `run_dir` (see `RunLines`); `RunDirError` when there is no run
    directory, or no events/ directory unless not `events_required` (then it has none)."""
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory")
    has_events = events_required or RunDir(run_dir).events.is_dir()
    return RunLines(
        run_dir=run_dir,
        events=_event_lines(run_dir) if has_events else {},
        history={p: _lines_of(p) for p in _history_paths(run_dir)},
        snapshots=numbered_json_lines(RunDir(run_dir).snapshots),
    )


def _lines_of(path: Path) -> list[tuple[str, object]]:
    """`list(read_json_lines(path))`, without its generators' cost per line."""
    return [(line, value) for _, line, value in numbered_json_lines(path)]


def _event_lines(run_dir: Path) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Every node's numbered event lines, on the host's time line when the run recorded
    its clock anchor (`rundir.host_time`)."""
    events_dir = RunDir(run_dir).events
    if not events_dir.is_dir():
        raise RunDirError(f"{run_dir}: no events/ directory")
    anchor = clock_anchor(run_dir)
    lines = {}
    for path in sorted(events_dir.glob("*.jsonl")):
        try:
            lines[path.stem] = on_host_time(read_numbered_events(path), anchor)
        except EventDecodeError as exc:  # a round whose columns do not expand
            raise RunDirError(f"{path}: {exc}") from None
    return lines


def clock_anchor(run_dir: Path) -> ClockAnchor | None:
    """The clock anchor of the run's `config.json`; None when it is missing or does not
    read (the rejudging names a broken config itself)."""
    try:
        found = json.loads(RunDir(run_dir).config.read_text())
    except (OSError, ValueError):
        return None
    return ClockAnchor.from_config(found) if isinstance(found, dict) else None


def _history_paths(run_dir: Path) -> list[Path]:
    paths = [run_dir / "history.jsonl"] if (run_dir / "history.jsonl").exists() else []
    return paths + history_files(RunDir(run_dir).history)


def events_of(lines: RunLines) -> dict[str, tuple[Event, ...]]:
    """Every node's events in log order, keyed by node name (the file's stem)."""
    logs: dict[str, tuple[Event, ...]] = {}
    for node, records in lines.events.items():
        path = RunDir(lines.run_dir).events / f"{node}.jsonl"
        events = []
        for number, record in records:
            try:
                event = Event.from_record(record, number)
            except EventFormatError as exc:
                raise RunDirError(f"{path}: {exc}") from None
            if event.node != node:
                raise RunDirError(f"{path}: line {number} is from node {event.node!r}")
            events.append(event)
        logs[node] = tuple(events)
    return logs


def snapshots_of(lines: RunLines) -> tuple[ClusterSnapshot, ...]:
    """The cluster snapshots of `snapshots.jsonl` in file order; none when it is missing."""
    path = RunDir(lines.run_dir).snapshots
    snapshots = []
    for number, _, record in lines.snapshots:
        if not isinstance(record, dict):
            raise RunDirError(f"{path}: line {number} is not a JSON object")
        try:
            snapshots.append(ClusterSnapshot.from_json(record))
        except ValueError as exc:
            raise RunDirError(f"{path}: line {number}: {exc}") from None
    return tuple(snapshots)


def load_events(run_dir: Path) -> dict[str, tuple[Event, ...]]:
    """Every node's events in log order, keyed by node name (the file's stem)."""
    return events_of(RunLines(run_dir, _event_lines(run_dir), {}, []))


def load_history(run_dir: Path) -> tuple[HistoryOp, ...] | None:
    """The workload history, or None when the run has none."""
    paths = _history_paths(run_dir)
    return tuple(read_history(paths)) if paths else None


def stream_run_history(run_dir: Path) -> HistoryFiles | None:
    """The workload history kept as its files, each read through once here (schema,
    order: `rundir.history.HistoryFormatError` when a line breaks it) and read again by
    whoever iterates it; None when the run has none."""
    paths = _history_paths(run_dir)
    if not paths:
        return None
    scans = [scan_history_file(path) for path in paths]
    ops = sum(scan.ops for scan in scans)
    return HistoryFiles(tuple(paths), ops, all(scan.ordered for scan in scans))


def load_snapshots(run_dir: Path) -> tuple[ClusterSnapshot, ...]:
    """The cluster snapshots of `snapshots.jsonl` in file order; none when it is missing."""
    lines = RunLines(run_dir, {}, {}, numbered_json_lines(RunDir(run_dir).snapshots))
    return snapshots_of(lines)


class RunSettings(TypedDict, total=False):
    """The scenario's settings of a judging (see `RunInputs`)."""

    unclean_leader_election: bool
    acknowledged_loss_allowed: str | None
    convergence_bound_ms: int | None
    also: frozenset[str]
    since_ms: int
    topics: tuple[str, ...]


def history_by_file(lines: RunLines) -> dict[Path, list[HistoryOp]]:
    """Each history file's operations in file order (`rundir.history.HistoryFormatError`
    when a line breaks the schema), for a reader that needs them besides the judging:
    `run_inputs(lines, decoded=...)` then does not decode them again."""
    return {path: decode_history_file(path, records) for path, records in lines.history.items()}


def run_inputs(
    lines: RunLines,
    decoded: Mapping[Path, Sequence[HistoryOp]] | None = None,
    **settings: Unpack[RunSettings],
) -> RunInputs:
    """Everything `judge` needs from the lines of a run directory, with the scenario's
    settings (see `RunInputs`); the history from `decoded` when given (`history_by_file`
    of the same lines)."""
    files = history_by_file(lines) if decoded is None else decoded
    return RunInputs(
        events=events_of(lines),
        history=tuple(merged_history(files.values())) if lines.history else None,
        snapshots=snapshots_of(lines),
        audit=audit_of(lines.run_dir),
        request_records=request_records_of(lines.run_dir),
        disturbances=disturbances_of(lines.run_dir),
        **settings,
    )


def request_records_of(run_dir: Path) -> tuple[dict[str, Any], ...] | None:
    """The `request` fault's proxy records in `traces/` (file by file, in line order),
    each with `trace`, its file's name; None when the run has no traces."""
    traces = RunDir(run_dir).traces
    if not traces.is_dir():
        return None
    records = []
    for path in sorted(traces.glob("*.jsonl")):
        for _, _, value in numbered_json_lines(path):
            if isinstance(value, dict) and "step" in value and "kind" in value:
                records.append({**value, "trace": f"traces/{path.name}"})
    return tuple(records)


def audit_of(run_dir: Path) -> tuple[ReplicaReport, ...] | None:
    """The replica rows of the run's `audit.json`, None when it has none."""
    path = RunDir(run_dir).audit
    return tuple(read_audit(path)) if path.exists() else None


def load_run(run_dir: Path, **settings: Unpack[RunSettings]) -> RunInputs:
    """Everything `judge` needs from `run_dir`, with the scenario's settings (see
    `RunInputs`)."""
    return run_inputs(read_lines(run_dir), **settings)


def write_verdict(run_dir: Path, verdict: RunVerdict) -> Path:
    """Write `verdict.json` (indented JSON) into `run_dir` and return its path."""
    path = RunDir(run_dir).verdict
    path.write_text(json.dumps(verdict.to_json(), indent=2, sort_keys=True) + "\n")
    return path
