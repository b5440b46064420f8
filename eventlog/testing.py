"""Test doubles for the event log: `RecordingEventLog` keeps what it is told instead of
writing a file. For tests only; any thread."""

from __future__ import annotations

import threading
from typing import Any, TypeVar, cast

from eventlog.columns import ROUND_KINDS, expand
from eventlog.event import Event
from eventlog.kinds import EventKind
from eventlog.log import EventLog
from eventlog.registry import decode

E = TypeVar("E", bound=Event)


class RecordingEventLog(EventLog):
    """An `EventLog(None, node)`: writes no file and keeps every event emitted. Any thread."""

    def __init__(self, node: str = "test") -> None:
        super().__init__(None, node)
        self._recorded_lock = threading.Lock()
        self._recorded: list[dict[str, Any]] = []

    def emit(self, event: Event, /) -> dict[str, Any]:
        """Emit as `EventLog` does, and keep the record."""
        record = super().emit(event)
        with self._recorded_lock:
            self._recorded.append(record)
        return record

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event emitted so far, in order."""
        with self._recorded_lock:
            return list(self._recorded)

    def of_kind(self, kind: EventKind | str) -> list[dict[str, Any]]:
        """The events of one kind, in order: as written, or for the kind of a round's facts
        (e.g. `leader_elected`), as readers see them (`eventlog.columns.expand`)."""
        wanted = str(kind)
        if wanted in ROUND_KINDS:
            return [e for e in self.events if e["kind"] == wanted]
        return [f for e in self.events for f in expand(e) if f["kind"] == wanted]

    def of_type(self, event_type: type[E]) -> list[E]:
        """The events of one type, in order, decoded back from what was written."""
        return [cast(E, decode(e)) for e in self.of_kind(event_type.kind)]
