"""The reach analysis: one shape per bug switch, each matching its own planned scenario's
schedules and not a schedule without faults or a near miss, the table over fresh
schedules, and its command line."""

from __future__ import annotations

import pytest

from bugs import CATALOG
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.hunt.plan import PLANS, BugPlan
from chaos.hunt.reach import HUNT_RUNS, Reach, main, reach, render
from chaos.hunt.reach_shapes import SHAPES, Shape, shape_for


def _schedule(*steps: Step, actions: tuple[Action, ...] = ()) -> Schedule:
    return Schedule(None, tuple(sorted(steps, key=lambda s: s.at_s)), 60.0, 90.0, actions)


def _step(at: float, hold: float, kind: str, target: str, **params: str | int) -> Step:
    return Step(at, hold, FaultSpec.of(kind, target, params))


def test_every_switch_of_the_catalog_has_one_shape_in_catalog_order() -> None:
    assert [s.bug for s in SHAPES] == [bug.name for bug in CATALOG]
    assert all(s.text for s in SHAPES)


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.bug)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_shape_matches_its_planned_scenario(plan: BugPlan, seed: int) -> None:
    shape = shape_for(plan.bug)
    assert shape.match(plan.scenarios[0].schedule(seed))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.bug)
def test_no_shape_matches_a_schedule_without_faults(shape: Shape) -> None:
    quiet = _schedule(actions=(Action(10.0, "move-controller"),))
    assert not shape.match(quiet)


def test_two_outages_need_brokers_known_to_differ_the_first_back_first() -> None:
    two_down = shape_for("kafka-5083").match
    pinned = _schedule(
        _step(10, 20, "kill", "non-controller:1"), _step(15, 20, "kill", "non-controller:2")
    )
    by_id = _schedule(_step(10, 20, "stop", "broker:1"), _step(15, 20, "kill", "broker:3"))
    same = _schedule(_step(10, 20, "kill", "non-controller"), _step(15, 20, "kill", "broker:2"))
    nested = _schedule(_step(10, 30, "kill", "broker:1"), _step(15, 10, "kill", "broker:2"))
    short = _schedule(_step(10, 5, "kill", "broker:1"), _step(12, 20, "kill", "broker:2"))
    assert two_down(pinned)
    assert two_down(by_id)
    assert not two_down(same)
    assert not two_down(nested)
    assert not two_down(short)


def test_a_bounce_is_quicker_than_the_session_and_needs_a_slowed_controller() -> None:
    slowed = shape_for("kafka-3085").match
    latency = _step(5, 20, "latency", "controller", delay_ms=100)
    assert slowed(_schedule(latency, _step(12, 0, "bounce", "non-controller")))
    assert slowed(_schedule(latency, _step(12, 3, "kill", "random-broker")))
    assert not slowed(_schedule(latency, _step(12, 10, "kill", "random-broker")))
    assert not slowed(_schedule(_step(12, 0, "bounce", "non-controller")))
    starts_after = shape_for("kip-380").match
    assert not starts_after(_schedule(latency, _step(12, 0, "bounce", "non-controller")))


def test_a_move_counts_only_soon_after_the_controllers_reconnection() -> None:
    moved = shape_for("kafka-2437").match
    reset = _step(20, 0, "zk-reset", "controller")
    assert moved(_schedule(reset, actions=(Action(22.0, "move-controller"),)))
    assert not moved(_schedule(reset, actions=(Action(30.0, "move-controller"),)))
    assert not moved(
        _schedule(
            _step(20, 0, "zk-reset", "busiest-leader"), actions=(Action(21.0, "move-controller"),)
        )
    )


def test_a_failover_counts_within_ten_seconds_of_the_reassignment() -> None:
    resumed = shape_for("kafka-9212").match
    reassign = (Action(10.0, "reassign", (("topic", "t"),)),)
    assert resumed(_schedule(_step(15, 10, "kill", "controller"), actions=reassign))
    assert not resumed(_schedule(_step(25, 10, "kill", "controller"), actions=reassign))
    assert not resumed(_schedule(_step(15, 10, "kill", "non-controller"), actions=reassign))


def test_the_table_counts_the_fresh_schedules_of_each_shape() -> None:
    rows = reach(20)
    assert [r.shape for r in rows] == list(SHAPES)
    assert all(r.schedules == 20 and 0 <= r.matched <= 20 for r in rows)
    assert rows == reach(20)  # a pure function of the seeds
    assert any(r.matched for r in rows)
    with pytest.raises(ValueError, match="at least one schedule"):
        reach(0)


def test_a_reach_gives_the_share_the_runs_to_a_first_and_the_chance_in_a_hunt() -> None:
    half = Reach(SHAPES[0], 5, 10)
    assert half.share == 0.5
    assert half.runs_to_first == 2.0
    assert half.within_hunt == pytest.approx(1 - 0.5**HUNT_RUNS)
    never = Reach(SHAPES[0], 0, 10)
    assert never.runs_to_first == float("inf")
    assert never.within_hunt == 0.0
    text = render([half, never])
    assert "| 5/10 | 50% | 2.0 |" in text
    assert "| never |" in text
    assert text.endswith(f"1 of 2 switches under one schedule in {HUNT_RUNS}")


def test_the_command_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--schedules", "5"]) == 0
    out = capsys.readouterr().out
    for shape in SHAPES:
        assert f"| `{shape.bug}` |" in out
    assert "/5 |" in out


def test_the_command_refuses_no_schedules(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--schedules", "0"])
    assert exited.value.code == 2
    assert "--schedules" in capsys.readouterr().err
