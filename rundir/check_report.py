"""The re-judging of one recorded run directory as a report (`python -m chaos check`):
every invariant's verdict (`rundir.rejudge`) beside the history checker's own verdict,
class by class, as a text table or as JSON, and the exit code they decide. File I/O and
pure judging on the calling thread.

The JSON document::

    {"ok": bool,
     "invariants": [{"name", "ok", "violations": [...], "judged", "note"}, ...],
     "anomalies": {"<history checker class>": <violations>, ...},
     "allowed": ["<class the workload's configuration allows>", ...]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rundir.invariants.judge import history_verdict
from rundir.rejudge import read_recorded
from rundir.results import InvariantResult, RunVerdict

__all__ = ["EXIT_BROKEN", "EXIT_OK", "EXIT_UNREADABLE", "CheckReport", "check_run"]

EXIT_OK, EXIT_BROKEN, EXIT_UNREADABLE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class CheckReport:
    """One run re-judged: every invariant (`verdict`, `run_dir_complete` first), the
    history checker's verdict (`history`, None when there was no readable history), and
    whether a part of the run could not be decoded at all (`unreadable`). `loss_allowed`
    names why the run may lose acknowledged writes (unclean leader election, a power
    loss under a flush policy that does not fsync every message), or is None: when set,
    the history's anomalies are shown but fail nothing."""

    run_dir: Path
    verdict: RunVerdict
    history: RunVerdict | None
    unreadable: bool = False
    loss_allowed: str | None = None

    @property
    def binding(self) -> bool:
        """Whether the history's anomalies can fail the run."""
        return self.loss_allowed is None

    @property
    def ok(self) -> bool:
        """No invariant broken, and no history anomaly of a class that is not allowed."""
        if not self.verdict.ok:
            return False
        if self.history is None or not self.binding:
            return True
        return not self.history.unread and all(r.ok for r in self.history.results)

    @property
    def exit_code(self) -> int:
        """2 when a part of the run could not be read, else 0 when `ok`, else 1."""
        if self.unreadable:
            return EXIT_UNREADABLE
        return EXIT_OK if self.ok else EXIT_BROKEN

    def anomalies(self) -> dict[str, int]:
        """The history checker's violations per class, allowed ones included, as Jepsen's
        `error-types` counts them (empty without a history); `allowed` names the classes
        whose findings the workload's configuration permits."""
        counts: dict[str, int] = {}
        for result in () if self.history is None else self.history.results:
            counts[result.name] = counts.get(result.name, 0) + len(result.violations)
        return counts

    def allowed(self) -> list[str]:
        """The history checker's classes that the workload's configuration allows."""
        if self.history is None:
            return []
        return sorted({r.name for r in self.history.results if r.allowed and r.violations})

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (see the module docstring)."""
        return {
            "ok": self.ok,
            "invariants": [_entry(r) for r in self.verdict.results],
            "anomalies": self.anomalies(),
            "allowed": self.allowed(),
        }

    def table(self) -> str:
        """The verdict table, then the history checker's report, then the outcome."""
        parts = [f"run {self.run_dir}", self.verdict.table()]
        if self.history is None:
            parts.append("history checker: not judged (no readable workload history)")
        else:
            binding = (
                "" if self.binding else f" (allowed: {self.loss_allowed}; anomalies fail nothing)"
            )
            parts.append(f"history checker{binding}:\n{self.history.report()}")
        unjudged = [r.name for r in self.verdict.results if not r.judged]
        if unjudged:
            parts.append(f"not judged: {', '.join(unjudged)}")
        word = {EXIT_OK: "OK", EXIT_BROKEN: "BROKEN", EXIT_UNREADABLE: "UNREADABLE IN PART"}
        parts.append(f"check: {word[self.exit_code]}")
        return "\n".join(parts)


def _entry(result: InvariantResult) -> Mapping[str, Any]:
    return {
        "name": result.name,
        "ok": result.ok,
        "violations": [v.to_json() for v in result.violations],
        "judged": result.judged,
        "note": result.note,
    }


def check_run(path: Path) -> CheckReport:
    """Re-judge the run directory `path` (`rundir.rejudge.read_recorded`, whose
    `RunDirError` it raises when `path` is no run directory of this version). The history
    checker judges the history once, as its files are read (`history_verdict`), for the
    report and for the invariants over it."""
    recorded = read_recorded(path)
    checked = history_verdict(recorded.inputs)
    if checked is not None:
        recorded = replace(recorded, inputs=replace(recorded.inputs, history_verdict=checked))
    return CheckReport(
        path,
        recorded.verdict(),
        checked,
        recorded.unreadable,
        loss_allowed=recorded.inputs.policy.loss_allowed,
    )
