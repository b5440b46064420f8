"""`reregistration_completes` over hand-made event logs: a broker that lost its session and
opened a new one must log its new registration within the bound, unless the new session
was lost too, its process stopped or started again, or the run ended before the bound."""

from __future__ import annotations

import pytest

import eventlog
from eventlog import (
    BrokerRegistered,
    EventFailed,
    IsrChanged,
    NodeStarted,
    NodeStopped,
    ZkSessionState,
)
from rundir.events import Event
from rundir.invariants import RunInputs, judge
from rundir.invariants.registrations import reregistration_completes
from rundir.invariants.testing import EventLogBuilder
from rundir.testing import HistoryBuilder

BOUND_MS = 10
_BUSY = IsrChanged(
    topic="t", partition=0, reason="expand", leader=1, leader_epoch=0, isr=[], zk_version=0
)


def _idle(b: EventLogBuilder, ms: int) -> None:
    for _ in range(ms):
        b.emit("broker3", _BUSY)


def _session(b: EventLogBuilder, state: str, session_id: str | None = "0x2") -> Event:
    return b.emit("broker2", ZkSessionState(state=state, session_id=session_id))


def _registered(b: EventLogBuilder) -> Event:
    return b.emit(
        "broker2",
        BrokerRegistered(
            broker_id=2,
            broker_epoch=9,
            previous_broker_epoch=7,
            reregistration=True,
            session_id="0x2",
        ),
    )


def _gave_up(b: EventLogBuilder) -> Event:
    return b.emit(
        "broker2",
        EventFailed(
            event="RegisterBrokerAndReelect",
            error="BrokerIdInUseError: /brokers/ids/2 already exists",
            retried=False,
        ),
    )


def test_a_broker_that_registers_on_its_new_session_completes() -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)
    _idle(b, 3)
    _session(b, "connected")
    _idle(b, 3)
    _registered(b)
    _idle(b, BOUND_MS * 2)
    result = reregistration_completes(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 1


def test_a_new_session_without_a_registration_is_a_violation() -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)
    connected = _session(b, "connected")
    _gave_up(b)  # the re-registration met a node and gave up
    _idle(b, BOUND_MS + 1)
    result = reregistration_completes(b.logs(), 0, bound_ms=BOUND_MS)
    (violation,) = result.violations
    assert violation.subject == "broker broker2 session 0x2"
    assert violation.events == (connected,)
    assert "within 0.01 s" in violation.explanation


def test_a_registration_after_the_bound_is_too_late() -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)
    _session(b, "connected")
    _idle(b, BOUND_MS + 1)
    _registered(b)  # its next session, say, long after
    assert len(reregistration_completes(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


@pytest.mark.parametrize(
    "ending",
    [
        NodeStarted(broker_id=2, zk_connect="zk"),
        NodeStopped(broker_id=2),
        ZkSessionState(state="lost", session_id=None),
    ],
)
def test_a_new_session_that_ends_before_its_deadline_is_not_judged(
    ending: eventlog.Event,
) -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)
    _session(b, "connected")
    b.emit("broker2", ending)
    _idle(b, BOUND_MS * 2)
    result = reregistration_completes(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 0


def test_a_connection_regained_within_the_session_asks_for_nothing() -> None:
    b = EventLogBuilder()
    _session(b, "suspended")
    _session(b, "connected")
    _idle(b, BOUND_MS * 2)
    result = reregistration_completes(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 0


def test_losses_before_the_run_and_sessions_too_close_to_its_end_are_not_judged() -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)  # before the run
    _idle(b, 2)
    since = b.emit("broker3", _BUSY).ts + 1
    _session(b, "connected")
    _idle(b, BOUND_MS * 2)
    assert reregistration_completes(b.logs(), since, bound_ms=BOUND_MS).checked == 0
    b2 = EventLogBuilder()
    _session(b2, "lost", None)
    late = _session(b2, "connected")  # the logs end before its deadline
    logs = b2.logs()
    assert reregistration_completes(logs, 0, bound_ms=BOUND_MS).checked == 0
    until = late.ts + BOUND_MS
    judged = reregistration_completes(logs, 0, until_ms=until, bound_ms=BOUND_MS)
    assert judged.checked == 1
    assert not judged.ok


def test_the_judge_runs_it_when_asked() -> None:
    b = EventLogBuilder()
    _session(b, "lost", None)
    connected = _session(b, "connected")
    h = HistoryBuilder()
    h.send("producer-0", 0, "a", "ok", 0)
    read = h.final_read({0: ["a"]})
    inputs = RunInputs(b.logs(), h.ops, read)
    assert "reregistration_completes" not in [r.name for r in judge(inputs).results]
    last = h.ops[-1]._replace(wall_ms=connected.ts + 15_000)
    asked = RunInputs(
        b.logs(), [*h.ops[:-1], last], read, also=frozenset({"reregistration_completes"})
    )
    result = judge(asked).result("reregistration_completes")
    assert result.checked == 1
    assert not result.ok
