"""`generic_schedule`: a pure function of its arguments that reaches every fault family,
lets faults overlap only as the overlap rules allow, draws triggered faults and admin
operations, survives schedule.json, and shrinks like any schedule."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.errors import ScheduleError
from chaos.generator import admin_draws, correlated
from chaos.generator.action_kinds import ACTION_KINDS
from chaos.generator.correlated import DOUBLE_KINDS, OUTAGE_KINDS
from chaos.generator.generic import (
    DISK_KINDS,
    GENERIC_KINDS,
    HOLD,
    HeavyTail,
    draw_step,
    generic_schedule,
    side_topic,
)
from chaos.generator.overlap import overlap_violations, window
from chaos.generator.scenarios.scenario import SESSION_TIMEOUT_S
from chaos.generator.schedule import FaultSpec, Schedule, Step
from chaos.generator.shrink import shrink
from eventlog.kinds import EventKind

SEEDS = range(200)


@pytest.fixture(scope="module")
def drawn() -> list[Schedule]:
    return [generic_schedule(seed, 90) for seed in SEEDS]


def test_the_same_seed_gives_the_same_schedule() -> None:
    assert generic_schedule(7, 90) == generic_schedule(7, 90)
    assert generic_schedule(7, 90).seed == 7
    assert len({generic_schedule(seed, 90) for seed in range(30)}) == 30


def test_every_kind_but_the_disk_ones_and_power_loss_is_drawn_by_default(
    drawn: list[Schedule],
) -> None:
    kinds = {step.fault.kind for schedule in drawn for step in schedule.steps}
    assert kinds == set(GENERIC_KINDS)
    assert "power-loss" not in GENERIC_KINDS
    assert not any(kind.startswith("disk-") for kind in GENERIC_KINDS)


def test_the_disk_kinds_are_drawn_when_asked_for() -> None:
    kinds = (*GENERIC_KINDS, *DISK_KINDS)
    drawn = {
        s.fault.kind for seed in range(100) for s in generic_schedule(seed, 90, kinds=kinds).steps
    }
    assert set(DISK_KINDS) <= drawn


def test_zookeeper_servers_and_brokers_are_both_targets(drawn: list[Schedule]) -> None:
    targets = {step.fault.target for schedule in drawn for step in schedule.steps}
    assert {"zk-leader", "zk-follower", "controller", "all-brokers", "all"} <= targets


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), duration=st.floats(40, 400))
def test_no_schedule_breaks_an_overlap_rule(seed: int, duration: float) -> None:
    schedule = generic_schedule(seed, duration)
    assert overlap_violations(schedule) == []
    assert schedule.end_s == duration
    assert all(step.ends_s <= schedule.heal_at_s for step in schedule.steps)


def test_faults_overlap_in_dense_schedules_and_never_in_sparse_ones() -> None:
    def overlapping(schedule: Schedule) -> int:
        windows = [window(s) for s in schedule.steps]
        return sum(
            1
            for i, a in enumerate(windows)
            for b in windows[i + 1 :]
            if a[0] < b[1] and b[0] < a[1]
        )

    assert sum(overlapping(generic_schedule(s, 90, sparse=False)) for s in range(20)) > 20
    assert all(overlapping(generic_schedule(s, 90, sparse=True)) == 0 for s in range(50))


def _double_outages(schedule: Schedule) -> list[tuple[Step, Step]]:
    pinned = [s for s in schedule.steps if s.fault.target.startswith("broker:")]
    pinned = [s for s in pinned if s.fault.kind in DOUBLE_KINDS]
    return [(a, b) for a in pinned for b in pinned if a.at_s < b.at_s < a.ends_s]


def test_dense_schedules_hold_double_outages_the_first_down_back_first() -> None:
    pairs = [
        p for seed in range(60) for p in _double_outages(generic_schedule(seed, 90, sparse=False))
    ]
    assert 5 <= len(pairs) <= 40
    for first, second in pairs:
        assert first.fault.target != second.fault.target
        assert min(first.duration_s, second.duration_s) > SESSION_TIMEOUT_S
        assert first.ends_s < second.ends_s
    assert not any(_double_outages(generic_schedule(s, 90, sparse=True)) for s in range(60))


def _pairs(
    schedules: list[Schedule], first: Callable[[Step], bool], then: Callable[[Step, Step], bool]
) -> list[tuple[Step, Step]]:
    """Every pair of steps of one schedule, the first matching `first` and the second
    `then` given the first."""
    return [
        (a, b)
        for schedule in schedules
        for a in schedule.steps
        if first(a)
        for b in schedule.steps
        if then(a, b)
    ]


def _bounce_of_a_non_controller(step: Step) -> bool:
    return (step.fault.kind, step.fault.target) == ("bounce", "non-controller")


def test_dense_schedules_hold_failovers_after_restarts() -> None:
    dense = [generic_schedule(seed, 90, sparse=False) for seed in range(60)]
    pairs = _pairs(
        dense,
        _bounce_of_a_non_controller,
        lambda bounce, lost: (
            lost.fault.target == "controller"
            and lost.fault.kind in OUTAGE_KINDS
            and 1.0 <= lost.at_s - bounce.at_s <= 5.0
        ),
    )
    assert 5 <= len(pairs) <= 30
    # the controller is away past its session: the bounced broker registers without one
    assert all(lost.duration_s > SESSION_TIMEOUT_S for _, lost in pairs)


def test_dense_schedules_hold_flapping_controllers() -> None:
    dense = [generic_schedule(seed, 90, sparse=False) for seed in range(60)]
    flaps = []
    for schedule in dense:
        expiries = [
            s
            for s in schedule.steps
            if (s.fault.kind, s.fault.target, s.duration_s) == ("session-expire", "controller", 0)
        ]
        if len(expiries) >= 2:
            flaps.append(expiries)
    assert 4 <= len(flaps) <= 25
    for expiries in flaps:
        gaps = [b.at_s - a.at_s for a, b in itertools.pairwise(expiries)]
        low, high = correlated.FLAP_GAP
        assert any(low <= round(g, 1) <= high for g in gaps)


def test_dense_schedules_hold_lost_replies_while_isrs_change() -> None:
    dense = [generic_schedule(seed, 45, heal_s=15, sparse=False) for seed in range(80)]
    pairs = _pairs(
        dense,
        lambda cut: cut.fault.kind == "broker-isolate" and cut.fault.target.startswith("broker:"),
        lambda _, lost: (
            (lost.fault.kind, lost.fault.target) == ("zk-lost-reply", "non-controllers")
        ),
    )
    assert 5 <= len(pairs) <= 35
    low, high = correlated.LOST_REPLIES_AFTER
    for cut, lost in pairs:
        assert low <= round(lost.at_s - cut.at_s, 1) <= high
        # the spells are over while the cut holds, and both before the heal
        assert lost.at_s + correlated.LOST_REPLIES_WINDOW <= cut.ends_s < 30


def test_dense_schedules_restart_a_broker_under_a_slow_controller() -> None:
    dense = [generic_schedule(seed, 90, sparse=False) for seed in range(80)]
    pairs = _pairs(
        dense,
        _bounce_of_a_non_controller,
        lambda bounce, slow: (
            (slow.fault.kind, slow.fault.target) == ("latency", "controller")
            and -2.0 <= round(slow.at_s - bounce.at_s, 1) <= 3.0
        ),
    )
    assert 5 <= len(pairs) <= 35
    low, high = correlated.SLOW_RESTART_HOLD
    assert any(low <= slow.duration_s <= high for _, slow in pairs)


def test_dense_schedules_freeze_the_controller_past_its_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def frozen(share: float) -> list[Step]:
        monkeypatch.setattr(correlated, "FROZEN_SHARE", share)
        dense = [generic_schedule(seed, 90, sparse=False) for seed in range(200)]
        return [
            step
            for schedule in dense
            for step in schedule.steps
            if (step.fault.kind, step.fault.target) == ("pause", "controller")
            and step.duration_s > SESSION_TIMEOUT_S
        ]

    # most dense schedules already take a broker away where it would go: a few fit
    assert len(frozen(correlated.FROZEN_SHARE)) >= len(frozen(0.0)) + 4


def _backdrop(schedule: Schedule) -> list[Step]:
    return [s for s in schedule.steps if s.fault.kind == "latency" and s.duration_s >= 10.0]


def test_a_slowed_broker_is_the_backdrop_of_some_dense_schedules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def early(share: float) -> list[Step]:
        monkeypatch.setattr(correlated, "BACKDROP_SHARE", share)
        dense = [generic_schedule(seed, 90, sparse=False) for seed in range(60)]
        return [s for schedule in dense for s in _backdrop(schedule) if s.at_s <= 10.0]

    found, without = early(correlated.BACKDROP_SHARE), early(0.0)
    assert len(found) >= len(without) + 10
    on_controller = [s for s in found if s.fault.target == "controller"]
    assert len(on_controller) >= len(found) / 4


def test_triggered_faults_start_on_every_hook_event(drawn: list[Schedule]) -> None:
    events = Counter(s.trigger.kind for sch in drawn for s in sch.steps if s.trigger is not None)
    assert set(events) == {
        "controller_elected",
        "leader_elected",
        "isr_changed",
        "reassignment_started",
        "topic_deletion_started",
        "control_request_sent",
        "broker_registered",
        "zk_session_state",  # a lost registration reply's spells
        "partition_state_change",  # a reset mid-failover's reset
    }
    assert set(events) <= {k.value for k in EventKind}
    on_work = [
        s
        for sch in drawn
        for s in sch.steps
        if s.trigger is not None and s.trigger.kind in ("leader_elected", "reassignment_started")
    ]
    on_controller = [s for s in on_work if s.fault.target == "controller"]
    assert len(on_work) / 3 <= len(on_controller) < len(on_work)
    aimed = [
        s
        for sch in drawn
        for s in sch.steps
        if s.trigger is not None and s.trigger.kind == "control_request_sent"
    ]
    assert all(s.fault.target == f"broker:{dict(s.trigger.match)['broker_id']}" for s in aimed)  # type: ignore[union-attr]


def test_a_restarted_broker_registering_may_slow_the_controller() -> None:
    found = 0  # about one schedule in twenty has one: more seeds than the others' 200
    for schedule in (generic_schedule(seed, 90) for seed in range(600)):
        restarts = {
            s.at_s: s
            for s in schedule.steps
            if s.fault.kind in ("bounce", "kill", "stop") and s.fault.target.count("zk") == 0
        }
        for step in schedule.steps:
            if step.trigger is None or step.trigger.kind != "broker_registered":
                continue
            found += 1
            assert step.fault.target == "controller"
            assert step.fault.kind in ("latency", "zk-reset")
            restart = restarts[step.at_s]
            assert step.trigger.within_s > restart.duration_s
    assert found >= 5


def test_no_trigger_is_drawn_when_told_not_to() -> None:
    assert all(
        s.trigger is None
        for seed in range(50)
        for s in generic_schedule(seed, 90, triggers=False).steps
    )


def test_admin_operations_act_on_the_side_topic_in_a_working_order(drawn: list[Schedule]) -> None:
    kinds = {a.kind for schedule in drawn for a in schedule.actions}
    assert kinds == set(ACTION_KINDS)
    side = side_topic("chaos-random")
    for schedule in drawn:
        order = [a.kind for a in schedule.actions if dict(a.params).get("topic") == side]
        assert order[0] == "create-topic"
        assert order[-1] == "delete-topic"
        working = ["create-topic", "add-partitions", "reassign", "alter-config", "delete-topic"]
        assert order == sorted(order, key=working.index)


def test_a_broker_is_retired_only_while_no_reassignment_is_drawn(drawn: list[Schedule]) -> None:
    retiring = [s for s in drawn if any(a.kind == "vacate" for a in s.actions)]
    assert 0 < len(retiring) < len(drawn) / 3
    for schedule in retiring:
        kinds = [a.kind for a in schedule.actions]
        assert kinds.count("vacate") == 1
        assert "reassign" not in kinds
        (vacate,) = (a for a in schedule.actions if a.kind == "vacate")
        assert vacate.param("broker") in ("non-controller:1", "non-controller:2")


def test_drawing_retirements_left_every_other_seed_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The retirement comes from a generator of its own: a seed that draws none names the
    schedule it named before retirements were drawn at all."""
    drawn = {seed: generic_schedule(seed, 90) for seed in range(60)}
    monkeypatch.setattr(admin_draws, "VACATE_SHARE", 0.0)
    unchanged = [s for s, sched in drawn.items() if all(a.kind != "vacate" for a in sched.actions)]
    assert len(unchanged) < len(drawn)
    for seed in unchanged:
        assert generic_schedule(seed, 90) == drawn[seed]
    for seed, schedule in drawn.items():
        without = generic_schedule(seed, 90)
        kept = tuple(a for a in schedule.actions if a.kind != "vacate")
        assert without.actions == kept


