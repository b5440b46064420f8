"""What every judgement of a run returns, the cluster invariants and the history checker
alike: a `Violation` says what is wrong in one line and shows its evidence (the offending
events, or the workload's records: value, offsets, process); an `InvariantResult` is one
invariant's or check's verdict; a `RunVerdict` holds them all, as JSON for `verdict.json`,
as the run's text table and as the history checker's report. Frozen values; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import TopicPartition
from rundir.events import Event

__all__ = ["InvariantResult", "RunVerdict", "Violation"]

#: How many violations per invariant the text table and the report list.
TABLE_EXAMPLES = 5
#: The measures the text table leaves to the JSON and the report.
LONG_STATS = frozenset({"unseen_over_time"})


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of an invariant: what it is about (`subject`, e.g. `"controller epoch
    7"` or `"t-0"`), a one-line explanation, and its evidence: the events that show it,
    or, for the history checker, the workload's record (`value`, the `offsets` it is at,
    the `process` whose operation it was; empty when not one record's) and the history
    operations that prove it (`ops`, each `"<process>#<op_id>"`, `"final-read"` for the
    final read given apart from the history). A cluster snapshot's violation has neither."""

    subject: str
    explanation: str
    events: tuple[Event, ...] = ()
    value: str | None = None
    offsets: tuple[int, ...] = ()
    process: str | None = None
    ops: tuple[str, ...] = ()

    def __str__(self) -> str:
        record = "" if self.value is None else f" {self.value!r} @ {list(self.offsets)}"
        where = "; ".join([*(e.where() for e in self.events), *self.ops])
        return f"{self.subject}{record}: {self.explanation}" + (f" [{where}]" if where else "")

    def to_json(self) -> dict[str, Any]:
        """The violation as a JSON object (the record's fields only when it has them)."""
        out: dict[str, Any] = {
            "subject": self.subject,
            "explanation": self.explanation,
            "events": [e.to_json() for e in self.events],
        }
        if self.value is not None:
            out["value"] = self.value
        if self.offsets:
            out["offsets"] = list(self.offsets)
        if self.process is not None:
            out["process"] = self.process
        if self.ops:
            out["ops"] = list(self.ops)
        return out


@dataclass(frozen=True, slots=True)
class InvariantResult:
    """One invariant's verdict. `checked` counts what it judged (events, partitions,
    snapshots); `judged` is False when its inputs were missing, and `note` says why or
    what it left out. `allowed`: its violations are anomalies the workload's configuration
    permits (Jepsen's error types that are not bad error types): shown, never failing."""

    name: str
    violations: tuple[Violation, ...] = ()
    checked: int = 0
    note: str = ""
    judged: bool = True
    allowed: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing breaks the invariant (also when it was not judged, and when
        what it found is allowed)."""
        return self.allowed or not self.violations

    def status(self) -> str:
        """`ok`, `VIOLATED`, `allowed` (allowed violations found) or `not judged`."""
        if not self.judged:
            return "not judged"
        if self.allowed and self.violations:
            return "allowed"
        return "ok" if self.ok else "VIOLATED"

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "name": self.name,
            "ok": self.ok,
            "judged": self.judged,
            "allowed": self.allowed,
            "checked": self.checked,
            "note": self.note,
            "violations": [v.to_json() for v in self.violations],
        }


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """Every invariant's (or history check's) result for one run. `ok` when none is
    violated and no partition the history checker should have judged went `unread` by
    the final read; an invariant that was not judged does not fail the run, but is listed
    as such, and an `allowed` result is shown apart, never failing it. `op_counts` counts
    the history's lines by `"<f> <type>"`; `stats` holds the history checker's measures
    (lags, consumption counts) as JSON values (the history checker's verdict only)."""

    results: tuple[InvariantResult, ...]
    unread: tuple[TopicPartition, ...] = ()
    op_counts: Mapping[str, int] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no invariant is violated and the final read covered every judged
        partition."""
        return not self.unread and all(r.ok for r in self.results)

    def result(self, name: str) -> InvariantResult:
        """The result of the invariant called `name` (its failing one when an allowed
        result of that name follows it)."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def allowed(self) -> tuple[InvariantResult, ...]:
        """The allowed results that found something."""
        return tuple(r for r in self.results if r.allowed and r.violations)

    def _judged(self) -> tuple[InvariantResult, ...]:
        return tuple(r for r in self.results if not r.allowed)

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object (what `verdict.json` holds; `unread`, `allowed`
        (the names of allowed results that found something) and `stats` only when there
        is any)."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "not_judged": [r.name for r in self.results if not r.judged],
            "invariants": [r.to_json() for r in self.results],
        }
        if self.unread:
            out["unread"] = [str(tp) for tp in self.unread]
        if self.allowed():
            out["allowed"] = [r.name for r in self.allowed()]
        if self.stats:
            out["stats"] = dict(self.stats)
        return out

    def table(self, examples: int = TABLE_EXAMPLES) -> str:
        """A compact text table: one row per invariant, then its first violations; the
        allowed results that found something below, apart; then the short measures."""
        width = max((len(r.name) for r in self.results), default=9)
        lines = [
            f"verdict: {'OK' if self.ok else 'NOT OK'}",
            f"{'invariant':<{width}}  {'result':<10}  {'checked':>7}  {'violations':>10}",
        ]
        for group, heading in ((self._judged(), None), (self.allowed(), "allowed")):
            if heading and group:
                lines.append(f"{heading} (found, permitted by the workload's configuration):")
            for r in group:
                lines.append(
                    f"{r.name:<{width}}  {r.status():<10}  {r.checked:>7}  "
                    f"{len(r.violations):>10}" + (f"  ({r.note})" if r.note else "")
                )
                lines.extend(_examples(r, "    ", examples, "- "))
        lines.extend(f"{k}: {v}" for k, v in self.stats.items() if k not in LONG_STATS)
        return "\n".join(lines)

    def report(self, examples: int = TABLE_EXAMPLES) -> str:
        """The history checker's lines: the verdict, the history's counts, the partitions
        the final read missed, each check and its first violations, the allowed anomalies
        and the measures."""
        lines = [f"verdict: {'OK' if self.ok else 'NOT OK'}"]
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.op_counts.items()))
        lines.append(f"history: {counts or 'empty'}")
        if self.unread:
            lines.append("final read incomplete: " + ", ".join(str(tp) for tp in self.unread))
        for r in self._judged():
            status = "ok" if r.ok else f"{len(r.violations)} ANOMALIES"
            note = f"; {r.note}" if r.note else ""
            lines.append(f"  {r.name:<20} {status} ({r.checked} checked{note})")
            lines.extend(_examples(r, "      ", examples))
        if self.allowed():
            lines.append("allowed (found, permitted by the workload's configuration):")
        for r in self.allowed():
            note = f"; {r.note}" if r.note else ""
            lines.append(f"  {r.name:<20} {len(r.violations)} allowed{note}")
            lines.extend(_examples(r, "      ", examples))
        lines.extend(f"{k}: {v}" for k, v in self.stats.items())
        return "\n".join(lines)


def _examples(result: InvariantResult, indent: str, examples: int, bullet: str = "") -> list[str]:
    """The first `examples` violations of `result`, one line each, and how many more."""
    lines = [f"{indent}{bullet}{v}" for v in result.violations[:examples]]
    if len(result.violations) > examples:
        lines.append(f"{indent}... and {len(result.violations) - examples} more")
    return lines
