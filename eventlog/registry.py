"""`EVENT_TYPES`: every event kind's name and its type, and `decode`, which turns a line
read back into the type's value. Pure values; any thread."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from eventlog.event import Event, encoding
from eventlog.events import (
    broker,
    channel,
    controller,
    log_dirs,
    replication,
    rounds,
    state,
    topics,
    zk_writes,
)

__all__ = ["EVENT_MODULES", "EVENT_TYPES", "EventDecodeError", "decode"]

#: The modules of the event types, in the order docs/events.md lists them.
EVENT_MODULES = (
    broker,
    controller,
    zk_writes,
    state,
    rounds,
    replication,
    log_dirs,
    topics,
    channel,
)


def _types() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    for module in EVENT_MODULES:
        for name in module.__all__:
            event_type = getattr(module, name)
            if event_type.kind in found:
                raise TypeError(f"kind {event_type.kind} has two types")
            encoding(event_type)
            found[event_type.kind] = event_type
    return found


#: Each kind's name -> its type.
EVENT_TYPES: Mapping[str, type[Event]] = MappingProxyType(_types())


class EventDecodeError(ValueError):
    """A line's fields do not make an event of its kind: an unknown kind, a required field
    missing, or a field of another JSON type than its type declares."""


def _json_classes(hint: object) -> tuple[type, ...] | None:
    """The classes a decoded JSON value of a field typed `hint` may have (None: any); an
    `ABSENT` field is never in a line, so `Absent` adds none."""
    options = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    classes: list[type] = []
    for option in options:
        origin = get_origin(option) or option
        if origin is Literal:  # Absent
            continue
        if origin is object:
            return None
        classes += {float: [float, int], type(None): [type(None)]}.get(origin, [origin])
    return tuple(classes)


def _checks(event_type: type[Event]) -> dict[str, tuple[type, ...] | None]:
    hints = get_type_hints(event_type)
    return {name: _json_classes(hints[name]) for name in event_type._encoding.names}


#: Per kind, each field's JSON classes, for `decode` to check.
_CHECKS = {kind: _checks(event_type) for kind, event_type in EVENT_TYPES.items()}


def decode(record: Mapping[str, Any]) -> Event:
    """The event a line holds (its envelope left out). Fields its type does not know are
    ignored (a later version's). `EventDecodeError` for an unknown kind, a missing field,
    or a field of another JSON type than declared (a bool is no int; the items of a list
    or an object are not checked)."""
    kind = record.get("kind")
    event_type = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if event_type is None:
        raise EventDecodeError(f"unknown event kind {kind!r}")
    values: dict[str, Any] = {}
    for name, classes in _CHECKS[kind].items():  # type: ignore[index]
        if name not in record:
            continue
        value = record[name]
        wrong = classes is not None and (
            not isinstance(value, classes) or (isinstance(value, bool) and bool not in classes)
        )
        if wrong:
            raise EventDecodeError(f"{kind}: {name} is {value!r}, not of {event_type.__name__}")
        values[name] = value
    try:
        return event_type(**values)
    except TypeError as exc:
        raise EventDecodeError(f"{kind}: {exc}") from exc
