"""The generic mix's groups of faults recognised in a schedule by their shape: every draw
of every group is recognised as itself, a schedule of unrelated faults holds none, and
the names are the blind hunt's grafts."""

from __future__ import annotations

import dataclasses
import random

from chaos.generator.correlated import CORRELATED, cut_in_turn_from
from chaos.generator.groups import GROUPS, groups_in
from chaos.generator.lost_registration import lost_registration_from
from chaos.generator.races import race_from
from chaos.generator.reset_mid_failover import reset_mid_failover_from
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.hunt.corpus import GRAFTS, draw_schedule

_DELETE = Action(12.0, "delete-topic", (("topic", "t-side"),))


def _schedule(
    steps: tuple[Step, ...], actions: tuple[Action, ...] = (), heal_at: float = 30.0
) -> Schedule:
    ordered = tuple(sorted(steps, key=lambda s: s.at_s))
    acts = tuple(sorted(actions, key=lambda a: a.at_s))
    return Schedule(1, ordered, heal_at, heal_at + 15.0, acts)


def test_the_groups_are_the_grafts_of_the_blind_hunt() -> None:
    assert tuple(GROUPS) == GRAFTS


def test_every_draw_of_a_group_is_recognised_as_that_group() -> None:
    for seed in range(100):
        rng = random.Random(seed)
        for draw in CORRELATED:
            if steps := draw(rng, 30.0, always=True):
                assert draw.__name__.replace("_", "-") in groups_in(_schedule(steps)), seed
        if steps := cut_in_turn_from(rng, 30.0):
            assert "cut-in-turn" in groups_in(_schedule(steps))
        if steps := lost_registration_from(rng, 60.0):
            assert "lost-registration" in groups_in(_schedule(steps, heal_at=60.0))
        if steps := reset_mid_failover_from(rng, 30.0):
            assert "reset-mid-failover" in groups_in(_schedule(steps))
        if race := race_from(rng, (_DELETE,), 30.0):
            assert "race" in groups_in(_schedule(race.steps, (_DELETE, *race.actions)))


def test_unrelated_faults_form_no_group() -> None:
    steps = (
        Step(6.0, 4.0, FaultSpec.of("kill", "non-controller")),
        Step(12.0, 3.0, FaultSpec.of("latency", "random-broker", {"delay_ms": 100})),
        Step(16.0, 0.0, FaultSpec.of("session-expire", "controller")),
        Step(20.0, 5.0, FaultSpec.of("pause", "controller")),  # shorter than an outage
    )
    assert groups_in(_schedule(steps)) == frozenset()


def test_a_group_shifted_out_of_its_bounds_is_no_longer_that_group() -> None:
    cut = cut_in_turn_from(random.Random(3), 30.0)
    assert groups_in(_schedule(cut)) == {"cut-in-turn"}
    early = dataclasses.replace(cut[1], at_s=cut[0].at_s + 2.0)  # before its followers lag
    assert "cut-in-turn" not in groups_in(_schedule((cut[0], early)))


def test_fresh_schedules_hold_every_group_now_and_then() -> None:
    held = [groups_in(draw_schedule(seed, 45.0)) for seed in range(1, 301)]
    for name in GROUPS:
        assert 5 <= sum(name in g for g in held) < 300, name
