"""Invariant 3 (KIP-380) over hand-made event logs: an accepted request addressed to an
older registration of the broker is named with the registration it was older than; a
request refused as stale although it was addressed to a newer registration is named
too (KAFKA-9839)."""

from __future__ import annotations

from eventlog import BrokerRegistered, NodeStarted, RequestAccepted, RequestRejected
from rundir.invariants import broker_epoch_fencing
from rundir.invariants.testing import EventLogBuilder

NODE = "broker1"


def _registered(b: EventLogBuilder, epoch: int, previous: int = -1) -> None:
    b.emit(
        NODE,
        BrokerRegistered(
            broker_id=1,
            broker_epoch=epoch,
            previous_broker_epoch=previous,
            reregistration=previous != -1,
            session_id="0x1",
        ),
    )


def _accepted(b: EventLogBuilder, addressed: int, read: int) -> None:
    b.emit(
        NODE,
        RequestAccepted(
            api="LeaderAndIsr",
            controller_id=2,
            controller_epoch=1,
            request_broker_epoch=addressed,
            broker_epoch=read,
            partitions=1,
            partition_errors=0,
        ),
    )


def _started(b: EventLogBuilder) -> None:
    b.emit(NODE, NodeStarted(broker_id=1, zk_connect="zk"))


def test_requests_to_the_current_or_a_newer_epoch_hold() -> None:
    b = EventLogBuilder()
    _started(b)
    _registered(b, 100)
    _accepted(b, 100, 100)
    _accepted(b, 150, 100)  # the controller saw a registration before the broker logged it
    _accepted(b, -1, 100)
    _registered(b, 200, previous=100)
    _accepted(b, 200, 200)
    result = broker_epoch_fencing(b.logs())
    assert result.ok, result.violations
    assert result.checked == 3
    assert "1 requests addressed to epoch -1" in result.note


def test_a_request_older_than_the_epoch_its_check_read_is_named() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    _accepted(b, 90, 100)
    (violation,) = broker_epoch_fencing(b.logs()).violations
    assert violation.subject == "broker1 broker epoch 90"
    assert [(e.line, e.kind) for e in violation.events] == [
        (1, "broker_registered"),
        (2, "request_accepted"),
    ]
    assert "older than the epoch 100 its own check read" in violation.explanation


def test_a_request_older_than_the_current_registration_is_named() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    _registered(b, 200, previous=100)
    _accepted(b, 150, 150)  # its check read an epoch the broker never had
    (violation,) = broker_epoch_fencing(b.logs()).violations
    assert [(e.line, e.fields["broker_epoch"]) for e in violation.events] == [(2, 200), (3, 150)]
    assert "older than its registration with epoch 200" in violation.explanation


def test_a_request_checked_just_before_a_reregistration_holds() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    _registered(b, 200, previous=100)
    _accepted(b, 100, 100)  # checked against 100, logged after the new registration
    assert broker_epoch_fencing(b.logs()).ok


def test_a_request_for_the_previous_process_before_registering_is_named() -> None:
    b = EventLogBuilder()
    _started(b)
    _registered(b, 100)
    _started(b)
    _accepted(b, 100, -1)
    (violation,) = broker_epoch_fencing(b.logs()).violations
    assert [(e.line, e.kind) for e in violation.events] == [
        (2, "broker_registered"),
        (4, "request_accepted"),
    ]
    assert "before this process registered" in violation.explanation


def test_the_previous_process_s_epoch_stays_stale_after_the_new_registration() -> None:
    b = EventLogBuilder()
    _started(b)
    _registered(b, 100)
    _started(b)
    _registered(b, 300)
    _accepted(b, 100, -1)  # read before registering: no excuse across processes
    (violation,) = broker_epoch_fencing(b.logs()).violations
    assert [e.line for e in violation.events] == [4, 5]


def test_logs_are_judged_per_broker() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    b.emit(
        "broker2",
        RequestAccepted(
            api="UpdateMetadata",
            request_broker_epoch=50,
            broker_epoch=50,
            controller_id=1,
            controller_epoch=1,
            partitions=0,
            partition_errors=0,
        ),
    )
    assert broker_epoch_fencing(b.logs()).ok


def _rejected(b: EventLogBuilder, addressed: int, read: int, error: str) -> None:
    b.emit(
        NODE,
        RequestRejected(
            api="UpdateMetadata",
            error=error,
            error_code=77 if error == "STALE_BROKER_EPOCH" else 8,
            controller_id=2,
            controller_epoch=1,
            request_broker_epoch=addressed,
            broker_epoch=read,
            highest_controller_epoch=1,
        ),
    )


def test_refusing_an_older_epoch_or_waiting_for_the_registration_holds() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    _rejected(b, 90, 100, "STALE_BROKER_EPOCH")
    _rejected(b, 150, -1, "BROKER_NOT_AVAILABLE")
    assert broker_epoch_fencing(b.logs()).ok


def test_a_newer_epoch_refused_as_stale_is_named() -> None:
    b = EventLogBuilder()
    _registered(b, 100)
    _rejected(b, 150, 100, "STALE_BROKER_EPOCH")
    _registered(b, 150, previous=100)
    (violation,) = broker_epoch_fencing(b.logs()).violations
    assert violation.subject == "broker1 broker epoch 150"
    assert [(e.line, e.kind) for e in violation.events] == [(2, "request_rejected")]
    assert "newer than the epoch 100 its own check read" in violation.explanation
