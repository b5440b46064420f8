"""Test doubles for the workload: the in-process cluster of `client.testing` (`FakeBrokers`,
`ProduceFault`, re-exported here), a history writer that keeps its lines (`RecordingHistory`),
and a clock that only moves when slept on (`FakeClock`); hand-written histories are
`rundir.testing.HistoryBuilder`'s. For tests only; any thread unless said otherwise.
"""

from __future__ import annotations

import threading

from client.testing import FakeBrokers, ProduceFault
from rundir.history import HistoryOp
from rundir.history_writer import HistoryWriter


class RecordingHistory(HistoryWriter):
    """A `HistoryWriter(None, process)` that keeps every line it is given. Any thread."""

    def __init__(self, process: str, clock: FakeClock | None = None) -> None:
        if clock is None:
            super().__init__(None, process)
        else:
            super().__init__(None, process, clock_ns=clock.monotonic_ns, wall_ms=clock.wall_ms)
        self._kept_lock = threading.Lock()
        self._kept: list[HistoryOp] = []

    def write(self, op: HistoryOp) -> None:
        """Count the line as `HistoryWriter` does, and keep it."""
        super().write(op)
        with self._kept_lock:
            self._kept.append(op)

    @property
    def ops(self) -> list[HistoryOp]:
        """Every line so far, in order."""
        with self._kept_lock:
            return list(self._kept)


class FakeClock:
    """Monotonic time that advances only through `sleep` or `advance`. Any thread."""

    def __init__(self, start_s: float = 1000.0) -> None:
        self._lock = threading.Lock()
        self._now = start_s

    def monotonic(self) -> float:
        """Seconds."""
        with self._lock:
            return self._now

    def monotonic_ns(self) -> int:
        """Nanoseconds; strictly increasing between calls so history lines stay ordered."""
        with self._lock:
            self._now += 1e-9
            return int(self._now * 1e9)

    def wall_ms(self) -> int:
        """Wall-clock ms derived from the fake time."""
        return int(self.monotonic() * 1000)

    def sleep(self, seconds: float) -> None:
        """Advance instead of sleeping."""
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        with self._lock:
            self._now += seconds


__all__ = [
    "FakeBrokers",
    "FakeClock",
    "ProduceFault",
    "RecordingHistory",
]
