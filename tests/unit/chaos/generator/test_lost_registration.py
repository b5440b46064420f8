"""A lost registration reply: a broker by id slowed, cut from ZooKeeper past its session,
and lost-reply spells catching only writes once it learns its session expired; drawn
from a generator of its own, allowed by overlap rule 3's sixth exception and by nothing
wider."""

from __future__ import annotations

import dataclasses

from chaos.generator.generic import generic_schedule
from chaos.generator.lost_registration import (
    ARMED_AFTER_S,
    CUT_S,
    DELAY_MS,
    lost_registration,
)
from chaos.generator.overlap import clashes, overlap_violations
from chaos.generator.schedule import FaultSpec, Step


def test_a_broker_is_slowed_cut_past_its_session_and_its_new_writes_lose_replies() -> None:
    drawn = [steps for seed in range(200) if (steps := lost_registration(seed, 60.0))]
    assert 0.15 * 200 < len(drawn) < 0.45 * 200
    assert lost_registration(3, 60.0) == lost_registration(3, 60.0)
    for slowed, cut, lost in drawn:
        target = slowed.fault.target
        assert target.startswith("broker:")
        assert slowed.fault == FaultSpec.of("latency", target, {"delay_ms": DELAY_MS})
        assert cut.fault == FaultSpec.of("zk-isolate", target)
        assert CUT_S[0] <= cut.duration_s <= CUT_S[1]
        assert slowed.at_s < cut.at_s
        assert cut.ends_s < slowed.ends_s
        assert lost.fault.kind == "zk-lost-reply"
        assert lost.fault.target == target
        assert dict(lost.fault.params)["writes_only"] is True
        assert lost.at_s == round(cut.at_s + ARMED_AFTER_S, 1)
        assert lost.trigger is not None
        assert lost.trigger.optional
        assert dict(lost.trigger.match) == {"node": f"broker{target[7:]}", "state": "lost"}
        assert max(s.ends_s for s in (slowed, cut, lost)) < 60.0


def test_no_room_before_an_early_heal() -> None:
    assert all(lost_registration(seed, 25.0) == () for seed in range(100))


def test_the_overlap_rules_allow_the_three_and_no_other_broker_away() -> None:
    slowed, cut, lost = next(s for seed in range(50) if (s := lost_registration(seed, 60.0)))
    assert list(clashes(lost, [slowed, cut])) == []
    assert list(clashes(cut, [slowed])) == []
    killed = Step(cut.at_s + 1, 5.0, FaultSpec.of("kill", "non-controller"))
    assert list(clashes(killed, [slowed, cut, lost]))
    # catching any request, or on another broker, the spells are not the exception
    anything = dataclasses.replace(
        lost, fault=FaultSpec.of("zk-lost-reply", lost.fault.target, {"window_s": 6.0})
    )
    assert list(clashes(anything, [cut]))


def test_generic_schedules_hold_it_within_the_overlap_rules() -> None:
    held = []
    for seed in range(300):
        schedule = generic_schedule(seed, 90, heal_s=20, sparse=False)
        steps = lost_registration(seed, schedule.heal_at_s)
        if steps and all(s in schedule.steps for s in steps):
            held.append(schedule)
    assert len(held) >= 10
    assert all(overlap_violations(schedule) == [] for schedule in held)
