"""A control request that reaches a broker process before it has registered waits for the
registration, as Kafka's broker processes nothing before it registers: only the new broker
epoch tells a request for this process from one meant for its previous process."""

from __future__ import annotations

import threading

import pytest

from broker_node import control_requests
from broker_node.control_requests import ControlRequestHandler
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

OLD, NEW = 100, 200


def _shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    raise AssertionError("not called")


class Registration:
    """The broker's epoch: -1 until `register` runs on another thread."""

    def __init__(self) -> None:
        self.epoch = -1

    def read(self) -> int:
        return self.epoch


def _update(handler: ControlRequestHandler, broker_epoch: int) -> m.UpdateMetadataResponse:
    request = m.UpdateMetadataRequest(m.ControlHeader(2, 5, broker_epoch), (), ())
    return handler.update_metadata(request)


def _registered_while_waiting(request_epoch: int) -> tuple[Errors, RecordingEventLog]:
    registration = Registration()
    events = RecordingEventLog("broker1")
    handler = ControlRequestHandler(1, registration.read, events, _shutdown)
    answers: list[Errors] = []
    caller = threading.Thread(target=lambda: answers.append(_update(handler, request_epoch).error))
    caller.start()
    registration.epoch = NEW
    handler.on_registered()
    caller.join(10)
    assert not caller.is_alive()
    return answers[0], events


def test_a_request_for_the_previous_process_is_rejected_once_registered() -> None:
    error, events = _registered_while_waiting(OLD)
    assert error is Errors.STALE_BROKER_EPOCH
    (rejected,) = events.of_kind(EventKind.REQUEST_REJECTED)
    assert (rejected["request_broker_epoch"], rejected["broker_epoch"]) == (OLD, NEW)


def test_a_request_for_this_process_is_accepted_once_registered() -> None:
    error, events = _registered_while_waiting(NEW)
    assert error is Errors.NONE
    assert len(events.of_kind(EventKind.REQUEST_ACCEPTED)) == 1


def test_a_request_without_a_broker_epoch_does_not_wait() -> None:
    handler = ControlRequestHandler(1, Registration().read, RecordingEventLog("b1"), _shutdown)
    assert _update(handler, -1).error is Errors.NONE


def test_no_registration_in_time_is_broker_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_requests, "REGISTRATION_WAIT_S", 0.01)
    events = RecordingEventLog("broker1")
    handler = ControlRequestHandler(1, Registration().read, events, _shutdown)
    assert _update(handler, OLD).error is Errors.BROKER_NOT_AVAILABLE
    (rejected,) = events.of_kind(EventKind.REQUEST_REJECTED)
    assert rejected["error"] == "BROKER_NOT_AVAILABLE"
