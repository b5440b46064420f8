"""`ChangeCounter`: what a broker's long polls of many partitions sleep on.

A follower's Fetch of thousands of partitions with nothing to return waits until records
are appended, a high watermark moves or leadership changes anywhere on the broker (each
bumps the counter), or its deadline passes, then reads again. Any thread: producers, the
fetch path and LeaderAndIsr bump it; gRPC worker threads wait on it.
"""

from __future__ import annotations

import threading
import time


class ChangeCounter:
    """Counts data-plane changes (appends, high-watermark moves, leadership changes) so
    that long polls of many partitions sleep until one happens. Any thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.version = 0

    def bump(self) -> None:
        """Something changed: wake every waiting long poll."""
        with self._cond:
            self.version += 1
            self._cond.notify_all()

    def wait_past(self, seen: int, deadline: float, stopped: threading.Event) -> bool:
        """Wait until the version moves past `seen` (True) or `deadline` passes or the
        broker stops (False)."""
        with self._cond:
            while self.version == seen and not stopped.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return not stopped.is_set()
