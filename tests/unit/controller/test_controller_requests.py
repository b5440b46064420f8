"""How `KafkaController` answers the admin requests a gRPC thread hands it, without an
event thread: not the controller, and a request the event thread does not answer in time."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest

from controller.controller import KafkaController
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors
from zkdata.client import KafkaZkClient


class RecordingEvent(threading.Event):
    """A `threading.Event` that remembers how long it was asked to wait."""

    waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        RecordingEvent.waits.append(timeout)
        return super().wait(0)


def make_controller(active: bool) -> KafkaController:
    """A controller whose event thread never runs; `active` pretends it won the election."""
    controller = KafkaController(1, cast(KafkaZkClient, None), RecordingEventLog("b1"), lambda: 0)
    if active:
        controller._active_controller_id = 1  # the election is not under test
    return controller


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    RecordingEvent.waits = []
    monkeypatch.setattr(threading, "Event", RecordingEvent)
    return RecordingEvent.waits


def test_elect_leaders_waits_as_long_as_the_request_asks(waits: list[Any]) -> None:
    reply = make_controller(active=True).elect_leaders(m.ElectLeadersRequest(0, (), 1500))
    assert reply.error is Errors.REQUEST_TIMED_OUT
    assert waits == [1.5]


def test_elect_leaders_without_a_timeout_waits_the_default(waits: list[Any]) -> None:
    reply = make_controller(active=True).elect_leaders(m.ElectLeadersRequest(0, (), 0))
    assert reply.error is Errors.REQUEST_TIMED_OUT
    assert waits == [60.0]


def test_a_broker_that_is_not_the_controller_says_so(waits: list[Any]) -> None:
    controller = make_controller(active=False)
    assert controller.elect_leaders(m.ElectLeadersRequest(0, (), 100)).error is (
        Errors.NOT_CONTROLLER
    )
    request = m.ControlledShutdownRequest(2, 5)
    assert controller.controlled_shutdown(request).error is Errors.NOT_CONTROLLER
    assert waits == []
