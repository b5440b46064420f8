"""`ChangeCounter`: what a broker's long polls of many partitions sleep on.

A follower's Fetch of thousands of partitions with nothing to return waits until records
are appended, a high watermark moves or leadership changes anywhere on the broker (each
bumps the counter), or its deadline passes, then reads again: only the partitions that
changed since it last read (`changed_since`), as Kafka's fetch purgatory watches each
partition, so that a stream of small changes does not make every waiting fetch read its
thousands of partitions again. Any thread: producers, the fetch path and LeaderAndIsr
bump it; threads wait on it with `wait_past`, coroutines of an event loop with
`wait_past_async`, which holds no thread while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterable

from domain import TopicPartition

#: How many recent changes are remembered with their partitions; a waiter that slept
#: through more reads everything again.
HISTORY = 4096


class ChangeCounter:
    """Counts data-plane changes (appends, high-watermark moves, leadership changes), and
    remembers the partitions of the recent ones, so that long polls of many partitions
    sleep until one happens and then read only what changed. Any thread."""

    def __init__(self, history: int = HISTORY) -> None:
        self._cond = threading.Condition()
        self.version = 0
        #: (version, the partitions that change touched; None: any partition)
        self._recent: deque[tuple[int, frozenset[TopicPartition] | None]] = deque(maxlen=history)
        #: the futures of `wait_past_async` callers, by the loop they wait on
        self._parked: dict[asyncio.AbstractEventLoop, list[asyncio.Future[bool]]] = {}

    def bump(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Something changed in `partitions` (None: anywhere, or unknown): wake every
        waiting long poll. Parked coroutines are woken at once when the bump runs on their
        loop's thread, else with one `call_soon_threadsafe` per loop."""
        changed = None if partitions is None else frozenset(partitions)
        with self._cond:
            self.version += 1
            self._recent.append((self.version, changed))
            self._cond.notify_all()
            if not self._parked:
                return
            parked, self._parked = self._parked, {}
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        for loop, futures in parked.items():
            if loop is running:
                _wake(futures, True)
            else:  # a closed loop raises RuntimeError: nobody waits on it any more
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_wake, futures, True)

    def changed_since(self, seen: int) -> frozenset[TopicPartition] | None:
        """The partitions changed after version `seen`; None when some change named no
        partitions, or is no longer remembered (read everything)."""
        with self._cond:
            if self.version == seen:
                return frozenset()
            if not self._recent or self._recent[0][0] > seen + 1:
                return None
            out: set[TopicPartition] = set()
            for version, changed in reversed(self._recent):
                if version <= seen:
                    break
                if changed is None:
                    return None
                out.update(changed)
            return frozenset(out)

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

    async def wait_past_async(self, seen: int, deadline: float, stopped: threading.Event) -> bool:
        """`wait_past` for a coroutine: parks a future of the running loop instead of
        holding a thread, woken by `bump` or by a timer at `deadline`."""
        loop = asyncio.get_running_loop()
        with self._cond:
            if self.version != seen or stopped.is_set():
                return not stopped.is_set()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            future: asyncio.Future[bool] = loop.create_future()
            self._parked.setdefault(loop, []).append(future)
        timer = loop.call_later(remaining, _wake, (future,), False)
        try:
            woke = await future
        finally:
            timer.cancel()
            if future.cancelled() or not future.result():  # not taken by a bump: unpark
                with self._cond:
                    waiting = self._parked.get(loop, [])
                    if future in waiting:
                        waiting.remove(future)
        return woke and not stopped.is_set()


def _wake(futures: Iterable[asyncio.Future[bool]], woke: bool) -> None:
    """Answer each future still pending (on its loop's thread)."""
    for future in futures:
        if not future.done():
            future.set_result(woke)
