"""What the invariants return: a `Violation` names the offending events and says why in one
line; an `InvariantResult` is one invariant's verdict; a `RunVerdict` holds them all, as
JSON for `verdict.json` and as a text table. Frozen values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chaos.invariants.events import Event

__all__ = ["InvariantResult", "RunVerdict", "Violation"]

#: How many violations per invariant the text table lists.
TABLE_EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of an invariant: what it is about (`subject`, e.g. `"controller epoch
    7"` or `"t-0"`), a one-line explanation, and the events that show it (empty when the
    evidence is not an event: a workload anomaly or a cluster snapshot)."""

    subject: str
    explanation: str
    events: tuple[Event, ...] = ()

    def __str__(self) -> str:
        where = "; ".join(e.where() for e in self.events)
        return f"{self.subject}: {self.explanation}" + (f" [{where}]" if where else "")

    def to_json(self) -> dict[str, Any]:
        """The violation as a JSON object."""
        return {
            "subject": self.subject,
            "explanation": self.explanation,
            "events": [e.to_json() for e in self.events],
        }


@dataclass(frozen=True, slots=True)
class InvariantResult:
    """One invariant's verdict. `checked` counts what it judged (events, partitions,
    snapshots); `judged` is False when its inputs were missing, and `note` says why or
    what it left out."""

    name: str
    violations: tuple[Violation, ...] = ()
    checked: int = 0
    note: str = ""
    judged: bool = True

    @property
    def ok(self) -> bool:
        """True when nothing breaks the invariant (also when it was not judged)."""
        return not self.violations

    def status(self) -> str:
        """`ok`, `VIOLATED` or `not judged`."""
        if not self.judged:
            return "not judged"
        return "ok" if self.ok else "VIOLATED"

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "name": self.name,
            "ok": self.ok,
            "judged": self.judged,
            "checked": self.checked,
            "note": self.note,
            "violations": [v.to_json() for v in self.violations],
        }


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """Every invariant's result for one run. `ok` when none is violated; an invariant that
    was not judged does not fail the run, but is listed as such."""

    results: tuple[InvariantResult, ...]

    @property
    def ok(self) -> bool:
        """True when no invariant is violated."""
        return all(r.ok for r in self.results)

    def result(self, name: str) -> InvariantResult:
        """The result of the invariant called `name`."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object (what `verdict.json` holds)."""
        return {
            "ok": self.ok,
            "not_judged": [r.name for r in self.results if not r.judged],
            "invariants": [r.to_json() for r in self.results],
        }

    def table(self, examples: int = TABLE_EXAMPLES) -> str:
        """A compact text table: one row per invariant, then its first violations."""
        width = max((len(r.name) for r in self.results), default=9)
        lines = [
            f"verdict: {'OK' if self.ok else 'NOT OK'}",
            f"{'invariant':<{width}}  {'result':<10}  {'checked':>7}  {'violations':>10}",
        ]
        for r in self.results:
            lines.append(
                f"{r.name:<{width}}  {r.status():<10}  {r.checked:>7}  {len(r.violations):>10}"
                + (f"  ({r.note})" if r.note else "")
            )
            lines.extend(f"    - {v}" for v in r.violations[:examples])
            if len(r.violations) > examples:
                lines.append(f"    ... and {len(r.violations) - examples} more")
        return "\n".join(lines)
