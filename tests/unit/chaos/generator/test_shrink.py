"""`shrink`: ddmin over a schedule's steps against synthetic oracles. It finds the steps a
failure needs (two, or one), never replays a subset twice, stays within its budget, reports
each replay, and hands the oracle valid schedules that keep the kept steps' times."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.generator.shrink import ShrinkProgress, shrink, sub_schedule


def _schedule(n: int) -> Schedule:
    kinds = ("kill", "pause", "zk-isolate", "loss")
    steps = tuple(Step(10 + 20 * i, 10, FaultSpec(kinds[i % 4], f"broker:{i}")) for i in range(n))
    return Schedule(5, steps, heal_at_s=20 * n + 15, end_s=20 * n + 45)


def _needs(indices: set[int], calls: list[Schedule] | None = None) -> Callable[[Schedule], bool]:
    """An oracle: the run fails when every step of `indices` (by its broker id) is in it."""

    def fails(schedule: Schedule) -> bool:
        if calls is not None:
            calls.append(schedule)
        ids = {int(step.fault.target.split(":")[1]) for step in schedule.steps}
        return indices <= ids

    return fails


def test_a_failure_that_needs_two_steps_shrinks_to_them() -> None:
    result = shrink(_schedule(8), _needs({2, 5}))
    assert result.kept == (2, 5)
    assert [s.fault.target for s in result.minimal.steps] == ["broker:2", "broker:5"]
    assert result.reproduced
    assert not result.exhausted
    assert result.trail[0].kept == tuple(range(8))
    assert result.trail[0].failed


def test_a_failure_that_needs_one_step_shrinks_to_it() -> None:
    result = shrink(_schedule(10), _needs({7}))
    assert result.kept == (7,)
    assert result.minimal.steps == (_schedule(10).steps[7],)


def test_the_kept_steps_keep_their_times_and_the_heal_moves_with_the_last_one() -> None:
    original = _schedule(8)
    result = shrink(original, _needs({2, 5}))
    assert [s.at_s for s in result.minimal.steps] == [50.0, 110.0]
    tail = original.heal_at_s - original.last_fault_end_s
    assert result.minimal.heal_at_s == result.minimal.last_fault_end_s + tail
    assert result.minimal.end_s - result.minimal.heal_at_s == original.end_s - original.heal_at_s
    assert result.minimal.seed == original.seed


def test_the_oracle_is_deterministic_so_the_shrink_is_too_and_no_subset_runs_twice() -> None:
    first: list[Schedule] = []
    second: list[Schedule] = []
    a = shrink(_schedule(12), _needs({1, 6, 11}, first))
    b = shrink(_schedule(12), _needs({1, 6, 11}, second))
    assert first == second
    assert a == b
    assert len({trial.kept for trial in a.trail}) == len(a.trail) == len(first)


def test_the_budget_limits_the_replays_and_keeps_the_smallest_failure_found() -> None:
    result = shrink(_schedule(16), _needs({3, 12}), max_tests=9)
    assert result.tests_run == 9
    assert result.exhausted
    assert len(result.kept) == 6  # complements first; ddmin proper kept 12 here
    assert {3, 12} <= set(result.kept)
    assert _needs({3, 12})(result.minimal)


def test_a_failure_across_both_halves_shrinks_within_four_replays() -> None:
    """Both halves pass; the fourth replay leaves out one quarter and still fails, where
    trying the quarters alone would have spent it on a passing run."""
    result = shrink(_schedule(8), _needs({2, 6}), max_tests=4)
    assert [t.failed for t in result.trail] == [True, False, False, True]
    assert result.kept == (2, 3, 4, 5, 6, 7)


def test_a_schedule_that_does_not_fail_is_returned_unshrunk() -> None:
    result = shrink(_schedule(6), lambda schedule: False)
    assert not result.reproduced
    assert result.minimal == _schedule(6)
    assert result.tests_run == 1


def test_progress_is_told_about_every_replay() -> None:
    seen: list[ShrinkProgress] = []
    result = shrink(_schedule(8), _needs({4}), progress=seen.append)
    assert [p.trial for p in seen] == list(result.trail)
    assert [p.tests_run for p in seen] == list(range(1, len(seen) + 1))
    assert seen[-1].smallest == (4,)


def test_actions_are_kept_and_the_heal_stays_after_them() -> None:
    base = _schedule(4)
    action = Action(75, "reassign", (("topic", "t"),))
    schedule = Schedule(base.seed, base.steps, base.heal_at_s, base.end_s, (action,))
    smaller = sub_schedule(schedule, (0,))
    assert smaller.actions == (action,)
    assert smaller.heal_at_s >= 75


def test_sub_schedule_refuses_bad_indices_and_shrink_a_bad_budget() -> None:
    with pytest.raises(ValueError, match="sorted distinct"):
        sub_schedule(_schedule(4), (2, 1))
    with pytest.raises(ValueError, match="sorted distinct"):
        sub_schedule(_schedule(4), (4,))
    with pytest.raises(ValueError, match="max_tests"):
        shrink(_schedule(4), _needs({1}), max_tests=0)


def test_an_oracle_that_raises_ends_the_shrink() -> None:
    def broken(schedule: Schedule) -> bool:
        raise RuntimeError("cluster gone")

    with pytest.raises(RuntimeError, match="cluster gone"):
        shrink(_schedule(3), broken)


@given(
    n=st.integers(1, 14),
    data=st.data(),
)
@settings(max_examples=100, deadline=None)
def test_a_monotone_failure_shrinks_to_exactly_the_steps_it_needs(
    n: int, data: st.DataObject
) -> None:
    needed = data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 4)))
    result = shrink(_schedule(n), _needs(needed), max_tests=10_000)
    assert set(result.kept) == needed
    for trial in result.trail:
        assert trial.failed == (needed <= set(trial.kept))
