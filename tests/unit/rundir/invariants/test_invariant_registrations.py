"""`registration_served` over hand-made event logs: a broker registration of the run must
get a request addressed to its broker epoch within the bound, unless it ended first or
the run ended before the bound."""

from __future__ import annotations

import pytest

import eventlog
from eventlog import (
    BrokerRegistered,
    ControlRequestSent,
    IsrChanged,
    NodeStarted,
    NodeStopped,
    ZkSessionState,
)
from rundir.events import Event
from rundir.invariants import RunInputs, judge
from rundir.invariants.registrations import registration_served
from rundir.invariants.testing import EventLogBuilder
from rundir.testing import HistoryBuilder

BOUND_MS = 10


def _registered(b: EventLogBuilder, epoch: int = 7) -> Event:
    return b.emit(
        "broker2",
        BrokerRegistered(
            broker_id=2,
            broker_epoch=epoch,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        ),
    )


def _sent(b: EventLogBuilder, epoch: int = 7, broker_id: int = 2) -> Event:
    return b.emit(
        "broker1",
        ControlRequestSent(
            api="UpdateMetadata",
            broker_id=broker_id,
            controller_epoch=3,
            broker_epoch=epoch,
            partitions=6,
        ),
    )


#: Some other event, a millisecond of a busy log.
_BUSY = IsrChanged(
    topic="t", partition=0, reason="expand", leader=1, leader_epoch=0, isr=[], zk_version=0
)


def _idle(b: EventLogBuilder, ms: int) -> None:
    for _ in range(ms):
        b.emit("broker3", _BUSY)


@pytest.mark.parametrize("request_first", [False, True])
def test_a_registration_sent_a_request_at_its_epoch_in_time_is_served(
    request_first: bool,
) -> None:
    """Also when the request comes first in time: the broker epoch is the registration
    znode's czxid, so a request addressed to it was sent after the registration existed,
    even when the broker learned of its own registration later than the controller did
    (its reply slowed by a latency)."""
    b = EventLogBuilder()
    first, second = (_sent, _registered) if request_first else (_registered, _sent)
    first(b)
    _idle(b, 3)
    second(b)
    _idle(b, BOUND_MS)
    result = registration_served(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 1


def test_a_registration_the_controller_never_addresses_is_a_violation() -> None:
    b = EventLogBuilder()
    registered = _registered(b)
    _sent(b, broker_id=3)  # the controller goes on with the other brokers
    _idle(b, BOUND_MS)
    result = registration_served(b.logs(), 0, bound_ms=BOUND_MS)
    (violation,) = result.violations
    assert violation.subject == "broker 2 broker epoch 7"
    assert violation.events == (registered,)
    assert "within 0.01 s" in violation.explanation


def test_requests_to_the_previous_broker_epoch_do_not_serve_the_new_registration() -> None:
    b = EventLogBuilder()
    _registered(b, epoch=9)
    _sent(b, epoch=7)  # a controller that missed the bounce keeps the old epoch
    _idle(b, BOUND_MS)
    assert len(registration_served(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


def test_a_request_after_the_bound_is_too_late() -> None:
    b = EventLogBuilder()
    _registered(b)
    _idle(b, BOUND_MS)
    _sent(b)  # the next broker change lists it, long after
    assert len(registration_served(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


@pytest.mark.parametrize(
    "ending",
    [
        NodeStarted(broker_id=2, zk_connect="zk"),
        NodeStopped(broker_id=2),
        BrokerRegistered(
            broker_id=2,
            broker_epoch=8,
            previous_broker_epoch=-1,
            reregistration=False,
            session_id="0x1",
        ),
        ZkSessionState(state="lost", session_id=None),
    ],
)
def test_a_registration_that_ends_before_its_deadline_is_not_judged(ending: eventlog.Event) -> None:
    b = EventLogBuilder()
    _registered(b)
    b.emit("broker2", ending)
    if isinstance(ending, BrokerRegistered):
        _sent(b, epoch=8)  # the new registration is served
    _idle(b, BOUND_MS)
    result = registration_served(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == (1 if isinstance(ending, BrokerRegistered) else 0)


def test_a_session_that_is_only_suspended_does_not_end_the_registration() -> None:
    b = EventLogBuilder()
    _registered(b)
    b.emit("broker2", ZkSessionState(state="suspended", session_id="0x1"))
    _idle(b, BOUND_MS)
    assert len(registration_served(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


def test_registrations_before_the_run_or_too_close_to_its_end_are_not_judged() -> None:
    b = EventLogBuilder()
    _registered(b, epoch=5)  # before the run
    since = _idle_then(b)
    late = _registered(b)  # the logs end before its deadline
    logs = b.logs()
    assert registration_served(logs, since, bound_ms=BOUND_MS).checked == 0
    judged = registration_served(logs, since, until_ms=late.ts + BOUND_MS, bound_ms=BOUND_MS)
    assert judged.checked == 1
    assert not judged.ok


def _idle_then(b: EventLogBuilder) -> int:
    _idle(b, BOUND_MS)
    return b.emit("broker3", _BUSY).ts + 1


def test_the_judge_runs_it_when_asked_up_to_the_workloads_last_operation() -> None:
    b = EventLogBuilder()
    registered = _registered(b)  # nothing is logged afterwards: the cluster is quiet
    h = HistoryBuilder()
    h.send("producer-0", 0, "a", "ok", 0)
    read = h.final_read({0: ["a"]})
    inputs = RunInputs(b.logs(), h.ops, read)
    assert "registration_served" not in [r.name for r in judge(inputs).results]
    asked = RunInputs(b.logs(), h.ops, read, also=frozenset({"registration_served"}))
    assert judge(asked).result("registration_served").checked == 0  # the ops end too soon
    # the workload went on for the 15 s after the registration: it is judged
    last = h.ops[-1]._replace(wall_ms=registered.ts + 15_000)
    later = RunInputs(b.logs(), [*h.ops[:-1], last], read, also=asked.also)
    result = judge(later).result("registration_served")
    assert result.checked == 1
    assert not result.ok
