"""One event of a node's log as the invariants see it: a frozen value with where it came
from (node, line), when (ts), what (kind) and its other fields. Pure; any thread.

`Event.from_record` turns one decoded JSON line (docs/events.md) into an `Event`, so the
loader and the PySpark pipeline build the same inputs. `EventLogs` is the type every check
takes: node name -> that node's events in log order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import eventlog
from eventlog import READABLE_VERSIONS, EventKind
from eventlog.event import ENVELOPE
from rundir.errors import RunDirError

__all__ = [
    "Event",
    "EventFormatError",
    "EventLogs",
    "events_of_kind",
    "events_since",
    "processes",
    "since_process_at",
]


class EventFormatError(RunDirError):
    """An event line is JSON but not an event of the supported schema version."""


@dataclass(frozen=True, slots=True)
class Event:
    """One line of a node's event log. `line` is its 1-based line number in the node's
    file (its position when the events did not come from a file); `fields` holds every
    field besides the envelope (`v`, `ts`, `node`, `kind`)."""

    node: str
    line: int
    ts: int
    kind: str
    fields: Mapping[str, Any]

    @classmethod
    def from_record(cls, record: Mapping[str, Any], line: int) -> Event:
        """Decode one parsed line (a round's fact, `eventlog.expand`); raises
        `EventFormatError` for a schema version this testbed does not read or a missing or
        mistyped envelope field."""
        version = record.get("v")
        if version not in READABLE_VERSIONS or isinstance(version, bool):
            readable = " or ".join(str(v) for v in sorted(READABLE_VERSIONS))
            raise EventFormatError(
                f"line {line}: event schema version {version!r}, this testbed reads {readable}"
            )
        ts, node, kind = record.get("ts"), record.get("node"), record.get("kind")
        if not isinstance(ts, int) or isinstance(ts, bool):
            raise EventFormatError(f"line {line}: ts must be an int, got {ts!r}")
        if not isinstance(node, str) or not isinstance(kind, str):
            raise EventFormatError(f"line {line}: node and kind must be strings")
        fields = dict(record)
        for name in ENVELOPE:
            fields.pop(name, None)
        return cls(node, line, ts, kind, fields)

    def __hash__(self) -> int:
        """By place: a node's line holds one event, or a round's facts, one per partition
        (the fields are a dict, not hashable, so the partition is taken from them: a round
        of 100,000 facts must not share one hash)."""
        topic, partition = self.fields.get("topic"), self.fields.get("partition")
        return hash(
            (
                self.node,
                self.line,
                self.ts,
                self.kind,
                topic if isinstance(topic, str) else None,
                partition if isinstance(partition, int) else None,
            )
        )

    def decoded(self) -> eventlog.Event | None:
        """The line as its kind's event type (`eventlog.decode`), or None when it is not
        one: a field missing or of another type (an older or broken writer), or a kind
        this version does not know. A check reads a complete event through this."""
        try:
            return eventlog.decode({"kind": self.kind, **self.fields})
        except eventlog.EventDecodeError:
            return None

    def int_field(self, name: str) -> int | None:
        """The field `name` when it is an int (not a bool), else None."""
        value = self.fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return None

    def int_list_field(self, name: str) -> tuple[int, ...] | None:
        """The field `name` when it is a list of ints, else None."""
        value = self.fields.get(name)
        if isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            return tuple(value)
        return None

    def where(self) -> str:
        """`broker2:14 @1700000000123 controller_elected`: enough to find the line."""
        return f"{self.node}:{self.line} @{self.ts} {self.kind}"

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object: its place and the line's fields."""
        return {
            "node": self.node,
            "line": self.line,
            "ts": self.ts,
            "kind": self.kind,
            "fields": dict(self.fields),
        }


#: Every node's events in log order.
EventLogs = Mapping[str, Sequence[Event]]


def events_of_kind(logs: EventLogs, *kinds: EventKind) -> Iterator[Event]:
    """The events of the given kinds, node by node (sorted by name), each in log order."""
    wanted = {str(k) for k in kinds}
    for node in sorted(logs):
        for event in logs[node]:
            if event.kind in wanted:
                yield event


def processes(events: Sequence[Event]) -> list[list[Event]]:
    """One node's log cut into the lives of its processes: a new one starts at each
    `node_started` (a restarted broker appends to the same file). Events before the first
    `node_started` form a life of their own."""
    lives: list[list[Event]] = [[]]
    for event in events:
        if event.kind == EventKind.NODE_STARTED and lives[-1]:
            lives.append([])
        lives[-1].append(event)
    return [life for life in lives if life]


def since_process_at(logs: EventLogs, since_ms: int) -> EventLogs:
    """Each node's log from the start of the process that was running at `since_ms` (its
    last `node_started` at or before it) on: the lives of processes that had ended before
    then are left out. Their events are not the run's doing, and may come from another
    build (a bug hunt recreates the brokers with a bug switch, then without, appending to
    the same files). A node without such a `node_started` keeps its whole log; `since_ms`
    0 keeps everything."""
    trimmed: dict[str, Sequence[Event]] = {}
    for node, events in logs.items():
        start = 0
        for i, event in enumerate(events):
            if event.ts > since_ms:
                break
            if event.kind == EventKind.NODE_STARTED:
                start = i
        trimmed[node] = events[start:]
    return trimmed


def events_since(logs: EventLogs, since_ms: int) -> list[Event]:
    """Every event at or after `since_ms`, ordered by time, then node and line."""
    events = [e for log in logs.values() for e in log if e.ts >= since_ms]
    return sorted(events, key=lambda e: (e.ts, e.node, e.line))
