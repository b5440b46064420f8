"""What every event type shares: the `Event` base, the `ABSENT` marker of a field left out
of a line, and each type's encoding (its kind and field names, computed once).

An event type is a frozen, slotted, keyword-only dataclass deriving from `Event`, with a
`kind` class variable (the `kind` written in the envelope) and one field per JSON key, in
the order the keys are written. Each field's type is `Annotated[<type>, "<meaning>"]`: the
meaning is the field's row in docs/events.md. A field whose type admits `Absent` defaults
to `ABSENT` and is left out of the line when it is (a field only some writers of a kind
write, e.g. `isr_changed`'s `by`); `None` is written as `null`. Pure values; any thread.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, Final, Literal

from eventlog.kinds import SCHEMA_VERSION

__all__ = ["ABSENT", "ENVELOPE", "Absent", "Event", "EventEncoding", "RoundEvent", "encoding"]


class _Absent(enum.Enum):
    """The one value of `Absent`."""

    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


#: A field left out of the line (not `null`).
ABSENT: Final = _Absent.ABSENT
#: The type of `ABSENT`, for `<type> | Absent` fields.
Absent = Literal[_Absent.ABSENT]

#: The fields every line carries before the event's own; an event's fields never use them.
#: `seq` and `mono_ms` are left out by writers that have none (`eventlog.event_record`);
#: `node_ts` is never written by a node: a reader puts the node's own `ts` there when it
#: replaces `ts` with the host's time (`rundir.reader`).
ENVELOPE = frozenset({"v", "ts", "node", "kind", "seq", "mono_ms", "node_ts"})


@dataclass(frozen=True, slots=True)
class Event:
    """An event of one kind, as its writer builds it and a reader decodes it."""

    #: The kind's name, written as the envelope's `kind`.
    kind: ClassVar[str]
    #: How the type is written (set by `encoding`, once per type).
    _encoding: ClassVar[EventEncoding]


@dataclass(frozen=True, slots=True)
class RoundEvent(Event):
    """The facts of many partitions of one round, as columns: one event instead of one per
    partition. Each partition's fact is an event of the type `fact`; the round's type has,
    for each of its `columns`, a list field whose i-th item is the i-th partition's value
    of the fact's field the column names, and its other fields hold what every partition
    of the round shares (named as the fact's fields). Readers see the facts, never the
    round: `eventlog.columns.expand`."""

    #: The type of each partition's fact.
    fact: ClassVar[type[Event]]
    #: Each column field's name -> the name of the fact's field its items are.
    columns: ClassVar[dict[str, str]]


class EventEncoding:
    """How one event type becomes a line's record: its kind, its field names in order, and
    `record(event, ts, node, seq, mono_ms)`, the whole record (envelope first, `ABSENT`
    fields left out)
    built by one generated function, as dataclasses generate `__init__`.

    Making it also gives the type a faster `__init__`, with the dataclass's signature (the
    fields as keywords, the same defaults): it sets each slot through its descriptor instead
    of `object.__setattr__`, which a frozen dataclass calls once per field. An event is
    built on the hot path (a state change of 100,000 partitions builds 100,000), and this
    halves the cost of building it."""

    __slots__ = ("kind", "names", "record")

    def __init__(self, event_type: type[Event]) -> None:
        self.kind: str = event_type.kind
        declared = fields(event_type)
        self.names: tuple[str, ...] = tuple(f.name for f in declared)
        clash = ENVELOPE.intersection(self.names)
        if clash:
            raise TypeError(f"{event_type.__name__} has fields named like the envelope: {clash}")
        omits = [f.name for f in declared if "Absent" in str(f.type)]
        self.record: Callable[[Event, int, str, int | None, int | None], dict[str, Any]] = (
            _generate(_record_source(self.kind, self.names, omits), "_record", {"ABSENT": ABSENT})
        )
        setters = {f"_set_{name}": getattr(event_type, name).__set__ for name in self.names}
        defaults = {f"_default_{f.name}": f.default for f in declared if f.default is not MISSING}
        init = _generate(_init_source(self.names, defaults), "__init__", {**setters, **defaults})
        init.__qualname__ = f"{event_type.__qualname__}.__init__"
        init.__doc__ = event_type.__init__.__doc__
        event_type.__init__ = init  # type: ignore[method-assign]


def _record_source(kind: str, names: tuple[str, ...], omits: list[str]) -> str:
    """The source of `_record(event, ts, node, seq, mono_ms)` for one type."""
    present = [n for n in names if n not in omits]
    lines = [
        "def _record(event, ts, node, seq, mono_ms):",
        f"    record = {{'v': {SCHEMA_VERSION}, 'ts': ts, 'node': node, 'kind': {kind!r}, "
        "'seq': seq, 'mono_ms': mono_ms, "
        + ", ".join(f"{n!r}: event.{n}" for n in (present if not omits else names))
        + "}",
    ]
    if omits:
        lines += [f"    if event.{n} is ABSENT:\n        del record[{n!r}]" for n in omits]
    lines.append("    return record")
    return "\n".join(lines)


def _init_source(names: tuple[str, ...], defaults: dict[str, object]) -> str:
    """The source of the fast `__init__` of one type."""
    parameters = ", ".join(f"{n}=_default_{n}" if f"_default_{n}" in defaults else n for n in names)
    body = "".join(f"\n    _set_{n}(self, {n})" for n in names)
    return f"def __init__(self, *, {parameters}):{body}"


def _generate(source: str, name: str, namespace: dict[str, Any]) -> Any:
    """The function `name` that `source` defines, with `namespace` as its globals."""
    exec(source, namespace)
    return namespace[name]


def encoding(event_type: type[Event]) -> EventEncoding:
    """`event_type`'s encoding, made on first use and kept on the type."""
    found: EventEncoding | None = event_type.__dict__.get("_encoding")
    if found is None:
        found = EventEncoding(event_type)
        event_type._encoding = found
    return found
