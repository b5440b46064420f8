"""Reading a fault's JSON description back (the inverse of `Fault.describe()`): its targets
and its typed parameters, each refused with a `BadFaultData` that names the field and what
was found. Pure; any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from chaos.errors import FaultError


class BadFaultData(FaultError):
    """A fault description that does not rebuild a fault (missing or mistyped field)."""


def targets_from(data: Mapping[str, Any], kind: str) -> tuple[str, ...]:
    """The non-empty list of service names under `targets`."""
    targets = data.get("targets")
    if not isinstance(targets, list | tuple) or not targets:
        raise BadFaultData(f"{kind}: `targets` must be a non-empty list, got {targets!r}")
    return check_targets(tuple(targets), kind)


def check_targets(targets: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """`targets` when it is a non-empty tuple of service names (a fault's own check)."""
    if not isinstance(targets, tuple) or not targets:
        raise BadFaultData(f"{kind}: targets must be a non-empty tuple, got {targets!r}")
    if not all(isinstance(t, str) and t for t in targets):
        raise BadFaultData(f"{kind}: every target must be a service name, got {targets!r}")
    return targets


def number_from(data: Mapping[str, Any], key: str, default: float, kind: str) -> float:
    """A positive finite number under `key` (`default` when absent)."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadFaultData(f"{kind}: `{key}` must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise BadFaultData(f"{kind}: `{key}` must be a positive number, got {value!r}")
    return float(value)


def no_extra_fields(data: Mapping[str, Any], allowed: set[str], kind: str) -> None:
    """Refuse fields this kind does not know (a misspelt parameter must not pass silently)."""
    extra = sorted(set(data) - allowed)
    if extra:
        raise BadFaultData(f"{kind}: unknown fields {extra}; expected {sorted(allowed)}")


@dataclass(frozen=True, slots=True)
class TargetedFault:
    """The data half of a fault whose only field is its targets: `kind` (from the class's
    `KIND`), `describe()` as `{"targets": [...]}` and `from_json`. Concrete faults derive
    from it and add `start`, `took_effect`, `stop` and `undone`."""

    targets: tuple[str, ...]
    KIND: ClassVar[str] = ""

    def __post_init__(self) -> None:
        check_targets(self.targets, self.KIND)

    @property
    def kind(self) -> str:
        """The fault's kind name."""
        return self.KIND

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`; unknown fields are refused."""
        no_extra_fields(data, {"targets"}, cls.KIND)
        return cls(targets_from(data, cls.KIND))

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...]}`."""
        return {"targets": list(self.targets)}
