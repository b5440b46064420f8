"""What the disk layer (`harness.disk_layer`) does to the operations that pass through it:
`LayerRules`, a frozen value of error rules (an operation, a path glob, an errno and a
probability), latency rules (an operation and milliseconds) and a byte budget (writes
past it fail with ENOSPC), with its JSON form for the control socket; and `LayerCounters`,
what the layer counts (operations seen, failed and delayed per operation, bytes written,
and what a `lose` took back), which is how a disk fault proves that it took effect.
`lose_unsynced` asks the layer to journal what each file changed since its last fsync
(`harness.disk_journal`), so that a `lose` command can take it back.

Operations are `read`, `write` and `fsync`; a latency rule may also name `any`. A glob is
matched (`fnmatch`) against the path inside the layer without its leading `/`
(`topic-0/00000000000000000000.log`).

Pure; any thread (`LayerCounters` is the daemon's, guarded there by one lock).
"""

from __future__ import annotations

import errno as errnos
import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The operations a rule can name.
OPS = ("read", "write", "fsync")
#: A latency rule on every operation.
ANY = "any"
#: The errnos an error rule may inject, by name.
ERRNOS: Mapping[str, int] = {"EIO": errnos.EIO, "ENOSPC": errnos.ENOSPC}
#: The longest latency one operation may get.
MAX_LATENCY_MS = 10_000


class BadRules(ValueError):
    """Rules that do not parse or are out of range."""


@dataclass(frozen=True, slots=True)
class ErrorRule:
    """Fail `op` on paths matching `glob` with `errno` (a name of `ERRNOS`), each
    operation with `probability`."""

    op: str
    glob: str = "*"
    errno: str = "EIO"
    probability: float = 1.0

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise BadRules(f"error rule: op must be one of {', '.join(OPS)}, got {self.op!r}")
        if self.errno not in ERRNOS:
            raise BadRules(f"error rule: errno must be one of {', '.join(ERRNOS)}")
        if not isinstance(self.glob, str) or not self.glob:
            raise BadRules(f"error rule: glob must be a non-empty string, got {self.glob!r}")
        if not 0 < self.probability <= 1:
            raise BadRules(f"error rule: probability must be in (0, 1], got {self.probability}")

    def matches(self, op: str, path: str) -> bool:
        """Whether the rule is about this operation on this path."""
        return op == self.op and fnmatch.fnmatchcase(path.lstrip("/"), self.glob)


@dataclass(frozen=True, slots=True)
class LatencyRule:
    """Hold every `op` (or every operation: `any`) `ms` milliseconds before doing it."""

    op: str
    ms: int

    def __post_init__(self) -> None:
        if self.op not in (*OPS, ANY):
            raise BadRules(f"latency rule: op must be one of {', '.join(OPS)} or any")
        if isinstance(self.ms, bool) or not isinstance(self.ms, int):
            raise BadRules(f"latency rule: ms must be an integer, got {self.ms!r}")
        if not 0 < self.ms <= MAX_LATENCY_MS:
            raise BadRules(f"latency rule: ms must be in (0, {MAX_LATENCY_MS}], got {self.ms}")


@dataclass(frozen=True, slots=True)
class LayerRules:
    """Everything the layer does besides passing through; the empty value is transparent."""

    errors: tuple[ErrorRule, ...] = ()
    latency: tuple[LatencyRule, ...] = ()
    budget_bytes: int | None = None
    #: Journal every change since each file's last fsync, so that a `lose` command can
    #: take them back (`harness.disk_journal`).
    lose_unsynced: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.lose_unsynced, bool):
            raise BadRules(f"lose_unsynced must be true or false, got {self.lose_unsynced!r}")
        if self.budget_bytes is not None and (
            isinstance(self.budget_bytes, bool)
            or not isinstance(self.budget_bytes, int)
            or self.budget_bytes < 0
        ):
            raise BadRules(f"budget_bytes must be an integer >= 0, got {self.budget_bytes!r}")

    @property
    def transparent(self) -> bool:
        """No rule: the layer only passes through."""
        return (
            not self.errors
            and not self.latency
            and self.budget_bytes is None
            and not self.lose_unsynced
        )

    def error_for(self, op: str, path: str, draw: float) -> int | None:
        """The errno to fail `op` on `path` with, given a uniform `draw` in [0, 1)."""
        for rule in self.errors:
            if rule.matches(op, path) and draw < rule.probability:
                return ERRNOS[rule.errno]
        return None

    def delay_ms(self, op: str) -> int:
        """How long to hold `op` (the longest rule that names it or `any`)."""
        return max((r.ms for r in self.latency if r.op in (op, ANY)), default=0)

    def over_budget(self, written: int, size: int) -> bool:
        """Whether writing `size` more bytes after `written` passes the budget."""
        return self.budget_bytes is not None and written + size > self.budget_bytes

    def to_json(self) -> dict[str, Any]:
        """The rules as the control socket carries them."""
        return {
            "errors": [
                {"op": r.op, "glob": r.glob, "errno": r.errno, "probability": r.probability}
                for r in self.errors
            ],
            "latency": [{"op": r.op, "ms": r.ms} for r in self.latency],
            "budget_bytes": self.budget_bytes,
            "lose_unsynced": self.lose_unsynced,
        }

    @staticmethod
    def from_json(data: Any) -> LayerRules:
        """The rules back from `to_json`; `BadRules` when they do not parse."""
        if not isinstance(data, Mapping):
            raise BadRules(f"rules must be a JSON object, got {data!r}")
        extra = sorted(set(data) - {"errors", "latency", "budget_bytes", "lose_unsynced"})
        if extra:
            raise BadRules(f"unknown rule fields {extra}")
        try:
            errors = tuple(ErrorRule(**e) for e in data.get("errors", ()))
            latency = tuple(LatencyRule(**r) for r in data.get("latency", ()))
        except TypeError as exc:
            raise BadRules(f"malformed rule: {exc}") from None
        return LayerRules(
            errors, latency, data.get("budget_bytes"), data.get("lose_unsynced", False)
        )


@dataclass(slots=True)
class LayerCounters:
    """What the layer did since it started: per operation, how many it saw, failed
    (injected errors and budget refusals) and delayed; and the bytes it wrote."""

    seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPS, 0))
    failed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPS, 0))
    delayed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPS, 0))
    written_bytes: int = 0
    #: What `lose` commands took back: files rolled back and bytes of their changes.
    lost_files: int = 0
    lost_bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        """The counters as the control socket reports them."""
        return {
            "seen": dict(self.seen),
            "failed": dict(self.failed),
            "delayed": dict(self.delayed),
            "written_bytes": self.written_bytes,
            "lost_files": self.lost_files,
            "lost_bytes": self.lost_bytes,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> LayerCounters:
        """The counters back from `to_json` (missing operations count 0)."""

        def per_op(key: str) -> dict[str, int]:
            found = data.get(key) or {}
            return {op: int(found.get(op, 0)) for op in OPS}

        return LayerCounters(
            per_op("seen"),
            per_op("failed"),
            per_op("delayed"),
            int(data.get("written_bytes", 0)),
            int(data.get("lost_files", 0)),
            int(data.get("lost_bytes", 0)),
        )

    def total(self, what: str) -> int:
        """The sum over the operations of `seen`, `failed` or `delayed`."""
        counts: dict[str, int] = getattr(self, what)
        return sum(counts.values())
