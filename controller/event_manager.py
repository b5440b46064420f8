"""`ControllerEventManager`: one unbounded queue and the one thread that processes it.

`put` and `clear_and_put` may be called from any thread (watches, gRPC handlers, session
listeners). The thread `controller-event-thread` is the only caller of the processor, so the
processor owns all controller state without locks. A processor exception is reported and
the loop goes on: one bad event never kills the controller.

While the ZooKeeper session is suspended (`pause`, from the session listener) the thread
holds the next event instead of processing it: a controller that cannot reach ZooKeeper
stops acting (DESIGN 4.5). The same session coming back (`resume`) releases it; an expiry
arrives as `clear_and_put(Expire())`, which also releases the gate and preempts the event
held.

An event whose handling lost the ZooKeeper connection with the session kept is handled
again, from the start, once the session is connected, when the processor says it may be
(`on_process_error` returns True), at most `MAX_RETRIES` times: Kafka's ZooKeeper client
retries such a request until connected, where kazoo fails it with ConnectionLoss, and a
change read from ZooKeeper and dropped would be lost until the next one (a broker that
registered while the controller's connection flapped stayed unknown to it).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from controller import collector
from controller.events import ControllerEvent, ShutdownEventThread
from controller.states import ControllerState

log = logging.getLogger(__name__)

THREAD_NAME = "controller-event-thread"
#: How many times one event is handled again after losing the connection.
MAX_RETRIES = 5


class EventProcessor(Protocol):
    """What the event thread calls for each event."""

    def process(self, event: ControllerEvent) -> None:
        """Handle one event (on the event thread)."""

    def on_process_error(
        self, event: ControllerEvent, error: BaseException, may_retry: bool
    ) -> bool | None:
        """Report an exception `process` raised (on the event thread); True, when
        `may_retry`, to have the event handled again once the session is connected."""


@dataclass(slots=True)
class _Queued:
    event: ControllerEvent
    enqueued_at: float


class ControllerEventManager:
    """The queue, its thread and its metrics (queue size, queue time, current state)."""

    def __init__(
        self,
        processor: EventProcessor,
        on_queue_time: Callable[[float], None] | None = None,
    ) -> None:
        self._processor = processor
        self._queue: queue.Queue[_Queued] = queue.Queue()
        self._lock = threading.Lock()  # serializes clear_and_put against put
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._on_queue_time = on_queue_time
        self.state = ControllerState.IDLE
        self.last_queue_time_ms = 0.0
        self._connected = threading.Event()  # the session gate; open unless paused
        self._connected.set()
        self._clears = 0  # bumped by clear_and_put, under _lock
        self._holding = threading.Event()  # set while an event waits at the gate

    def start(self) -> None:
        """Start the event thread."""
        self._thread.start()

    @property
    def is_event_thread(self) -> bool:
        """True when called on the event thread."""
        return threading.current_thread() is self._thread

    def queue_size(self) -> int:
        """Events waiting (EventQueueSize)."""
        return self._queue.qsize()

    def pause(self) -> None:
        """The session is suspended: hold events until `resume` or `clear_and_put` (any
        thread)."""
        self._connected.clear()

    def resume(self) -> None:
        """The session is connected again: process events (any thread)."""
        self._connected.set()

    @property
    def holding(self) -> bool:
        """True while the event thread holds an event at the closed gate."""
        return self._holding.is_set()

    def put(self, event: ControllerEvent) -> None:
        """Enqueue `event` (any thread)."""
        with self._lock:
            self._queue.put(_Queued(event, time.monotonic()))

    def clear_and_put(self, event: ControllerEvent) -> None:
        """Drop every queued event (answering their callers through `preempt`), then enqueue
        `event` (any thread)."""
        with self._lock:
            dropped: list[_Queued] = []
            while True:
                try:
                    dropped.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._queue.put(_Queued(event, time.monotonic()))
            self._clears += 1
        self._connected.set()
        for item in dropped:
            item.event.preempt()

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Preempt what is queued, stop the thread and wait for it (any other thread)."""
        self.clear_and_put(ShutdownEventThread())
        if self._thread.is_alive() and not self.is_event_thread:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            with self._lock:
                clears = self._clears
            if isinstance(item.event, ShutdownEventThread):
                return
            if not self._pass_gate(clears):
                item.event.preempt()  # dropped by clear_and_put while held
                continue
            waited = time.monotonic() - item.enqueued_at
            self.last_queue_time_ms = waited * 1000
            if self._on_queue_time is not None:
                self._on_queue_time(waited)
            self.state = item.event.state
            try:
                for attempt in range(MAX_RETRIES + 1):
                    if attempt and not self._pass_gate(clears):
                        item.event.preempt()  # dropped by clear_and_put while held
                        break
                    if self._processed(item.event, retry=attempt < MAX_RETRIES):
                        break
            finally:
                self.state = ControllerState.IDLE

    def _processed(self, event: ControllerEvent, retry: bool) -> bool:
        """Process `event`; False when it failed and asks to be handled again (`retry`
        says whether it may ask)."""
        try:
            with collector.paused():
                self._processor.process(event)
            return True
        except Exception as exc:  # the controller never dies of one event
            log.exception("controller event %s failed", type(event).__name__)
            try:
                return not (self._processor.on_process_error(event, exc, retry) and retry)
            except Exception:
                log.exception("reporting the failure of %s failed", event)
                return True

    def _pass_gate(self, clears: int) -> bool:
        """Wait while the session is suspended; False when `clear_and_put` ran since the
        event was taken (`clears` as it was then): the event counts as dropped."""
        if not self._connected.is_set():
            self._holding.set()
            try:
                self._connected.wait()
            finally:
                self._holding.clear()
        with self._lock:
            return self._clears == clears
