"""`ControllerEventManager`: one named thread processes events in order; `clear_and_put`
drops and preempts what is queued; a failing event is reported and the loop goes on.

Synchronized with `threading.Event`s and `wait_until`, never with sleeps.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from controller.event_manager import THREAD_NAME, ControllerEventManager
from controller.events import ControlledShutdown, ControllerEvent
from controller.states import ControllerState
from harness.waiting import wait_until
from rpc.errors import Errors
from rpc.messages import ControlledShutdownResponse

TIMEOUT = 5.0
POLL = 0.002


@dataclass(frozen=True)
class Numbered(ControllerEvent):
    """A plain event that carries a number so the order of processing shows."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_CHANGE
    n: int


@dataclass(frozen=True)
class Blocking(ControllerEvent):
    """Holds the event thread until released: lets a test queue events behind it."""

    state: ClassVar[ControllerState] = ControllerState.BROKER_CHANGE
    entered: threading.Event = field(default_factory=threading.Event, compare=False)
    release: threading.Event = field(default_factory=threading.Event, compare=False)


@dataclass(frozen=True)
class Failing(ControllerEvent):
    """An event whose processing raises."""

    message: str = "boom"


class RecordingProcessor:
    """Records what the event thread processed, on which thread, and the errors reported."""

    def __init__(self) -> None:
        self.processed: list[ControllerEvent] = []
        self.threads: list[threading.Thread] = []
        self.errors: list[tuple[ControllerEvent, BaseException, str]] = []
        self.states_seen: list[ControllerState] = []
        self.on_event_thread: list[bool] = []
        self.manager: ControllerEventManager | None = None
        self.blockers: list[Blocking] = []

    def process(self, event: ControllerEvent) -> None:
        self.threads.append(threading.current_thread())
        if self.manager is not None:
            self.states_seen.append(self.manager.state)
            self.on_event_thread.append(self.manager.is_event_thread)
        if isinstance(event, Blocking):
            self.blockers.append(event)
            event.entered.set()
            if not event.release.wait(TIMEOUT):
                raise AssertionError("blocking event was never released")
        if isinstance(event, Failing):
            raise RuntimeError(event.message)
        self.processed.append(event)

    def on_process_error(
        self, event: ControllerEvent, error: BaseException, may_retry: bool = False
    ) -> None:
        self.errors.append((event, error, threading.current_thread().name))


@pytest.fixture
def processor() -> RecordingProcessor:
    """A fresh recording processor."""
    return RecordingProcessor()


@pytest.fixture
def manager(processor: RecordingProcessor) -> Iterator[ControllerEventManager]:
    """A started event manager; released and shut down after the test."""
    em = ControllerEventManager(processor)
    processor.manager = em
    em.start()
    yield em
    for blocker in processor.blockers:
        blocker.release.set()
    em.shutdown(TIMEOUT)


def wait_for_processed(processor: RecordingProcessor, n: int) -> None:
    """Wait until at least `n` events were processed."""
    wait_until(
        lambda: len(processor.processed) >= n,
        TIMEOUT,
        lambda: f"expected {n} processed events, got {processor.processed}",
        interval=POLL,
    )


def block(em: ControllerEventManager) -> Blocking:
    """Put a blocking event and wait until the event thread is inside it."""
    blocker = Blocking()
    em.put(blocker)
    assert blocker.entered.wait(TIMEOUT), "event thread never picked up the blocking event"
    return blocker


