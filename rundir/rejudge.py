"""Re-judging a recorded run directory without a cluster: every cluster invariant
(`rundir.invariants.judge`) and the history checker (`rundir.checker`) over what the run
left, with the scenario's settings read back from its `config.json`. What
`python -m chaos check` prints; the PySpark pipeline derives its judging settings with the
same `recorded_settings`. File I/O and pure judging on the calling thread.

A run that crashed is judged as far as it can be, never refused whole and never passed in
silence (`read_recorded`):

- a line that is not JSON (a torn write) is skipped and named, with its file and number;
- a missing `events/` (the run ended before copying the logs) or an event line breaking
  its envelope leaves every event invariant not judged;
- a history line of another schema version or breaking its schema leaves the history's
  checks not judged (judging the other files alone would invent anomalies);
- a bad `snapshots.jsonl` line leaves convergence not judged;
- an unreadable `audit.json` leaves the invariants over the replica audit not judged (a
  run without one, as before the audit existed, leaves them not judged too, but is
  complete);
- a missing history, a missing final read, a missing or half-written `verdict.json` are
  named as the run's incompleteness;
- an invariant that `config.json` names but this testbed does not know is not judged.

Each of these is a violation of the pseudo-invariant `run_dir_complete` (torn lines only
a note there: copying a live node's log can cut its last line), and the invariants that
could not be judged say why in their note. A run directory that is not one at all, or of
another `run_dir_version`, is refused: `RunDirError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventlog import EventDecodeError, expand_numbered
from eventlog.jsonlines import numbered_json_lines
from rundir.audit import ReplicaReport
from rundir.errors import RunDirError
from rundir.events import EventLogs
from rundir.history import FINAL_READ_PROCESS
from rundir.history_stream import HistoryFiles, scan_history_file
from rundir.host_time import on_host_time
from rundir.invariants.convergence import ClusterSnapshot
from rundir.invariants.judge import SCENARIO_CHECKS, RunInputs, judge
from rundir.invariants.names import (
    ACKNOWLEDGED_KEPT,
    ACKNOWLEDGED_WRITES,
    CONVERGES_AFTER_HEAL,
    LOG_MATCHING,
    REGISTRATION_SERVED,
    STRONG_ISR,
    WEAK_ISR,
)
from rundir.layout import RunDir, check_version
from rundir.reader import (
    RunLines,
    RunSettings,
    audit_of,
    clock_anchor,
    events_of,
    snapshots_of,
)
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = [
    "ACKNOWLEDGED_LOSS_ALLOWED",
    "RUN_DIR_COMPLETE",
    "Recorded",
    "finished_run_completeness",
    "read_recorded",
    "recorded_settings",
    "settings_of",
]

#: The pseudo-invariant naming what a run directory lacks or could not be read.
RUN_DIR_COMPLETE = "run_dir_complete"
#: The `config.json` field saying why the run may lose acknowledged writes (a power loss
#: under a flush policy that does not fsync every message), or null.
ACKNOWLEDGED_LOSS_ALLOWED = "acknowledged_loss_allowed"


def recorded_settings(
    *,
    unclean_leader_election: bool,
    acknowledged_loss_allowed: str | None = None,
    convergence_bound_s: float | None,
    invariants: Sequence[str],
    started_ms: int,
    topic: str,
) -> RunSettings:
    """The settings a run is judged with, from what its `config.json` records: the
    scenario-specific invariants it names, events since its start, its own topic."""
    return RunSettings(
        unclean_leader_election=unclean_leader_election,
        acknowledged_loss_allowed=acknowledged_loss_allowed,
        convergence_bound_ms=None
        if convergence_bound_s is None
        else int(convergence_bound_s * 1000),
        also=frozenset(invariants) & SCENARIO_CHECKS.keys(),
        since_ms=started_ms,
        topics=(topic,),
    )


def settings_of(config: Mapping[str, Any], where: Path) -> RunSettings:
    """`recorded_settings` of a version-checked `config.json`; `RunDirError` when a field
    is missing or of the wrong type. A run allowed to lose acknowledged writes (unclean
    leader election, or `acknowledged_loss_allowed`) is judged with those losses
    allowed, the verdict naming why."""
    try:
        bound = config.get("convergence_bound_s")
        workload = config.get("workload") or {}
        loss = config.get(ACKNOWLEDGED_LOSS_ALLOWED)
        return recorded_settings(
            unclean_leader_election=bool(workload.get("unclean_leader_election", False)),
            acknowledged_loss_allowed=str(loss) if loss else None,
            convergence_bound_s=None if bound is None else float(bound),
            invariants=[str(n) for n in config.get("invariants") or ()],
            started_ms=int(config["started_ms"]),
            topic=str(config["topic"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RunDirError(f"{where}: bad or missing field: {exc}") from None


@dataclass(frozen=True, slots=True)
class Recorded:
    """What could be read of a run directory: the invariants' inputs, what is missing or
    unreadable (`problems`, each a violation of `run_dir_complete`; `torn`, skipped lines),
    and which inputs could not be read, each with the reason (`unjudged`: `events`,
    `history`, `final_read`, `snapshots`, `audit`). `unreadable` is True when a file could not be
    decoded at all (another history version, a line breaking its schema)."""

    run_dir: Path
    inputs: RunInputs
    problems: tuple[Violation, ...] = ()
    torn: tuple[str, ...] = ()
    unjudged: Mapping[str, str] | None = None
    unreadable: bool = False
    #: The invariants `config.json` names; one this testbed does not know is not judged.
    named: tuple[str, ...] = ()

    def verdict(self) -> RunVerdict:
        """Every invariant's result, `run_dir_complete` first; an invariant over inputs
        that could not be read is `not judged`, with the reason."""
        unjudged = dict(self.unjudged or {})
        results = [self.completeness()]
        for result in judge(self.inputs).results:
            reason = _unjudged_reason(result.name, unjudged)
            results.append(
                result
                if reason is None
                else InvariantResult(result.name, note=f"not judged: {reason}", judged=False)
            )
        known = {r.name for r in results}
        results.extend(
            InvariantResult(
                name, note="not judged: this testbed has no such invariant", judged=False
            )
            for name in self.named
            if name not in known
        )
        return RunVerdict(tuple(results))

    def completeness(self) -> InvariantResult:
        """`run_dir_complete`: one violation per missing or unreadable part; torn lines
        in the note."""
        note = f"torn lines skipped: {', '.join(self.torn)}" if self.torn else ""
        return InvariantResult(RUN_DIR_COMPLETE, self.problems, checked=1, note=note)


def _unjudged_reason(name: str, unjudged: Mapping[str, str]) -> str | None:
    """Why invariant `name` cannot be judged from what was read (None: it can)."""
    if name == CONVERGES_AFTER_HEAL:
        return unjudged.get("snapshots")
    if name == ACKNOWLEDGED_WRITES:
        return unjudged.get("history") or unjudged.get("final_read")
    if name == LOG_MATCHING:
        return unjudged.get("audit")
    if name in (WEAK_ISR, STRONG_ISR):
        return unjudged.get("audit") or unjudged.get("events")
    if name in (ACKNOWLEDGED_KEPT, REGISTRATION_SERVED):
        return unjudged.get("events") or unjudged.get("history")
    return unjudged.get("events")


def read_recorded(path: Path) -> Recorded:
    """Read the run directory `path` as far as it can be read (see the module docstring);
    `RunDirError` (or its `RunDirVersionError`) when it is not a run directory of this
    version."""
    run = RunDir(path)
    if not path.is_dir():
        raise RunDirError(f"{path}: not a directory")
    if not run.config.exists():
        raise RunDirError(f"{path}: not a run directory (no config.json)")
    try:
        config = run.read_json(run.config)
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{run.config}: unreadable: {exc}") from None
    check_version(config, path)
    settings = settings_of(config, run.config)
    reading = _Reading(run)
    events = reading.events()
    history = reading.history()
    snapshots = reading.snapshots()
    audit = reading.audit()
    reading.verdict_file()
    return Recorded(
        path,
        RunInputs(events=events, history=history, snapshots=snapshots, audit=audit, **settings),
        tuple(reading.problems),
        tuple(reading.torn),
        dict(reading.unjudged),
        reading.unreadable,
        tuple(str(n) for n in config.get("invariants") or ()),
    )


def finished_run_completeness(path: Path) -> InvariantResult:
    """`run_dir_complete` of a run that has just finished, before its verdict is written:
    the event logs copied, the history readable and holding a completed final read (what
    `Recorded.completeness` names of those parts). A live run judged with acknowledged
    losses allowed would otherwise pass with a final read that never completed, which
    `python -m chaos check` then calls incomplete."""
    reading = _Reading(RunDir(path))
    if not (reading.run.events.is_dir() and any(reading.run.events.glob("*.jsonl"))):
        reading.problems.append(
            Violation("events/", "is missing or empty (no event log was copied)")
        )
    reading.history()
    return InvariantResult(RUN_DIR_COMPLETE, tuple(reading.problems), checked=1)


class _Reading:
    """One tolerant reading of a run directory, collecting what went wrong."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.problems: list[Violation] = []
        self.torn: list[str] = []
        self.unjudged: dict[str, str] = {}
        self.unreadable = False

    def _lines(self, path: Path) -> list[tuple[int, str, object]]:
        """The file's JSON lines; each skipped line is named in `torn`."""
        lines = numbered_json_lines(path)
        total = _line_count(path)
        kept = {number for number, _, _ in lines}
        name = path.relative_to(self.run.root)
        self.torn.extend(f"{name}:{n}" for n in range(1, total + 1) if n not in kept)
        return lines

    def _objects(self, path: Path) -> list[tuple[int, dict[str, Any]]]:
        """The file's JSON objects; a line that is JSON but no object is named in `torn`
        too (as `eventlog.read_numbered_events` skips it)."""
        objects = []
        for number, _, value in self._lines(path):
            if isinstance(value, dict):
                objects.append((number, value))
            else:
                self.torn.append(f"{path.relative_to(self.run.root)}:{number}")
        return objects

    def _missing(self, part: str, subject: str, why: str) -> None:
        self.problems.append(Violation(subject, why))
        self.unjudged[part] = f"{subject} {why}"

    def events(self) -> EventLogs:
        paths = sorted(self.run.events.glob("*.jsonl")) if self.run.events.is_dir() else []
        if not paths:
            self._missing("events", "events/", "is missing or empty (no event log was copied)")
            return {}
        anchor = clock_anchor(self.run.root)
        try:
            records = {p.stem: on_host_time(_facts(p, self._objects(p)), anchor) for p in paths}
            return events_of(RunLines(self.run.root, records, {}, []))
        except RunDirError as exc:
            self._unreadable("events", "events/", str(exc))
            return {}

    def history(self) -> HistoryFiles | None:
        """The history as its files, each read through once here (torn lines, schema,
        order) and streamed again by whoever judges it: none of it is held."""
        root = self.run.root
        paths = [root / "history.jsonl"] if (root / "history.jsonl").exists() else []
        paths += sorted(self.run.history.glob("*.jsonl")) if self.run.history.is_dir() else []
        if not paths:
            self._missing("history", "history/", "is missing or empty (no workload history)")
            return None
        scans = []
        try:
            for path in paths:
                scans.append(scan_history_file(path))
                self.torn.extend(f"{path.relative_to(root)}:{n}" for n in scans[-1].torn)
        except RunDirError as exc:
            self._unreadable("history", "history/", str(exc))
            return None
        if not any(FINAL_READ_PROCESS in scan.completed for scan in scans):
            self._missing(
                "final_read",
                f"history/{FINAL_READ_PROCESS}.jsonl",
                "holds no completed final read: the acknowledged writes cannot be judged",
            )
        ops = sum(scan.ops for scan in scans)
        return HistoryFiles(tuple(paths), ops, all(scan.ordered for scan in scans))

    def snapshots(self) -> tuple[ClusterSnapshot, ...]:
        lines = RunLines(self.run.root, {}, {}, self._lines(self.run.snapshots))
        try:
            return snapshots_of(lines)
        except RunDirError as exc:
            self._unreadable("snapshots", "snapshots.jsonl", str(exc))
            return ()

    def audit(self) -> tuple[ReplicaReport, ...] | None:
        try:
            return audit_of(self.run.root)
        except RunDirError as exc:
            self._missing("audit", self.run.audit.name, f"could not be read: {exc}")
            return None

    def verdict_file(self) -> None:
        path = self.run.verdict
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.problems.append(Violation(path.name, "is missing: the run was not judged"))
        except (OSError, ValueError) as exc:
            self.problems.append(Violation(path.name, f"is half-written or unreadable: {exc}"))

    def _unreadable(self, part: str, subject: str, why: str) -> None:
        self.unreadable = True
        self._missing(part, subject, f"could not be read: {why}")


def _line_count(path: Path) -> int:
    """Lines in `path`, a last line without its newline counted too; 0 when missing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _facts(
    path: Path, objects: list[tuple[int, dict[str, Any]]]
) -> list[tuple[int, dict[str, Any]]]:
    """A file's objects with a round's columns expanded (`eventlog.expand_numbered`);
    `RunDirError` for a round that does not expand."""
    try:
        return expand_numbered(objects)
    except EventDecodeError as exc:
        raise RunDirError(f"{path}: {exc}") from None
