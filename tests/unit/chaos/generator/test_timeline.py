"""`timeline`: a schedule's starts, stops and actions in the order a runner performs them;
a fault ending when another starts is stopped first; a fault of duration 0 gets no stop cue;
the heal and the end come last."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.generator.random_mix import random_mix
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from chaos.generator.timeline import Cue, CueType, timeline


def test_cues_at_one_time_stop_then_act_then_start() -> None:
    schedule = Schedule(
        None,
        (
            Step(10, 10, FaultSpec("kill", "controller")),
            Step(20, 5, FaultSpec("pause", "broker:2")),
            Step(20, 0, FaultSpec("bounce", "broker:3")),
            Step(21, 0, FaultSpec("session-expire", "broker:1")),
        ),
        heal_at_s=25,
        end_s=40,
        actions=(Action(20, "reassign", (("topic", "t"),)),),
    )
    assert timeline(schedule) == (
        Cue(10, CueType.START, 0),
        Cue(20, CueType.STOP, 0),
        Cue(20, CueType.ACTION, 0),
        Cue(20, CueType.START, 1),
        Cue(20, CueType.START, 2),
        Cue(21, CueType.START, 3),
        Cue(25, CueType.STOP, 1),
        Cue(25, CueType.HEAL),
        Cue(40, CueType.END),
    )


@given(seed=st.integers(0, 2**32))
@settings(max_examples=50, deadline=None)
def test_every_lasting_fault_starts_and_stops_once_before_the_heal(seed: int) -> None:
    schedule = random_mix(seed, 120)
    cues = timeline(schedule)
    assert [c.at_s for c in cues] == sorted(c.at_s for c in cues)
    assert cues[-2:] == (Cue(schedule.heal_at_s, CueType.HEAL), Cue(120, CueType.END))
    for i, step in enumerate(schedule.steps):
        mine = [c.type for c in cues if c.index == i]
        assert mine == ([CueType.START] if step.duration_s == 0 else [CueType.START, CueType.STOP])
