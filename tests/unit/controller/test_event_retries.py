"""An event whose handling lost the ZooKeeper connection, with the session kept, is
handled again once the session is connected, when its handler decides from what it reads
(Kafka's client retries the request until connected; kazoo fails it with
ConnectionLoss). Anything else, or an event with a caller to answer, fails once.

Synchronized with `threading.Event`s and `wait_until`, never with sleeps.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import cast

from kazoo.exceptions import ConnectionLoss

from controller import events as ev
from controller.controller import KafkaController
from controller.event_manager import MAX_RETRIES, ControllerEventManager
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc.errors import Errors
from rpc.messages import ElectLeadersResponse
from zkdata.client import KafkaZkClient

TIMEOUT = 5.0


@dataclass
class Flaky:
    """Fails the first `losses` handlings of each event with ConnectionLoss; asks for a
    retry as the controller does for an event that rereads."""

    losses: int
    handled: int = 0
    reported: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    #: Paused on each failure, as the session listener pauses it on a lost connection.
    manager: ControllerEventManager | None = None

    def process(self, event: ev.ControllerEvent) -> None:
        self.handled += 1
        if self.handled <= self.losses:
            raise ConnectionLoss()
        self.done.set()

    def on_process_error(
        self, event: ev.ControllerEvent, error: BaseException, may_retry: bool
    ) -> bool:
        self.reported += 1
        if self.manager is not None:
            self.manager.pause()
        if not may_retry:
            self.done.set()
        return event.rereads


def _run(processor: Flaky, event: ev.ControllerEvent) -> None:
    manager = ControllerEventManager(processor)
    manager.start()
    try:
        manager.put(event)
        assert processor.done.wait(TIMEOUT)
    finally:
        manager.shutdown(TIMEOUT)


def test_an_event_that_rereads_is_handled_again_after_a_lost_connection() -> None:
    processor = Flaky(losses=2)
    _run(processor, ev.BrokerChange())
    assert (processor.handled, processor.reported) == (3, 2)


def test_the_retry_waits_for_the_connection() -> None:
    processor = Flaky(losses=1)
    manager = ControllerEventManager(processor)
    processor.manager = manager
    manager.start()
    try:
        manager.put(ev.IsrChangeNotification())
        wait_until(lambda: manager.holding, TIMEOUT, "the retry was not held")
        assert processor.handled == 1
        manager.resume()
        assert processor.done.wait(TIMEOUT)
    finally:
        manager.shutdown(TIMEOUT)
    assert processor.handled == 2


def test_retries_stop_after_max_retries() -> None:
    processor = Flaky(losses=100)
    _run(processor, ev.TopicChange())
    assert processor.handled == MAX_RETRIES + 1
    assert processor.reported == MAX_RETRIES + 1


def test_an_event_that_does_not_reread_fails_once() -> None:
    processor = Flaky(losses=1)
    manager = ControllerEventManager(processor)
    manager.start()
    try:
        manager.put(ev.Reelect())
        wait_until(lambda: processor.reported == 1, TIMEOUT, "the failure was not reported")
        manager.put(ev.Reelect())  # the second one is handled: the first was not retried
        assert processor.done.wait(TIMEOUT)
    finally:
        manager.shutdown(TIMEOUT)
    assert processor.handled == 2


def _controller() -> tuple[KafkaController, RecordingEventLog]:
    events = RecordingEventLog()
    return KafkaController(3, cast(KafkaZkClient, object()), events, lambda: 0), events


def test_the_controller_retries_a_lost_connection_of_an_event_that_rereads() -> None:
    controller, events = _controller()
    assert controller.on_process_error(ev.BrokerChange(), ConnectionLoss(), may_retry=True)
    [failed] = events.of_kind(EventKind.EVENT_FAILED)
    assert (failed["event"], failed["retried"]) == ("BrokerChange", True)
    # the last try, another error: reported, not retried
    assert not controller.on_process_error(ev.BrokerChange(), ConnectionLoss(), may_retry=False)
    assert not controller.on_process_error(ev.TopicChange(), RuntimeError("x"), may_retry=True)
    assert [e["retried"] for e in events.of_kind(EventKind.EVENT_FAILED)] == [True, False, False]


def test_an_event_with_a_caller_is_answered_not_retried() -> None:
    controller, _ = _controller()
    answers: list[ElectLeadersResponse] = []
    elect = ev.ElectLeaders(0, (), answers.append)
    assert not controller.on_process_error(elect, ConnectionLoss(), may_retry=True)
    assert [a.error for a in answers] == [Errors.NOT_CONTROLLER]
