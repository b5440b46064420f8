"""`dead_broker_forgotten` over hand-made event logs: after a controller handles a
broker's failure, every broker it counts as live must hold metadata without the dead
broker within the bound, unless the dead broker came back, the observer's registration
ended, a fault that did more than take processes away held near it, or the logs end
before the bound."""

from __future__ import annotations

import pytest

import eventlog
from eventlog import (
    BrokerChange,
    BrokerRegistered,
    ControllerElected,
    LiveBrokersChanged,
    NodeStarted,
    ZkSessionState,
)
from rundir.disturbances import Disturbance
from rundir.events import Event
from rundir.invariants import RunInputs, judge
from rundir.invariants.dead_brokers import dead_broker_forgotten
from rundir.invariants.names import DEAD_BROKER_FORGOTTEN
from rundir.invariants.testing import EventLogBuilder

BOUND_MS = 10


def _registered(b: EventLogBuilder, broker: int, epoch: int = 7) -> Event:
    registration = BrokerRegistered(
        broker_id=broker,
        broker_epoch=epoch,
        previous_broker_epoch=-1,
        reregistration=False,
        session_id="0x1",
    )
    return b.emit(f"broker{broker}", registration)


def _believes(b: EventLogBuilder, broker: int, *live: int) -> Event:
    told = LiveBrokersChanged(
        live_brokers=sorted(live), added=[], removed=[], controller_id=1, controller_epoch=3
    )
    return b.emit(f"broker{broker}", told)


def _change(b: EventLogBuilder, dead: list[int], live: list[int]) -> Event:
    change = BrokerChange(
        new=[], dead=dead, bounced=[], live=live, epochs={str(i): 7 for i in live}
    )
    return b.emit("broker1", change)


def _cluster(b: EventLogBuilder) -> None:
    """Brokers 1, 2 and 3 registered, each believing all three alive."""
    for broker in (1, 2, 3):
        _registered(b, broker)
    for broker in (1, 2, 3):
        _believes(b, broker, 1, 2, 3)


def test_live_brokers_told_of_the_failure_in_time_hold() -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1, 2])
    _believes(b, 1, 1, 2)
    _believes(b, 2, 1, 2)
    b.advance(BOUND_MS)
    _believes(b, 1, 1, 2)  # the logs go on past the deadline
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 2


def test_a_live_broker_never_told_is_a_violation() -> None:
    """KAFKA-13225: broker 3 hosted nothing and a partition was already offline, so the
    controller sent no request and broker 1 kept broker 3 among the live."""
    b = EventLogBuilder()
    _cluster(b)
    change = _change(b, dead=[3], live=[1])
    stale = b.logs()["broker1"][-2]
    b.advance(BOUND_MS)
    _believes(b, 2, 1, 2)
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS)
    (violation,) = result.violations
    assert violation.subject == "broker 1"
    assert "still listed dead broker 3" in violation.explanation
    assert violation.events == (change, stale)


def test_a_late_update_does_not_count() -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1])
    b.advance(BOUND_MS)
    _believes(b, 1, 1)
    assert len(dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


@pytest.mark.parametrize(
    "ending",
    [NodeStarted(broker_id=1, zk_connect="zk"), ZkSessionState(state="lost", session_id=None)],
)
def test_an_observer_whose_registration_ends_is_not_judged(ending: eventlog.Event) -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1])
    b.emit("broker1", ending)
    b.advance(BOUND_MS)
    _believes(b, 2, 1, 2)
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS)
    assert result.ok
    assert result.checked == 0


def test_a_failure_whose_controller_is_replaced_within_the_bound_is_not_judged() -> None:
    """The controller that handled it may have died before it sent anything; its
    successor tells every live broker at failover, a session timeout later."""
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1, 2])
    elected = ControllerElected(
        controller_id=2, controller_epoch=4, epoch_zk_version=4, epoch_zxid=None
    )
    b.emit("broker2", elected)
    b.advance(BOUND_MS)
    _believes(b, 1, 1, 2)
    assert dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS).checked == 0


def test_a_dead_broker_back_within_the_bound_is_not_judged() -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1])
    _registered(b, 3, epoch=9)
    b.advance(BOUND_MS)
    _believes(b, 2, 1, 2)
    assert dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS).checked == 0


