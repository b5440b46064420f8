"""`random_mix`: a pure function of its arguments that rotates kinds, leaves quiet periods
between faults that do not overlap, keeps every fault within the run and always ends with
a heal phase."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.errors import BadTiming, ScheduleError, UnknownKind
from chaos.faults.registry import FAULT_TYPES
from chaos.generator.random_mix import MIX_KINDS, random_mix

PROPERTY = settings(max_examples=150, deadline=None)
SEEDS = st.integers(min_value=-(2**40), max_value=2**40)


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another() -> None:
    assert random_mix(7, 120) == random_mix(7, 120)
    assert random_mix(7, 120).seed == 7
    assert len({random_mix(seed, 120) for seed in range(20)}) == 20


def test_the_default_mix_leaves_out_the_whole_cluster_partition() -> None:
    assert "partition" not in MIX_KINDS
    assert set(MIX_KINDS) < set(FAULT_TYPES)


@given(
    seed=SEEDS,
    duration=st.floats(60, 900),
    kinds=st.lists(st.sampled_from(sorted(FAULT_TYPES)), min_size=1, max_size=5, unique=True),
    quiet_min=st.floats(0.5, 10),
    fault_min=st.floats(1, 10),
)
@PROPERTY
def test_a_mix_keeps_its_promises(
    seed: int, duration: float, kinds: list[str], quiet_min: float, fault_min: float
) -> None:
    quiet = (quiet_min, quiet_min + 5)
    hold = (fault_min, fault_min + 10)
    schedule = random_mix(seed, duration, kinds, quiet_s=quiet, fault_s=hold, heal_s=15)
    assert schedule == random_mix(seed, duration, kinds, quiet_s=quiet, fault_s=hold, heal_s=15)
    assert schedule.end_s == duration
    assert schedule.heal_at_s == pytest.approx(duration - 15)
    assert schedule.last_fault_end_s <= schedule.heal_at_s
    assert schedule.steps[0].at_s >= round(quiet_min, 1) - 0.1
    used = [step.fault.kind for step in schedule.steps]
    assert set(used) <= set(kinds)
    if len(kinds) > 1:
        assert all(a != b for a, b in itertools.pairwise(used))
    for before, after in zip(schedule.steps, schedule.steps[1:], strict=False):
        assert after.at_s - before.ends_s >= quiet_min - 0.2
    for step in schedule.steps:
        if FAULT_TYPES[step.fault.kind].lasts is not False:
            assert hold[0] - 0.1 <= step.duration_s <= hold[1] + 0.1


@given(seed=SEEDS)
@PROPERTY
def test_every_allowed_kind_comes_once_per_round(seed: int) -> None:
    kinds = ("kill", "pause", "loss")
    schedule = random_mix(seed, 600, kinds, quiet_s=(1, 2), fault_s=(1, 2))
    used = [step.fault.kind for step in schedule.steps]
    for start in range(0, len(used) - 2, 3):
        assert sorted(used[start : start + 3]) == sorted(kinds)


def test_one_allowed_kind_repeats() -> None:
    schedule = random_mix(3, 120, ["bounce"])
    assert {step.fault.kind for step in schedule.steps} == {"bounce"}
    assert len(schedule.steps) > 1


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"kinds": []}, ScheduleError, "at least one kind"),
        ({"kinds": ["kill", "explode"]}, UnknownKind, "explode"),
        ({"quiet_s": (5, 1)}, BadTiming, "quiet_s"),
        ({"fault_s": (0, 1)}, BadTiming, "fault_s"),
        ({"heal_s": 90}, BadTiming, "heal_s"),
        ({"heal_s": 0}, BadTiming, "heal_s"),
        ({"fault_s": (80, 90)}, BadTiming, "no room for a fault"),
        ({"seed": "1"}, ScheduleError, "seed must be an integer"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], error: type, words: str) -> None:
    arguments: dict[str, object] = {"seed": 1, "duration_s": 90, **kwargs}
    with pytest.raises(error, match=words):
        random_mix(**arguments)  # type: ignore[arg-type]
