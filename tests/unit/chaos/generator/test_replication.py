"""A schedule's replication: its checks, its place in `schedule.json`, the generic
generator's draw of it and the scenario a run performs with it."""

from __future__ import annotations

import dataclasses
import re

import pytest

from chaos.errors import ScheduleError, ScheduleFormatError
from chaos.generator import replication as replication_module
from chaos.generator.admin_draws import WORKLOAD_REASSIGN_SHARE, side_topic
from chaos.generator.generic import generic_schedule
from chaos.generator.replication import (
    PAIRS,
    PAIRS_SHARE,
    TRIPLES,
    Replication,
    draw_replication,
)
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.generator.shrink import sub_schedule


@pytest.mark.parametrize(
    ("factor", "min_insync", "message"),
    [
        (0, 1, "replication factor must be 1..3"),
        (4, 2, "replication factor must be 1..3"),
        (2, 3, "min ISR must be 1..replication factor (2)"),
        (2, 0, "min ISR must be 1..replication factor (2)"),
        (True, 1, "factor must be an integer"),
        (2, "1", "min_insync must be an integer"),
    ],
)
def test_a_replication_out_of_range_is_refused(
    factor: object, min_insync: object, message: str
) -> None:
    with pytest.raises(ScheduleError, match=re.escape(message)):
        Replication(factor, min_insync)  # type: ignore[arg-type]


def _schedule(replication: Replication | None) -> Schedule:
    step = Step(5.0, 10.0, FaultSpec("kill", "broker:1"))
    return Schedule(7, (step,), 20.0, 30.0, replication=replication)


@pytest.mark.parametrize("replication", [None, PAIRS, TRIPLES, Replication(1, 1)])
def test_a_schedule_keeps_its_replication_through_json(replication: Replication | None) -> None:
    schedule = _schedule(replication)
    data = schedule.to_json()
    assert ("replication" in data) == (replication is not None)
    assert Schedule.from_json(data) == schedule


def test_a_bad_replication_in_json_names_what_is_wrong() -> None:
    data = _schedule(PAIRS).to_json()
    data["replication"] = {"factor": 2}
    with pytest.raises(ScheduleFormatError, match="factor and min_insync"):
        Schedule.from_json(data)
    data["replication"] = {"factor": 2, "min_insync": 5}
    with pytest.raises(ScheduleError, match="min ISR must be"):
        Schedule.from_json(data)
    with pytest.raises(ScheduleError, match="must be a Replication"):
        Schedule(1, (), 20.0, 30.0, replication=(2, 1))  # type: ignore[arg-type]


def test_the_description_names_the_replication_first() -> None:
    assert _schedule(PAIRS).describe().splitlines()[0] == (
        "workload at replication factor 2, min ISR 1"
    )
    assert "replication" not in _schedule(None).describe()


def test_shrinking_keeps_the_replication() -> None:
    schedule = dataclasses.replace(generic_schedule(11, 60), replication=PAIRS)
    assert sub_schedule(schedule, (0,)).replication == PAIRS


def test_the_generic_generator_draws_pairs_one_seed_in_its_share() -> None:
    drawn = [generic_schedule(seed, 60).replication for seed in range(300)]
    assert set(drawn) == {PAIRS, TRIPLES}
    share = drawn.count(PAIRS) / len(drawn)
    assert abs(share - PAIRS_SHARE) < 0.08
    assert [draw_replication(seed) for seed in range(300)] == drawn


def _side(action: Action) -> Action:
    """A reassignment of the workload's topic as the side topic's it replaced."""
    if action.kind != "reassign" or action.param("topic") != "chaos-random":
        return action
    params = (("topic", side_topic("chaos-random")), ("shift", action.param("shift")))
    return Action(action.at_s, action.kind, params)


def test_drawing_the_replication_moves_no_other_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replication, and on pairs the reassignment's topic, come from generators of
    their own: with the workload never on pairs, every seed's steps and actions are those
    it drew with pairs possible, each reassignment on the side topic."""
    drawn = {seed: generic_schedule(seed, 60) for seed in range(80)}
    assert any(s.replication == PAIRS for s in drawn.values())
    moved = [s for s in drawn.values() if any(_side(a) != a for a in s.actions)]
    assert moved
    assert all(s.replication == PAIRS for s in moved)
    monkeypatch.setattr(replication_module, "PAIRS_SHARE", 0.0)
    for seed, schedule in drawn.items():
        without = generic_schedule(seed, 60)
        assert without.steps == schedule.steps
        assert without.actions == tuple(_side(a) for a in schedule.actions)
        assert without.replication == TRIPLES


def test_on_pairs_half_the_reassignments_move_the_workloads_topic() -> None:
    reassigned = [
        s
        for s in (generic_schedule(seed, 60) for seed in range(400))
        if any(a.kind == "reassign" for a in s.actions)
    ]
    on_workload = [
        s
        for s in reassigned
        if any(a.kind == "reassign" and a.param("topic") == "chaos-random" for a in s.actions)
    ]
    assert all(s.replication == PAIRS for s in on_workload)
    paired = [s for s in reassigned if s.replication == PAIRS]
    assert abs(len(on_workload) / len(paired) - WORKLOAD_REASSIGN_SHARE) < 0.15


def test_a_run_performs_the_scenario_at_its_schedules_replication() -> None:
    random = SCENARIOS["random"]
    pairs = dataclasses.replace(random.schedule(3), replication=PAIRS)
    performed = random.for_schedule(pairs)
    assert (performed.workload.replication_factor, performed.workload.min_insync_replicas) == (2, 1)
    assert performed.workload.topic == random.workload.topic
    assert performed.invariants == random.invariants
    assert random.for_schedule(dataclasses.replace(pairs, replication=TRIPLES)) is random
    assert random.for_schedule(dataclasses.replace(pairs, replication=None)) is random
