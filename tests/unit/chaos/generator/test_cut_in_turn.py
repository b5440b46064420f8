"""A controller cut in turn: cut from the other brokers, then from ZooKeeper too, the
first cut healed while the second holds; drawn from a generator of its own, allowed
by overlap rule 3's fifth exception and by nothing wider."""

from __future__ import annotations

import pytest

from chaos.generator.correlated import (
    CUT_CALM_S,
    CUT_LAG,
    CUT_OVERLAP,
    CUT_TAIL,
    cut_in_turn,
    outside_cut,
)
from chaos.generator.generic import generic_schedule
from chaos.generator.overlap import clashes, overlap_violations
from chaos.generator.schedule import Action, FaultSpec, Step

_BROKERS = FaultSpec.of("broker-isolate", "controller")
_ZK = FaultSpec.of("zk-isolate", "controller")


def _within(value: float, pair: tuple[float, float]) -> bool:
    return pair[0] - 0.05 <= value <= pair[1] + 0.05


def test_the_controller_is_cut_from_brokers_then_from_zookeeper_too() -> None:
    drawn = [steps for seed in range(200) if (steps := cut_in_turn(seed, 30.0))]
    assert 0.35 * 200 < len(drawn) < 0.65 * 200
    assert cut_in_turn(3, 30.0) == cut_in_turn(3, 30.0)
    for cut, isolated in drawn:
        assert cut.fault == _BROKERS
        assert isolated.fault == _ZK
        assert _within(isolated.at_s - cut.at_s, CUT_LAG)
        assert _within(cut.ends_s - isolated.at_s, CUT_OVERLAP)
        assert _within(isolated.ends_s - cut.ends_s, CUT_TAIL)
        assert cut.at_s >= 5.0
        assert isolated.ends_s < 30.0


def test_no_cut_without_room_before_the_heal() -> None:
    assert all(cut_in_turn(seed, 20.0) == () for seed in range(100))


def _cut(
    at: float = 6.0, lag: float = 12.0, first: float = 20.0, second: float = 11.0
) -> tuple[Step, Step]:
    return Step(at, first, _BROKERS), Step(at + lag, second, _ZK)


def test_the_overlap_rules_allow_the_pair_and_no_third_broker_away() -> None:
    cut, isolated = _cut()
    assert list(clashes(isolated, [cut])) == []
    killed = Step(10.0, 5.0, FaultSpec.of("kill", "broker:2"))
    assert [why for _, why in clashes(killed, [cut, isolated])]


@pytest.mark.parametrize(
    ("lag", "first", "second"),
    [
        (12.0, 20.0, 6.0),  # the second cut ends first
        (22.0, 20.0, 11.0),  # the second starts after the first ended, in its recovery
        (-2.0, 20.0, 30.0),  # the cut from ZooKeeper comes first
    ],
)
def test_the_pair_out_of_order_is_refused(lag: float, first: float, second: float) -> None:
    cut, isolated = _cut(lag=lag, first=first, second=second)
    assert list(clashes(isolated, [cut]))


def test_dense_schedules_hold_cuts_within_the_overlap_rules() -> None:
    held = []
    for seed in range(100):
        schedule = generic_schedule(seed, 45, heal_s=15, sparse=False)
        steps = cut_in_turn(seed, schedule.heal_at_s)
        if steps and all(s in schedule.steps for s in steps):
            held.append(schedule)
    assert len(held) >= 5
    assert all(overlap_violations(schedule) == [] for schedule in held)


def test_no_forced_election_between_the_two_cuts() -> None:
    cut, isolated = _cut()  # the first cut at 6 s, the second at 18 s
    acts = [Action(at, "move-controller") for at in (3.9, 4.0, 12.0, 18.0, 18.1)]
    assert [a.at_s for a in outside_cut((cut, isolated), acts)] == [3.9, 18.1]
    elect = Action(12.0, "elect-leaders", (("topic", "t"),))
    assert outside_cut((cut, isolated), [elect]) == [elect]
    assert outside_cut((cut,), acts) == acts  # no second cut: nothing to keep apart


def test_dense_schedules_move_no_controller_between_their_cuts() -> None:
    checked = 0
    for seed in range(300):
        schedule = generic_schedule(seed, 45, heal_s=15, sparse=False)
        steps = cut_in_turn(seed, schedule.heal_at_s)
        if steps and all(s in schedule.steps for s in steps):
            checked += 1
            lo, hi = steps[0].at_s - CUT_CALM_S, steps[1].at_s
            moves = [a.at_s for a in schedule.actions if a.kind == "move-controller"]
            assert not [at for at in moves if lo <= at <= hi], seed
    assert checked >= 15
