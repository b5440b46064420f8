"""Params of fault and action kinds: JSON scalars, each declared by a `ParamRule` (its
name, default, check and range in words), and `normalize_params`, which fills in the
defaults and refuses an unknown name or a value out of range with `BadParams`. A step
always carries all of its params, so a replay does not depend on today's defaults.

Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from chaos.errors import BadParams

__all__ = [
    "ParamItems",
    "ParamRule",
    "Scalar",
    "normalize_params",
    "number",
    "percent",
    "positive",
    "positive_int",
]

#: A JSON scalar, the only kind of param value.
Scalar = str | int | float | bool | None
#: Params as a hashable value: `(name, value)` pairs sorted by name.
ParamItems = tuple[tuple[str, Scalar], ...]


def number(value: Scalar) -> float | None:
    """`value` as a number, or None when it is not one (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def positive(value: Scalar) -> bool:
    """A number above 0."""
    found = number(value)
    return found is not None and found > 0


def positive_int(value: Scalar) -> bool:
    """An integer above 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def percent(value: Scalar) -> bool:
    """A number in (0, 100]."""
    found = number(value)
    return found is not None and 0 < found <= 100


@dataclass(frozen=True, slots=True)
class ParamRule:
    """One param: its name, default, check and the range in words (for messages)."""

    name: str
    default: Scalar
    check: Callable[[Scalar], bool]
    expects: str


def normalize_params(
    what: str,
    rules: tuple[ParamRule, ...],
    params: Mapping[str, object] | Iterable[tuple[str, object]],
) -> ParamItems:
    """`params` with the defaults filled in, checked against `rules`, as sorted items.
    `what` names the kind in messages. `BadParams` for an unknown name or a bad value."""
    given = dict(params.items() if isinstance(params, Mapping) else params)
    known = {rule.name: rule for rule in rules}
    unknown = sorted(str(name) for name in given if name not in known)
    if unknown:
        takes = ", ".join(known) or "no params"
        raise BadParams(f"{what} does not take {', '.join(unknown)} (it takes {takes})")
    items: list[tuple[str, Scalar]] = []
    for name, rule in sorted(known.items()):
        if name not in given and rule.default is None:
            raise BadParams(f"{what} needs the param {name} ({rule.expects})")
        value = given.get(name, rule.default)
        if not isinstance(value, str | int | float | bool) or not rule.check(value):
            raise BadParams(f"{what}: {name} must be {rule.expects}, got {value!r}")
        items.append((name, value))
    return tuple(items)
