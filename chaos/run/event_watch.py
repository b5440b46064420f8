"""Steps started by the cluster's events: the runner's view of every node's event log as
it grows, and the triggers (`chaos.generator.schedule.Trigger`) waiting on it.

    watch = EventWatch(event_dir)            # reads from the logs' current ends
    watch.arm(3, trigger, since_ms=..., deadline=...)
    fired, expired = watch.due(now)          # step indices to start, and to give up on

`EventTail` reads the `<node>.jsonl` files of the cluster's event directory from where
they ended when it was made (a file that appears later is read from its start; one that
shrank, from its start again), complete lines only. `EventWatch` keeps what it read, so a
second trigger armed on an event already read (two steps on one event) still finds it,
and fires a trigger on the first matching event written at or after its `since_ms`, a
time of the host's wall clock: an event's time is the host's at its `mono_ms` (the node's
monotonic clock, the host kernel's; `rundir.host_time`), so a node whose wall clock a
clock fault moved fires its triggers as any other. An event without `mono_ms` is placed
by its `ts`.

A node writes an event the moment it happens and the runner polls every
`POLL_S`: a triggered step starts within about that much of its event, plus the time the
fault takes to start. Pure file reads; one thread (the runner's step loop).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.generator.schedule import Trigger
from eventlog import EventDecodeError, expand
from rundir.host_time import ClockAnchor

__all__ = ["POLL_S", "EventTail", "EventWatch", "Fired"]

#: How often the step loop reads the event logs while a trigger waits.
POLL_S = 0.05


class EventTail:
    """New complete lines of every `*.jsonl` in `directory` (none when it is None)."""

    def __init__(self, directory: Path | None) -> None:
        self._dir = directory
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        for path in self._files():
            self._offsets[path] = _size(path)

    def poll(self) -> list[dict[str, Any]]:
        """The events appended since the last poll, file by file, a round's columns expanded
        into its partitions' facts (`eventlog.expand`); lines that are not JSON objects are
        skipped."""
        found: list[dict[str, Any]] = []
        for path in self._files():
            size = _size(path)
            offset = self._offsets.get(path, 0)
            if size < offset:
                offset = 0
                self._partial.pop(path, None)
            if size == offset:
                continue
            with open(path, "rb") as f:
                f.seek(offset)
                chunk = self._partial.pop(path, b"") + f.read(size - offset)
            self._offsets[path] = size
            lines = chunk.split(b"\n")
            if lines[-1]:
                self._partial[path] = lines[-1]
            for line in lines[:-1]:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    try:
                        found.extend(expand(value))
                    except EventDecodeError:
                        continue  # a round that does not expand: no event
        return found

    def _files(self) -> list[Path]:
        if self._dir is None or not self._dir.is_dir():
            return []
        return sorted(self._dir.glob("*.jsonl"))


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


@dataclass(frozen=True, slots=True)
class _Armed:
    trigger: Trigger
    since_ms: int
    deadline: float


@dataclass(frozen=True, slots=True)
class Fired:
    """A trigger's step to start now, and the event that started it."""

    index: int
    event: Mapping[str, Any]


class EventWatch:
    """Triggers waiting on the events an `EventTail` reads (see the module docstring)."""

    def __init__(self, tail: EventTail, anchor: ClockAnchor | None = None) -> None:
        self._tail = tail
        self._anchor = anchor or ClockAnchor.now()
        self._seen: list[dict[str, Any]] = []
        self._armed: dict[int, _Armed] = {}

    def arm(self, index: int, trigger: Trigger, since_ms: int, deadline: float) -> None:
        """Wait for `trigger`'s event, written at `since_ms` or later, until the monotonic
        time `deadline`, for step `index`."""
        self._armed[index] = _Armed(trigger, since_ms, deadline)

    @property
    def waiting(self) -> bool:
        """Some trigger is armed."""
        return bool(self._armed)

    def due(self, now: float) -> tuple[list[Fired], list[int]]:
        """Read what the logs gained; the armed steps whose event has come (in step order),
        and those whose deadline passed without it. Both are disarmed."""
        if not self._armed:
            return [], []
        self._seen.extend(self._tail.poll())
        fired: list[Fired] = []
        expired: list[int] = []
        for index in sorted(self._armed):
            armed = self._armed[index]
            event = next(
                (
                    e
                    for e in self._seen
                    if self._host_ms(e) >= armed.since_ms and armed.trigger.matches(e)
                ),
                None,
            )
            if event is not None:
                fired.append(Fired(index, event))
            elif now >= armed.deadline:
                expired.append(index)
        for index in [f.index for f in fired] + expired:
            del self._armed[index]
        return fired, expired

    def disarm_all(self) -> list[int]:
        """Give up on every armed trigger (the heal came); their step indices."""
        left = sorted(self._armed)
        self._armed.clear()
        return left

    def _host_ms(self, event: Mapping[str, Any]) -> int:
        """When the event was written, by the host's wall clock (-1: unknown)."""
        mono = event.get("mono_ms")
        if isinstance(mono, int) and not isinstance(mono, bool):
            return self._anchor.host_ms(mono)
        ts = event.get("ts")
        return ts if isinstance(ts, int) and not isinstance(ts, bool) else -1
