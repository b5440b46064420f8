"""`EVENT_TYPES`: every event kind's name and its type, and `decode`, which turns a line
read back into the type's value. Pure values; any thread."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from eventlog.event import Event, encoding
from eventlog.events import broker, controller, replication, state, topics

__all__ = ["EVENT_MODULES", "EVENT_TYPES", "EventDecodeError", "decode"]

#: The modules of the event types, in the order docs/events.md lists them.
EVENT_MODULES = (broker, controller, state, replication, topics)


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
    """A line's fields do not make an event of its kind (an unknown kind, or a required
    field missing)."""


def decode(record: Mapping[str, Any]) -> Event:
    """The event a line holds (its envelope left out). Fields its type does not know are
    ignored (a later version's); `EventDecodeError` for an unknown kind or a missing field."""
    event_type = EVENT_TYPES.get(record.get("kind"))  # type: ignore[arg-type]
    if event_type is None:
        raise EventDecodeError(f"unknown event kind {record.get('kind')!r}")
    names = event_type._encoding.names
    try:
        return event_type(**{name: record[name] for name in names if name in record})
    except TypeError as exc:
        raise EventDecodeError(f"{record.get('kind')}: {exc}") from exc
