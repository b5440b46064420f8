"""The one expansion of a round's columns into its partitions' facts, which every reader
of event logs goes through: `expand(record)` turns one line's record of a round kind
(`eventlog.events.rounds`) into one record per partition of its fact's kind, and leaves
any other record as it is.

Each fact's record is what a writer of that kind would have written for the partition:
the round's envelope (`v`, `ts`, `node`, `seq`, `mono_ms`, and `node_ts` when a reader
added it) with the fact's kind, then the fact's fields in the order its type declares
them, from the round's shared fields and the partition's item of each column. Facts of
one line share its `seq` (a reader numbers them by the line). A round whose columns are
missing, are not lists or differ in length is no event: `EventDecodeError`. Pure; any
thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

from eventlog.event import ENVELOPE, Event, RoundEvent
from eventlog.registry import EVENT_TYPES, EventDecodeError

__all__ = ["ROUND_KINDS", "expand", "expand_numbered", "gather"]


class _Plan:
    """How one round kind becomes its facts (computed once per kind)."""

    __slots__ = ("columns", "fact_kind", "names", "shared", "slots")

    def __init__(self, round_type: type[RoundEvent]) -> None:
        fact_names = [f.name for f in fields(round_type.fact)]
        shared = [f.name for f in fields(round_type) if f.name not in round_type.columns]
        unknown = [n for n in [*shared, *round_type.columns.values()] if n not in fact_names]
        if unknown:
            raise TypeError(f"{round_type.__name__}: {unknown} are no fields of its fact")
        self.fact_kind: str = round_type.fact.kind
        self.shared: tuple[str, ...] = tuple(shared)
        self.columns: tuple[str, ...] = tuple(round_type.columns)
        self.names: tuple[str, ...] = tuple(round_type.columns.values())
        named = set(shared) | set(round_type.columns.values())
        #: the fact's fields in its order, each a shared field's or a column's name
        self.slots: tuple[str, ...] = tuple(n for n in fact_names if n in named)

    def facts(self, record: Mapping[str, Any]) -> list[dict[str, Any]]:
        kind = record["kind"]
        missing = [n for n in (*self.shared, *self.columns) if n not in record]
        if missing:
            raise EventDecodeError(f"{kind}: {', '.join(missing)} missing")
        columns = [record[c] for c in self.columns]
        if not all(isinstance(c, list) for c in columns):
            raise EventDecodeError(f"{kind}: a column is not a list")
        if len({len(c) for c in columns}) > 1:
            raise EventDecodeError(f"{kind}: columns of different lengths")
        envelope = {k: v for k, v in record.items() if k in ENVELOPE}
        envelope["kind"] = self.fact_kind
        # every slot in the fact's order: a shared field's value, or a column's
        # placeholder that each partition overwrites
        template = {**envelope, **{n: record.get(n) for n in self.slots}}
        names = self.names
        facts = []
        for values in zip(*columns, strict=True):
            fact = template.copy()
            fact.update(zip(names, values, strict=True))
            facts.append(fact)
        return facts


_R = TypeVar("_R", bound=RoundEvent)


def gather(round_type: type[_R], facts: Iterable[Event], **shared: Any) -> _R:
    """The round of `round_type` holding `facts` (each of its fact type), the inverse of
    `expand`: each column the facts' values of its field, in order, and the other fields
    `shared` (what every fact of the round holds)."""
    facts = list(facts)
    columns = {
        column: [getattr(f, name) for f in facts] for column, name in round_type.columns.items()
    }
    return round_type(**columns, **shared)


#: Each round kind's plan.
_PLANS: dict[str, _Plan] = {
    kind: _Plan(t) for kind, t in EVENT_TYPES.items() if issubclass(t, RoundEvent)
}

#: The kinds whose events are rounds of columns.
ROUND_KINDS = frozenset(_PLANS)


def expand(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The facts `record` holds: its partitions' records when it is a round (see the module
    docstring), else `[record]` (the same object)."""
    kind = record.get("kind")
    plan = _PLANS.get(kind) if isinstance(kind, str) else None
    if plan is None:
        return [record]  # type: ignore[list-item]
    return plan.facts(record)


def expand_numbered(
    numbered: Iterable[tuple[int, dict[str, Any]]],
) -> list[tuple[int, dict[str, Any]]]:
    """`expand` over numbered records (as `eventlog.read_numbered_events` gives them): a
    round's facts keep its line number. `EventDecodeError` names the line of a round that
    does not expand."""
    out: list[tuple[int, dict[str, Any]]] = []
    append = out.append
    plans = _PLANS
    for number, record in numbered:
        kind = record.get("kind")
        plan = plans.get(kind) if isinstance(kind, str) else None
        if plan is None:
            append((number, record))
            continue
        try:
            facts = plan.facts(record)
        except EventDecodeError as exc:
            raise EventDecodeError(f"line {number}: {exc}") from None
        out.extend((number, fact) for fact in facts)
    return out