def test_a_restarted_observer_is_judged_only_on_what_its_new_process_was_told() -> None:
    b = EventLogBuilder()
    _cluster(b)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    _registered(b, 1, epoch=8)
    _change(b, dead=[3], live=[1])
    b.advance(BOUND_MS)
    _believes(b, 2, 1, 2)
    assert dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS).checked == 0


def test_failures_before_the_run_or_too_close_to_its_end_are_not_judged() -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1])
    b.advance(BOUND_MS)
    since = b.emit("broker2", ZkSessionState(state="suspended", session_id="0x1")).ts
    _change(b, dead=[2], live=[1])  # the logs end before its deadline
    assert dead_broker_forgotten(b.logs(), since, bound_ms=BOUND_MS).checked == 0


def test_the_judge_runs_it_when_a_scenario_asks() -> None:
    b = EventLogBuilder()
    _cluster(b)
    _change(b, dead=[3], live=[1])
    b.advance(10_001)
    _believes(b, 2, 1, 2)
    verdict = judge(RunInputs(events=b.logs(), also=frozenset({DEAD_BROKER_FORGOTTEN})))
    (result,) = (r for r in verdict.results if r.name == DEAD_BROKER_FORGOTTEN)
    assert not result.ok


def _unheard(b: EventLogBuilder) -> Event:
    """Broker 3 dies and broker 1, the controller's own, is never told; returns the
    controller's handling."""
    _cluster(b)
    change = _change(b, dead=[3], live=[1])
    b.advance(BOUND_MS)
    _believes(b, 2, 1, 2)
    return change


def _near(at: int, start: int, end: int, *targets: str) -> list[Disturbance]:
    return [Disturbance(at + start, at + end, frozenset(targets))]


@pytest.mark.parametrize(("start", "end"), [(-5, -1), (1, 3), (-100, -BOUND_MS), (5, 500)])
@pytest.mark.parametrize("target", ["broker1", "zk2", "*"])
def test_a_failure_a_disturbance_of_the_pair_meets_is_not_judged(
    start: int, end: int, target: str
) -> None:
    """A fault on the controller's or the observer's broker, or on ZooKeeper, that holds,
    or ended less than the bound before, from the handling to its deadline: the
    controller may not have reached the observer."""
    b = EventLogBuilder()
    at = _unheard(b).ts
    near = _near(at, start, end, target)
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS, disturbances=near)
    assert result.ok
    assert result.checked == 0


@pytest.mark.parametrize(
    ("start", "end", "target"),
    [
        (-100, -BOUND_MS - 1, "broker1"),  # over before
        (BOUND_MS + 1, BOUND_MS + 50, "broker1"),  # after the deadline
        (-5, 50, "broker3"),  # on the dead broker alone
    ],
)
def test_a_disturbance_away_from_the_pair_leaves_it_judged(
    start: int, end: int, target: str
) -> None:
    b = EventLogBuilder()
    at = _unheard(b).ts
    near = _near(at, start, end, target)
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS, disturbances=near)
    assert len(result.violations) == 1


def test_a_disturbance_of_one_observer_leaves_the_other_judged() -> None:
    b = EventLogBuilder()
    _cluster(b)
    at = _change(b, dead=[3], live=[1, 2]).ts
    _believes(b, 1, 1, 2)  # broker 2's metadata still lists broker 3
    b.advance(BOUND_MS)
    _believes(b, 3, 1, 2)
    near = _near(at, 0, 5, "broker2")
    result = dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS, disturbances=near)
    assert result.ok
    assert result.checked == 1
    assert len(dead_broker_forgotten(b.logs(), 0, bound_ms=BOUND_MS).violations) == 1


def test_the_judge_skips_the_pairs_its_inputs_say_were_disturbed() -> None:
    b = EventLogBuilder()
    _cluster(b)
    at = _change(b, dead=[3], live=[1]).ts
    b.advance(10_001)
    _believes(b, 2, 1, 2)
    asked = frozenset({DEAD_BROKER_FORGOTTEN})
    near = _near(at, -1, 1, "zk1")
    inputs = RunInputs(events=b.logs(), also=asked, disturbances=near)
    (result,) = (r for r in judge(inputs).results if r.name == DEAD_BROKER_FORGOTTEN)
    assert result.ok
    assert result.checked == 0