def test_events_are_processed_in_order_on_the_controller_event_thread(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    events = [Numbered(i) for i in range(20)]
    for event in events:
        manager.put(event)
    wait_for_processed(processor, 20)
    assert processor.processed == events
    assert {t.name for t in processor.threads} == {"controller-event-thread"}
    assert all(t is not threading.current_thread() for t in processor.threads)
    assert len({id(t) for t in processor.threads}) == 1


def test_thread_is_named_controller_event_thread() -> None:
    assert THREAD_NAME == "controller-event-thread"


def test_events_put_from_many_threads_are_each_processed_once(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    def producer(base: int) -> None:
        for i in range(50):
            manager.put(Numbered(base + i))

    producers = [threading.Thread(target=producer, args=(k * 1000,)) for k in range(4)]
    for t in producers:
        t.start()
    for t in producers:
        t.join(TIMEOUT)
    wait_for_processed(processor, 200)
    numbers = [e.n for e in processor.processed if isinstance(e, Numbered)]
    assert sorted(numbers) == sorted(k * 1000 + i for k in range(4) for i in range(50))
    for k in range(4):  # each producer's events keep their order
        mine = [n for n in numbers if n // 1000 == k]
        assert mine == sorted(mine)


def test_state_names_the_event_being_processed_and_returns_to_idle(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    blocker = block(manager)
    assert manager.state is ControllerState.BROKER_CHANGE
    blocker.release.set()
    manager.put(Numbered(1))
    wait_for_processed(processor, 2)
    assert processor.states_seen == [ControllerState.BROKER_CHANGE, ControllerState.TOPIC_CHANGE]
    wait_until(
        lambda: manager.state is ControllerState.IDLE,
        TIMEOUT,
        lambda: f"state {manager.state}",
        POLL,
    )


def test_is_event_thread_is_true_only_on_the_event_thread(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    manager.put(Numbered(1))
    wait_for_processed(processor, 1)
    assert processor.on_event_thread == [True]
    assert manager.is_event_thread is False


def test_clear_and_put_drops_queued_events_and_preempts_each(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    answers: list[tuple[int, ControlledShutdownResponse]] = []
    blocker = block(manager)
    manager.put(ControlledShutdown(1, 101, lambda r: answers.append((1, r))))
    manager.put(Numbered(1))
    manager.put(ControlledShutdown(2, 102, lambda r: answers.append((2, r))))
    assert manager.queue_size() == 3

    manager.clear_and_put(Numbered(2))

    not_controller = ControlledShutdownResponse(Errors.NOT_CONTROLLER)
    assert answers == [(1, not_controller), (2, not_controller)]
    assert manager.queue_size() == 1
    blocker.release.set()
    wait_for_processed(processor, 2)
    assert processor.processed == [blocker, Numbered(2)]


def test_preempted_controlled_shutdown_answers_not_controller() -> None:
    answers: list[ControlledShutdownResponse] = []
    ControlledShutdown(1, 5, answers.append).preempt()
    assert answers == [ControlledShutdownResponse(Errors.NOT_CONTROLLER)]
    assert answers[0].error == 41


def test_exception_is_reported_and_later_events_are_processed(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    failing = Failing("bad event")
    manager.put(Numbered(1))
    manager.put(failing)
    manager.put(Numbered(2))
    wait_for_processed(processor, 2)
    assert processor.processed == [Numbered(1), Numbered(2)]
    assert len(processor.errors) == 1
    event, error, thread_name = processor.errors[0]
    assert event is failing
    assert isinstance(error, RuntimeError)
    assert str(error) == "bad event"
    assert thread_name == THREAD_NAME


class BrokenReporter(RecordingProcessor):
    """A processor whose error report itself raises."""

    def on_process_error(
        self, event: ControllerEvent, error: BaseException, may_retry: bool = False
    ) -> None:
        raise ValueError("reporting failed too")


def test_a_failing_error_report_does_not_kill_the_thread() -> None:
    processor = BrokenReporter()
    em = ControllerEventManager(processor)
    em.start()
    try:
        em.put(Failing())
        em.put(Numbered(3))
        wait_for_processed(processor, 1)
        assert processor.processed == [Numbered(3)]
    finally:
        em.shutdown(TIMEOUT)


def test_queue_time_is_reported_for_each_event(processor: RecordingProcessor) -> None:
    queue_times: list[float] = []
    em = ControllerEventManager(processor, on_queue_time=queue_times.append)
    em.put(Numbered(1))
    em.put(Numbered(2))
    assert em.queue_size() == 2
    em.start()
    try:
        wait_for_processed(processor, 2)
        assert len(queue_times) == 2
        assert all(t >= 0 for t in queue_times)
        assert em.last_queue_time_ms >= 0
    finally:
        em.shutdown(TIMEOUT)


def test_shutdown_stops_the_thread(processor: RecordingProcessor) -> None:
    em = ControllerEventManager(processor)
    em.start()
    em.put(Numbered(1))
    wait_for_processed(processor, 1)
    thread = processor.threads[0]
    assert thread.is_alive()

    em.shutdown(TIMEOUT)

    assert not thread.is_alive()
    em.put(Numbered(2))
    assert em.queue_size() == 1  # nobody takes it any more
    assert processor.processed == [Numbered(1)]


def test_shutdown_preempts_queued_events(processor: RecordingProcessor) -> None:
    em = ControllerEventManager(processor)
    em.start()
    answers: list[ControlledShutdownResponse] = []
    blocker = block(em)
    em.put(ControlledShutdown(4, 44, answers.append))
    stopper = threading.Thread(target=em.shutdown, args=(TIMEOUT,), name="test-stopper")
    stopper.start()
    try:
        wait_until(lambda: answers, TIMEOUT, "queued event was not preempted", POLL)
        assert answers == [ControlledShutdownResponse(Errors.NOT_CONTROLLER)]
    finally:
        blocker.release.set()
        stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    assert not processor.threads[0].is_alive()
    assert processor.processed == [blocker]


def test_shutdown_of_a_never_started_manager_returns(processor: RecordingProcessor) -> None:
    answers: list[ControlledShutdownResponse] = []
    em = ControllerEventManager(processor)
    em.put(ControlledShutdown(1, 1, answers.append))
    em.shutdown(TIMEOUT)
    assert answers == [ControlledShutdownResponse(Errors.NOT_CONTROLLER)]
    assert processor.processed == []


# -- the session gate ----------------------------------------------------------------------


def wait_holding(em: ControllerEventManager) -> None:
    """Wait until the event thread holds an event at the closed gate."""
    wait_until(lambda: em.holding, TIMEOUT, "no event held at the gate", interval=POLL)


def test_a_paused_manager_holds_events_until_resumed(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    """While the session is suspended the controller stops acting; the same session coming
    back releases what was held, in order."""
    manager.pause()
    manager.put(Numbered(1))
    manager.put(Numbered(2))
    wait_holding(manager)
    assert processor.processed == []
    assert manager.queue_size() == 1  # the first is held, the second still queued
    manager.resume()
    wait_for_processed(processor, 2)
    assert processor.processed == [Numbered(1), Numbered(2)]
    assert not manager.holding


def test_clear_and_put_releases_the_gate_and_drops_the_event_held(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    """An expiry while suspended: the held event and the queued ones are preempted and the
    expiry's event is processed at once."""
    answers: list[ControlledShutdownResponse] = []
    manager.pause()
    manager.put(ControlledShutdown(2, 5, answers.append))
    wait_holding(manager)
    manager.put(Numbered(1))
    manager.clear_and_put(Numbered(99))
    wait_for_processed(processor, 1)
    assert processor.processed == [Numbered(99)]
    assert answers == [ControlledShutdownResponse(Errors.NOT_CONTROLLER)]


def test_an_event_taken_before_a_clear_is_dropped_by_it(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    """The thread took an event just before `clear_and_put`: it counts as queued, so it is
    preempted, not processed."""
    blocker = block(manager)
    manager.pause()
    manager.put(Numbered(1))
    blocker.release.set()
    wait_holding(manager)
    manager.clear_and_put(Numbered(2))
    wait_for_processed(processor, 2)
    assert processor.processed == [blocker, Numbered(2)]


def test_events_are_processed_with_the_cyclic_collector_paused(
    manager: ControllerEventManager, processor: RecordingProcessor
) -> None:
    """While an event is processed the collector is off (`controller.collector`); once
    the event thread is idle again it is back on."""
    gc.enable()
    blocker = block(manager)
    assert not gc.isenabled()
    blocker.release.set()
    wait_for_processed(processor, 1)
    wait_until(gc.isenabled, TIMEOUT, "the collector stayed off after the event", interval=POLL)
