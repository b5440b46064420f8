"""Invariants 1 and 2 over hand-made event logs: one controller per controller epoch, a
broker's won epochs only grow, resignations name the epoch held, and no broker process
accepts a request from an older controller epoch than one it accepted."""

from __future__ import annotations

from eventlog import ControllerElected, ControllerResigned, EventKind, NodeStarted, RequestAccepted
from rundir.invariants import controller_epoch_fencing, one_controller_per_epoch
from rundir.invariants.testing import EventLogBuilder

ELECTED = EventKind.CONTROLLER_ELECTED
RESIGNED = EventKind.CONTROLLER_RESIGNED
ACCEPTED = EventKind.REQUEST_ACCEPTED
STARTED = EventKind.NODE_STARTED


def _elected(b: EventLogBuilder, broker: int, epoch: int) -> None:
    b.emit(
        f"broker{broker}",
        ControllerElected(
            controller_id=broker, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
        ),
    )


def _accepted(b: EventLogBuilder, node: str, controller: int, epoch: int) -> None:
    b.emit(
        node,
        RequestAccepted(
            api="UpdateMetadata",
            controller_id=controller,
            controller_epoch=epoch,
            request_broker_epoch=10,
            broker_epoch=10,
            partitions=0,
            partition_errors=0,
        ),
    )


def test_a_clean_failover_holds_invariant_1() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 1)
    _accepted(b, "broker2", 1, 1)
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=1, reason="test"))
    _elected(b, 2, 2)
    _accepted(b, "broker1", 2, 2)
    _elected(b, 1, 3)
    result = one_controller_per_epoch(b.logs())
    assert result.ok, result.violations
    assert result.checked == 3


def test_two_brokers_elected_with_one_epoch_are_both_named() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 4)
    _elected(b, 2, 4)
    result = one_controller_per_epoch(b.logs())
    (violation,) = result.violations
    assert violation.subject == "controller epoch 4"
    assert [(e.node, e.line, e.kind) for e in violation.events] == [
        ("broker1", 1, "controller_elected"),
        ("broker2", 1, "controller_elected"),
    ]
    assert "brokers broker 1, broker 2" in violation.explanation


def test_winning_an_epoch_not_above_one_already_seen_is_named() -> None:
    b = EventLogBuilder()
    _accepted(b, "broker2", 1, 7)
    _elected(b, 2, 6)
    (violation,) = one_controller_per_epoch(b.logs()).violations
    assert [(e.kind, e.fields["controller_epoch"]) for e in violation.events] == [
        ("request_accepted", 7),
        ("controller_elected", 6),
    ]
    assert "after its log had shown epoch 7" in violation.explanation


def test_won_epochs_must_grow_across_restarts() -> None:
    b = EventLogBuilder()
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    _elected(b, 1, 5)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    _elected(b, 1, 5)
    (violation,) = one_controller_per_epoch(b.logs()).violations
    assert [e.line for e in violation.events] == [2, 4]


def test_resigning_another_epoch_than_the_one_won_is_named() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 3)
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=2, reason="test"))
    (violation,) = one_controller_per_epoch(b.logs()).violations
    assert [e.kind for e in violation.events] == ["controller_elected", "controller_resigned"]
    assert "had won epoch 3" in violation.explanation


def test_resigning_without_having_won_in_this_process_is_named() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 3)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    (violation,) = one_controller_per_epoch(b.logs()).violations
    assert [(e.line, e.kind) for e in violation.events] == [(3, "controller_resigned")]


def test_requests_from_growing_or_equal_controller_epochs_hold_invariant_2() -> None:
    b = EventLogBuilder()
    for epoch in (1, 1, 2, 5, 5):
        _accepted(b, "broker3", 1, epoch)
    result = controller_epoch_fencing(b.logs())
    assert result.ok
    assert result.checked == 5


def test_a_request_from_an_older_controller_epoch_is_named_with_the_newer_one() -> None:
    b = EventLogBuilder()
    _accepted(b, "broker3", 2, 4)
    _accepted(b, "broker3", 2, 5)
    _accepted(b, "broker3", 1, 3)
    (violation,) = controller_epoch_fencing(b.logs()).violations
    assert violation.subject == "broker3 controller epoch 3"
    assert [(e.node, e.line, e.fields["controller_epoch"]) for e in violation.events] == [
        ("broker3", 2, 5),
        ("broker3", 3, 3),
    ]
    assert "after accepting epoch 5" in violation.explanation


def test_a_restarted_broker_starts_its_controller_epochs_afresh() -> None:
    b = EventLogBuilder()
    _accepted(b, "broker3", 2, 5)
    b.emit("broker3", NodeStarted(broker_id=3, zk_connect="zk"))
    _accepted(b, "broker3", 1, 3)
    assert controller_epoch_fencing(b.logs()).ok


def test_events_without_an_epoch_are_counted_not_judged() -> None:
    b = EventLogBuilder()
    b.emit_partial("broker3", "request_accepted", api="UpdateMetadata")
    result = controller_epoch_fencing(b.logs())
    assert result.ok
    assert result.checked == 0
    assert "1 request_accepted without controller_epoch" in result.note
