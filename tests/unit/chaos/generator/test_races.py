"""Races: a forced controller election chasing an admin operation or a reset of the
controller's ZooKeeper connection, under slowed controller links; drawn from a
generator of their own and placed in dense schedules where they fit."""

from __future__ import annotations

import pytest

from chaos.generator import correlated, races
from chaos.generator.correlated import cut_in_turn
from chaos.generator.generic import generic_schedule
from chaos.generator.overlap import overlap_violations
from chaos.generator.races import CHASE_LAG, CHASED, RACE_DELAYS, Race, draw_race
from chaos.generator.schedule import Action, Schedule

_TOPIC = (("topic", "t"),)
_OPS = (Action(12.0, "elect-leaders", _TOPIC), Action(20.0, "delete-topic", _TOPIC))


def _races(actions: tuple[Action, ...], heal_at: float = 70.0) -> list[Race]:
    return [r for seed in range(300) if (r := draw_race(seed, actions, heal_at)) is not None]


def _slowed(race: Race) -> tuple[float, float]:
    (slowed,) = (s for s in race.steps if s.fault.kind == "latency")
    assert slowed.fault.target == "controller"
    assert slowed.fault.param("delay_ms") in RACE_DELAYS
    return slowed.at_s, slowed.ends_s


def test_a_race_is_a_pure_function_of_its_seed() -> None:
    assert draw_race(5, _OPS, 70.0) == draw_race(5, _OPS, 70.0)
    drawn = _races(_OPS)
    assert 0.2 * 300 < len(drawn) < 0.5 * 300


def test_an_admin_race_moves_the_controller_while_its_writes_are_slowed() -> None:
    admin = [r for r in _races(_OPS) if len(r.steps) == 1]
    assert admin
    chased = {a.at_s for a in _OPS}
    for race in admin:
        (move,) = race.actions
        assert move.kind == "move-controller"
        (op_at,) = (t for t in chased if CHASE_LAG[0] <= round(move.at_s - t, 1) <= CHASE_LAG[1])
        start, end = _slowed(race)
        assert start < op_at
        assert move.at_s < end


def test_a_reconnect_race_moves_the_controller_while_it_reconnects() -> None:
    assert [r for r in _races(_OPS) if len(r.steps) == 2]
    without_ops = _races(())
    assert without_ops
    for race in without_ops:
        (reset,) = (s for s in race.steps if s.fault.kind == "zk-reset")
        assert reset.fault.target == "controller"
        assert reset.duration_s == 0.0
        (move,) = race.actions
        assert CHASE_LAG[0] <= round(move.at_s - reset.at_s, 1) <= CHASE_LAG[1]
        start, end = _slowed(race)
        assert start < reset.at_s
        assert move.at_s < end


def test_only_operations_that_write_partition_state_are_chased() -> None:
    created = (*_TOPIC, ("partitions", 3), ("replication_factor", 2))
    altered = (*_TOPIC, ("key", "min.insync.replicas"), ("value", "1"))
    others = (Action(12.0, "create-topic", created), Action(20.0, "alter-config", altered))
    assert "create-topic" not in CHASED
    assert "alter-config" not in CHASED
    assert all(len(r.steps) == 2 for r in _races(others))


def test_a_race_leaves_the_heal_its_ten_seconds_and_needs_room() -> None:
    for race in _races(_OPS, heal_at=40.0):
        assert race.actions[0].at_s <= 30.0
        assert all(s.ends_s < 40.0 for s in race.steps)
    assert _races((), heal_at=18.0) == []


@pytest.fixture(scope="module")
def drawn() -> dict[int, Schedule]:
    return {seed: generic_schedule(seed, 60, sparse=False) for seed in range(80)}


def _placed(seed: int, schedule: Schedule) -> bool:
    race = draw_race(seed, schedule.actions, schedule.heal_at_s)
    return (
        race is not None
        and race.actions[0] in schedule.actions
        and all(s in schedule.steps for s in race.steps)
    )


def test_dense_schedules_hold_races_within_the_overlap_rules(drawn: dict[int, Schedule]) -> None:
    placed = [seed for seed, schedule in drawn.items() if _placed(seed, schedule)]
    assert len(placed) >= 5
    for seed in placed:
        assert overlap_violations(drawn[seed]) == []


def test_no_race_in_sparse_schedules_or_without_actions() -> None:
    for seed in range(40):
        for schedule in (
            generic_schedule(seed, 60, sparse=True),
            generic_schedule(seed, 60, actions=False),
        ):
            assert not _placed(seed, schedule)


def _cut(seed: int, schedule: Schedule) -> bool:
    steps = cut_in_turn(seed, schedule.heal_at_s)
    return bool(steps) and all(s in schedule.steps for s in steps)


def test_drawing_races_and_cuts_left_every_seed_without_one_as_it_was(
    drawn: dict[int, Schedule], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seed that has neither a race nor a controller cut in turn placed names the
    schedule it named before either was drawn."""
    unchanged = [
        seed
        for seed, schedule in drawn.items()
        if not _placed(seed, schedule) and not _cut(seed, schedule)
    ]
    monkeypatch.setattr(races, "RACE_SHARE", 0.0)
    monkeypatch.setattr(correlated, "CUT_SHARE", 0.0)
    assert len(unchanged) < len(drawn)
    for seed in unchanged:
        assert generic_schedule(seed, 60, sparse=False) == drawn[seed]
