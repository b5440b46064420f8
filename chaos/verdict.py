"""What the checker returns: the final read it judges against, anomalies, each check's
result and the verdict with its report. Frozen value objects; any thread."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from domain import TopicPartition

_EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class FinalRead:
    """The consumers' last full read of each partition, begun at `started_ns` (monotonic)."""

    started_ns: int
    partitions: Mapping[TopicPartition, tuple[tuple[int, str], ...]]


@dataclass(frozen=True, slots=True)
class Anomaly:
    """One violation: where, which value and offsets, whose, and a sentence."""

    topic_partition: TopicPartition
    value: str | None
    offsets: tuple[int, ...]
    process: str | None
    detail: str

    def __str__(self) -> str:
        value = f" {self.value!r}" if self.value is not None else ""
        return f"{self.topic_partition}{value} @ {list(self.offsets)}: {self.detail}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What one check judged (`checked` items) and the anomalies it found."""

    name: str
    checked: int
    anomalies: tuple[Anomaly, ...] = ()
    note: str = ""

    @property
    def count(self) -> int:
        """How many anomalies."""
        return len(self.anomalies)

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.anomalies

    def examples(self, n: int = _EXAMPLES) -> tuple[Anomaly, ...]:
        """The first `n` anomalies."""
        return self.anomalies[:n]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Every check's result, the partitions the final read missed and the op counts."""

    results: tuple[CheckResult, ...]
    unread: tuple[TopicPartition, ...] = ()
    op_counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every check passed and the final read covered every judged partition."""
        return not self.unread and all(r.ok for r in self.results)

    def result(self, name: str) -> CheckResult:
        """The result of the check called `name`."""
        return next(r for r in self.results if r.name == name)

    def report(self) -> str:
        """A few human-readable lines: the verdict, the counts, each check and examples."""
        lines = [f"verdict: {'OK' if self.ok else 'NOT OK'}"]
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.op_counts.items()))
        lines.append(f"history: {counts or 'empty'}")
        if self.unread:
            lines.append("final read incomplete: " + ", ".join(str(tp) for tp in self.unread))
        for r in self.results:
            status = "ok" if r.ok else f"{r.count} ANOMALIES"
            note = f"; {r.note}" if r.note else ""
            lines.append(f"  {r.name:<20} {status} ({r.checked} checked{note})")
            lines.extend(f"      {a}" for a in r.examples())
            if r.count > _EXAMPLES:
                lines.append(f"      ... and {r.count - _EXAMPLES} more")
        return "\n".join(lines)
