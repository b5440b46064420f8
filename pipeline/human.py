"""Times and values as the report's pages show them: seconds since a run's start, ISO
times for absolute ones, never a raw wall-clock millisecond count. Pure; any thread."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["WALL_CLOCK_MS", "iso", "seconds", "shown_value"]

#: Integers from here on are wall-clock milliseconds (2001 on) or other long numbers.
WALL_CLOCK_MS = 10**12


def seconds(ts_ms: float, started_ms: int) -> str:
    """`ts_ms` as seconds since the run's start, to the millisecond: `12.345 s`."""
    return f"{(ts_ms - started_ms) / 1000:.3f} s"


def iso(ts_ms: float) -> str:
    """A wall-clock time in ms as ISO 8601 UTC, to the millisecond."""
    return datetime.fromtimestamp(ts_ms / 1000, UTC).isoformat(timespec="milliseconds")


def shown_value(key: str, value: Any, started_ms: int | None) -> str:
    """A field's value for people: a wall-clock time in ms (13 digits) as seconds since
    the run's start (as ISO when no start is given), another integer of 13 or more digits
    in hex, null and booleans as JSON spells them, the rest as it is."""
    if type(value) is int and abs(value) >= WALL_CLOCK_MS:
        if key.endswith(("ms", "ts")) and value < 100 * WALL_CLOCK_MS:
            return iso(value) if started_ms is None else seconds(value, started_ms)
        return hex(value)
    if isinstance(value, list):
        return "[" + ", ".join(shown_value(key, v, started_ms) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{k}: {shown_value(k, v, started_ms)}" for k, v in value.items()) + "}"
        )
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    return str(value)
