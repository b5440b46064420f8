"""Bug switches `kafka-1188`, `kip-380` and `kafka-9839` on the broker's side: with one of
the first two on, the broker obeys the control requests its fencing rule would refuse (an
older controller epoch, an earlier registration of this broker); with `kafka-9839` it
refuses a request addressed to a newer registration than the one it cached; with none on,
it refuses the first and obeys the last."""

from __future__ import annotations

import threading

from broker_node.control_requests import ControlRequestHandler
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NEWER_BROKER_EPOCH_REJECTED, NO_BROKER_EPOCH, STALE_CONTROLLER_EPOCH
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

OLD_BROKER_EPOCH, BROKER_EPOCH = 100, 200


def _shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    raise AssertionError("not called")


def _handler(
    switches: BugSwitches, epoch: int = BROKER_EPOCH
) -> tuple[ControlRequestHandler, RecordingEventLog]:
    events = RecordingEventLog("broker1")
    handler = ControlRequestHandler(1, lambda: epoch, events, _shutdown, bug_switches=switches)
    return handler, events


def _metadata(controller_epoch: int, broker_epoch: int) -> m.UpdateMetadataRequest:
    return m.UpdateMetadataRequest(m.ControlHeader(2, controller_epoch, broker_epoch), (), ())


def _stop(controller_epoch: int, broker_epoch: int) -> m.StopReplicaRequest:
    return m.StopReplicaRequest(m.ControlHeader(2, controller_epoch, broker_epoch), ())


def _leader_and_isr(controller_epoch: int, broker_epoch: int) -> m.LeaderAndIsrRequest:
    return m.LeaderAndIsrRequest(m.ControlHeader(2, controller_epoch, broker_epoch), (), ())


def _after_epoch_5(switches: BugSwitches) -> tuple[ControlRequestHandler, RecordingEventLog]:
    handler, events = _handler(switches)
    assert handler.update_metadata(_metadata(5, BROKER_EPOCH)).error is Errors.NONE
    return handler, events


def test_an_older_controller_epoch_is_refused_by_default() -> None:
    handler, events = _after_epoch_5(NO_BUGS)
    assert (
        handler.update_metadata(_metadata(4, BROKER_EPOCH)).error is Errors.STALE_CONTROLLER_EPOCH
    )
    assert handler.stop_replica(_stop(4, BROKER_EPOCH)).error is Errors.STALE_CONTROLLER_EPOCH
    assert (
        handler.leader_and_isr(_leader_and_isr(4, BROKER_EPOCH)).error
        is Errors.STALE_CONTROLLER_EPOCH
    )
    assert len(events.of_kind(EventKind.REQUEST_ACCEPTED)) == 1


def test_kafka_1188_obeys_every_control_request_of_an_older_controller_epoch() -> None:
    handler, events = _after_epoch_5(BugSwitches(frozenset({STALE_CONTROLLER_EPOCH})))
    assert handler.update_metadata(_metadata(4, BROKER_EPOCH)).error is Errors.NONE
    assert handler.stop_replica(_stop(3, BROKER_EPOCH)).error is Errors.NONE
    assert handler.leader_and_isr(_leader_and_isr(4, BROKER_EPOCH)).error is Errors.NONE
    accepted = [e["controller_epoch"] for e in events.of_kind(EventKind.REQUEST_ACCEPTED)]
    assert accepted == [5, 4, 3, 4]
    assert handler.controller_epoch == 5  # the highest obeyed does not go back


def test_kafka_1188_keeps_the_broker_epoch_check() -> None:
    handler, _ = _after_epoch_5(BugSwitches(frozenset({STALE_CONTROLLER_EPOCH})))
    error = handler.update_metadata(_metadata(6, OLD_BROKER_EPOCH)).error
    assert error is Errors.STALE_BROKER_EPOCH


def test_a_request_for_an_earlier_registration_is_refused_by_default() -> None:
    handler, events = _handler(NO_BUGS)
    assert handler.stop_replica(_stop(5, OLD_BROKER_EPOCH)).error is Errors.STALE_BROKER_EPOCH
    assert events.of_kind(EventKind.REQUEST_ACCEPTED) == []


def test_kip_380_obeys_a_request_for_an_earlier_registration() -> None:
    handler, events = _handler(BugSwitches(frozenset({NO_BROKER_EPOCH})))
    assert handler.stop_replica(_stop(5, OLD_BROKER_EPOCH)).error is Errors.NONE
    (accepted,) = events.of_kind(EventKind.REQUEST_ACCEPTED)
    assert (accepted["request_broker_epoch"], accepted["broker_epoch"]) == (
        OLD_BROKER_EPOCH,
        BROKER_EPOCH,
    )


def test_kip_380_keeps_the_controller_epoch_check() -> None:
    handler, _ = _after_epoch_5(BugSwitches(frozenset({NO_BROKER_EPOCH})))
    assert (
        handler.update_metadata(_metadata(4, BROKER_EPOCH)).error is Errors.STALE_CONTROLLER_EPOCH
    )


def test_kip_380_does_not_wait_for_the_registration_before_obeying() -> None:
    """Before this process registers, a request addressed to its previous registration is
    obeyed at once instead of waiting for the new broker epoch."""
    handler, events = _handler(BugSwitches(frozenset({NO_BROKER_EPOCH})), epoch=-1)
    answers: list[Errors] = []
    caller = threading.Thread(
        target=lambda: answers.append(handler.update_metadata(_metadata(5, OLD_BROKER_EPOCH)).error)
    )
    caller.start()
    caller.join(10)
    assert not caller.is_alive()
    assert answers == [Errors.NONE]
    (accepted,) = events.of_kind(EventKind.REQUEST_ACCEPTED)
    assert accepted["broker_epoch"] == -1


NEWER_BROKER_EPOCH = 300


def test_a_request_for_a_newer_registration_is_obeyed_by_default() -> None:
    """The controller may learn of this broker's new registration before the broker has
    cached its epoch (the answer to its create is still on its way)."""
    handler, events = _handler(NO_BUGS)
    assert handler.leader_and_isr(_leader_and_isr(5, NEWER_BROKER_EPOCH)).error is Errors.NONE
    (accepted,) = events.of_kind(EventKind.REQUEST_ACCEPTED)
    assert accepted["request_broker_epoch"] == NEWER_BROKER_EPOCH


def test_kafka_9839_refuses_a_request_for_a_newer_registration() -> None:
    handler, events = _handler(BugSwitches(frozenset({NEWER_BROKER_EPOCH_REJECTED})))
    error = handler.leader_and_isr(_leader_and_isr(5, NEWER_BROKER_EPOCH)).error
    assert error is Errors.STALE_BROKER_EPOCH
    (rejected,) = events.of_kind(EventKind.REQUEST_REJECTED)
    assert (rejected["request_broker_epoch"], rejected["broker_epoch"]) == (
        NEWER_BROKER_EPOCH,
        BROKER_EPOCH,
    )
    assert handler.update_metadata(_metadata(5, BROKER_EPOCH)).error is Errors.NONE
    assert handler.update_metadata(_metadata(5, OLD_BROKER_EPOCH)).error is (
        Errors.STALE_BROKER_EPOCH
    )
