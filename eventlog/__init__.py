"""Structured event logs of the testbed's nodes (JSON lines, schema in docs/events.md)."""

from eventlog.kinds import SCHEMA_VERSION, EventKind
from eventlog.log import EventLog, event_log_path, read_events, read_numbered_events

__all__ = [
    "SCHEMA_VERSION",
    "EventKind",
    "EventLog",
    "event_log_path",
    "read_events",
    "read_numbered_events",
]
