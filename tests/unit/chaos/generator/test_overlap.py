"""The overlap rules: which faults may be active at once, and over which window."""

from __future__ import annotations

import pytest

from chaos.faults.registry import FAULT_TYPES
from chaos.generator.overlap import (
    AFTERMATH_S,
    FOOTPRINTS,
    RECOVERY_S,
    ZK_RECOVERY_S,
    overlap_violations,
    takes_broker_away,
    why_not_together,
    window,
)
from chaos.generator.schedule import FaultSpec, Schedule, Step


def _spec(kind: str, target: str) -> FaultSpec:
    return FaultSpec.of(kind, target)


def test_every_fault_kind_has_a_footprint() -> None:
    assert FOOTPRINTS.keys() == FAULT_TYPES.keys()


@pytest.mark.parametrize(
    ("a", "b", "rule"),
    [
        (("partition", "all"), ("latency", "controller"), "overlaps nothing"),
        (("zk-pause", "zk-follower"), ("kill", "zk-leader"), "ZooKeeper"),
        (("cpu-starve", "zk-leader"), ("clock", "zk-follower"), "ZooKeeper"),
        # a soak's run: the spells found the ensemble without a leader after a kill
        (("zk-lost-reply", "busiest-leader"), ("zk-leader-kill", "zk-leader"), "ZooKeeper"),
        (("zk-lost-reply", "broker:1"), ("zk-lost-reply", "broker:2"), "ZooKeeper"),
        (("kill", "controller"), ("zk-isolate", "non-controller"), "takes a broker away"),
        (("loss", "all-brokers"), ("bounce", "random-broker"), "takes a broker away"),
        (("latency", "controller"), ("bandwidth", "non-controller"), "netem"),
        (("clock", "controller"), ("clock", "all-brokers"), "clock"),
        # a blind hunt's schedule: the request proxy's upstream connections, in the
        # controller's namespace, bypassed the latency laid on the controller
        (("latency", "controller"), ("request", "non-controller"), "proxy"),
        (("latency", "broker:2"), ("request", "broker:3"), "proxy"),
        # a soak's run: the clock of `controller` met the broker a pause had frozen
        (("pause", "controller"), ("clock", "controller"), "docker exec"),
        (("kill", "non-controller"), ("clock", "random-broker"), "docker exec"),
        (("bounce", "broker:1"), ("clock", "all-brokers"), "docker exec"),
    ],
)
def test_faults_that_may_not_be_active_together(
    a: tuple[str, str], b: tuple[str, str], rule: str
) -> None:
    why = why_not_together(_spec(*a), _spec(*b))
    assert why is not None
    assert rule in why
    assert why_not_together(_spec(*b), _spec(*a)) == why


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("latency", "controller"), ("clock", "non-controller")),
        (("kill", "controller"), ("cpu-starve", "non-controller")),
        (("kill", "non-controller"), ("zk-leader-kill", "zk-leader")),
        (("clock", "controller"), ("clock", "zk-leader")),
        (("broker-isolate", "random-broker"), ("request", "non-controller")),
        (("pause", "broker:1"), ("clock", "broker:2")),
        (("kill", "zk-leader"), ("clock", "controller")),
    ],
)
def test_faults_that_may_be_active_together(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert why_not_together(_spec(*a), _spec(*b)) is None


def test_a_reset_of_a_brokers_zookeeper_connection_takes_it_not_away() -> None:
    reset = _spec("zk-reset", "controller")
    assert not takes_broker_away(reset)
    assert why_not_together(reset, _spec("kill", "non-controller")) is None
    assert why_not_together(reset, _spec("zk-isolate", "non-controller")) is not None


def test_a_fault_on_zookeeper_takes_no_broker_away() -> None:
    assert takes_broker_away(_spec("kill", "controller"))
    assert not takes_broker_away(_spec("kill", "zk-leader"))
    assert not takes_broker_away(_spec("latency", "controller"))


def test_a_window_covers_the_aftermath_and_the_recovery() -> None:
    assert window(Step(10, 5, _spec("latency", "controller"))) == (10, 15)
    assert window(Step(10, 5, _spec("kill", "controller"))) == (10, 15 + RECOVERY_S)
    assert window(Step(10, 0, _spec("bounce", "controller"))) == (10, 10 + AFTERMATH_S + RECOVERY_S)
    assert window(Step(10, 5, _spec("zk-pause", "zk-leader"))) == (10, 15 + ZK_RECOVERY_S)


def test_the_violations_of_a_schedule_name_both_steps_and_the_rule() -> None:
    steps = (
        Step(10, 5, _spec("kill", "controller")),
        Step(18, 5, _spec("pause", "non-controller")),
        Step(40, 5, _spec("pause", "non-controller")),
    )
    (found,) = overlap_violations(Schedule(1, steps, 60, 80))
    assert "kill controller" in found
    assert "pause non-controller" in found
    assert "takes a broker away" in found


def test_two_brokers_named_by_different_ids_may_both_be_away() -> None:
    assert why_not_together(_spec("kill", "broker:1"), _spec("stop", "broker:2")) is None
    assert why_not_together(_spec("latency", "broker:1"), _spec("loss", "broker:3")) is None
    same = why_not_together(_spec("kill", "broker:1"), _spec("pause", "broker:1"))
    assert same is not None
    assert "takes a broker away" in same
    by_role = why_not_together(_spec("kill", "broker:1"), _spec("kill", "controller"))
    assert by_role is not None
    assert "takes a broker away" in by_role


def test_a_double_outage_allows_no_third_broker_away() -> None:
    pair = (Step(10, 20, _spec("kill", "broker:1")), Step(15, 20, _spec("stop", "broker:2")))
    assert overlap_violations(Schedule(1, pair, 60, 80)) == []
    third = Step(12, 5, _spec("pause", "broker:3"))
    found = overlap_violations(
        Schedule(1, tuple(sorted((*pair, third), key=lambda s: s.at_s)), 60, 80)
    )
    assert any("at most two brokers away at a time" in f for f in found)
    slowed = Step(12, 5, _spec("latency", "broker:3"))
    steps = tuple(sorted((*pair, slowed), key=lambda s: s.at_s))
    assert overlap_violations(Schedule(1, steps, 60, 80)) == []


def test_a_bounce_then_the_controller_lost_names_two_brokers() -> None:
    bounce = Step(10, 0, _spec("bounce", "non-controller"))
    lost = Step(13, 12, _spec("kill", "controller"))
    assert overlap_violations(Schedule(1, (bounce, lost), 60, 80)) == []
    # the other way round the bounce could name the broker the kill took away
    first = Step(10, 12, _spec("kill", "controller"))
    then = Step(13, 0, _spec("bounce", "non-controller"))
    (reversed_pair,) = overlap_violations(Schedule(1, (first, then), 60, 80))
    assert "takes a broker away" in reversed_pair
    third = Step(14, 5, _spec("pause", "broker:3"))
    found = overlap_violations(Schedule(1, (bounce, lost, third), 60, 80))
    assert found
    assert all("broker away" in f or "brokers away" in f for f in found)


def test_instant_faults_on_the_controller_may_follow_each_other() -> None:
    flaps = tuple(Step(t, 0, _spec("session-expire", "controller")) for t in (10, 18, 27))
    assert overlap_violations(Schedule(1, flaps, 60, 80)) == []
    held = (Step(10, 8, _spec("zk-isolate", "controller")), flaps[1])
    (found,) = overlap_violations(Schedule(1, held, 60, 80))
    assert "takes a broker away" in found


def test_lost_replies_may_fall_inside_a_cut_from_the_peers() -> None:
    spells = FaultSpec.of("zk-lost-reply", "non-controllers", {"window_s": 8})
    cut = Step(10, 22, _spec("broker-isolate", "broker:2"))
    lost = Step(19.5, 0, spells)
    assert overlap_violations(Schedule(1, (cut, lost), 60, 80)) == []
    # not before the cut, not by a role that may name the controller, not beside a third
    early = Step(9, 0, spells)
    assert overlap_violations(Schedule(1, (early, cut), 60, 80))
    by_role = Step(10, 22, _spec("broker-isolate", "non-controller"))
    assert overlap_violations(Schedule(1, (by_role, lost), 60, 80))
    third = Step(12, 5, _spec("kill", "broker:3"))
    found = overlap_violations(Schedule(1, (cut, third, lost), 60, 80))
    assert any("brokers away" in f for f in found)