def test_no_action_is_drawn_when_told_not_to() -> None:
    assert generic_schedule(3, 90, actions=False).actions == ()


def test_durations_are_heavy_tailed_within_their_bounds() -> None:
    rng = random.Random(1)
    held = [HOLD.draw(rng) for _ in range(5000)]
    assert min(held) >= HOLD.low
    assert max(held) <= HOLD.high
    median = sorted(held)[len(held) // 2]
    assert abs(median - HOLD.median) < 1.0
    # most near the median, a few far beyond it: a uniform draw over the same bounds puts
    # 4 in 10 above three times the median, a lognormal of shape 0.8 fewer than 1 in 10
    far = sum(1 for h in held if h >= 3 * HOLD.median)
    assert len(held) * 0.03 < far < len(held) * 0.12
    assert sum(held) / len(held) > median
    assert HeavyTail(2.0, 2.0, 2.0).draw(rng) == 2.0


def test_schedules_survive_a_json_round_trip(drawn: list[Schedule]) -> None:
    for schedule in drawn[:50]:
        assert Schedule.from_json(schedule.to_json()) == schedule


def test_shrink_keeps_the_actions_and_the_triggered_steps_it_needs() -> None:
    schedule = next(
        s
        for s in (generic_schedule(seed, 90, sparse=False) for seed in range(100))
        if len(s.steps) >= 6 and s.actions and any(step.trigger for step in s.steps)
    )
    culprit = next(step for step in schedule.steps if step.trigger is not None)
    result = shrink(schedule, lambda s: culprit in s.steps, max_tests=200)
    assert result.minimal.steps == (culprit,)
    assert result.minimal.actions == schedule.actions
    assert not result.exhausted


@pytest.mark.parametrize(
    "arguments",
    [
        {"seed": True, "duration_s": 90},
        {"seed": 1, "duration_s": 90, "kinds": ()},
        {"seed": 1, "duration_s": 90, "kinds": ("nope",)},
        {"seed": 1, "duration_s": 25},
        {"seed": 1, "duration_s": 90, "heal_s": 0},
    ],
)
def test_bad_arguments_are_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ScheduleError):
        generic_schedule(**arguments)  # type: ignore[arg-type]


def test_a_step_drawn_beside_a_schedule_keeps_its_rules() -> None:
    rng = random.Random(5)
    for seed in range(30):
        schedule = generic_schedule(seed, 90, sparse=False)
        at = rng.uniform(5, 60)
        step = draw_step(rng, schedule, at)
        if step is None:
            continue
        assert step.at_s == round(at, 1)
        grown = dataclasses.replace(
            schedule, steps=tuple(sorted((*schedule.steps, step), key=lambda s: s.at_s))
        )
        assert overlap_violations(grown) == []
    kill = Schedule(1, (Step(10, 20, FaultSpec.of("kill", "controller")),), 60, 80)
    # a bounce acts on brokers only (a pause may go to a ZooKeeper server beside the kill)
    assert draw_step(rng, kill, 15, kinds=("bounce",)) is None
    paused = draw_step(rng, kill, 40, kinds=("pause",))
    assert paused is not None
    assert paused.fault.kind == "pause"
