"""A reset mid-failover: the controller slowed, a broker other than it killed past its
session once the controller has re-armed its watches, and the controller's ZooKeeper
connection reset when it logs its elections for the dead broker's partitions; drawn from
a generator of its own, three mechanisms the overlap rules allow together."""

from __future__ import annotations

import random

from chaos.generator.correlated import outside_cut
from chaos.generator.generic import generic_schedule
from chaos.generator.overlap import clashes, overlap_violations
from chaos.generator.reset_mid_failover import (
    DELAY_MS,
    ELECTIONS,
    KILL_AFTER_S,
    KILL_S,
    reset_mid_failover,
    reset_mid_failover_from,
)
from chaos.generator.schedule import Action, FaultSpec, Step


def test_the_controller_is_slowed_a_broker_killed_and_the_reset_waits_for_its_elections() -> None:
    drawn = [steps for seed in range(200) if (steps := reset_mid_failover(seed, 60.0))]
    assert 0.15 * 200 < len(drawn) < 0.45 * 200
    assert reset_mid_failover(3, 60.0) == reset_mid_failover(3, 60.0)
    for slowed, killed, reset in drawn:
        assert slowed.fault == FaultSpec.of("latency", "controller", {"delay_ms": DELAY_MS})
        assert killed.fault.kind == "kill"
        assert killed.fault.target in ("non-controller:1", "non-controller:2")
        assert KILL_AFTER_S[0] <= round(killed.at_s - slowed.at_s, 1) <= KILL_AFTER_S[1]
        assert KILL_S[0] <= killed.duration_s <= KILL_S[1]
        # the controller is still slowed when the broker comes back
        assert killed.ends_s < slowed.ends_s < 60.0
        assert reset.fault == FaultSpec.of("zk-reset", "controller")
        assert reset.at_s == killed.at_s
        assert reset.trigger == ELECTIONS
        assert reset.trigger is not None
        assert reset.trigger.optional
        assert dict(reset.trigger.match) == {"target": "OnlinePartition"}


def test_it_fits_a_short_run_and_not_an_early_heal() -> None:
    rng = random.Random(7)
    assert all(reset_mid_failover_from(rng, 30.0) for _ in range(50))
    assert all(reset_mid_failover(seed, 20.0) == () for seed in range(100))


def test_the_overlap_rules_allow_the_three_and_no_other_broker_away() -> None:
    slowed, killed, reset = reset_mid_failover_from(random.Random(1), 60.0)
    assert list(clashes(killed, [slowed])) == []
    assert list(clashes(reset, [slowed, killed])) == []
    bounced = Step(killed.at_s + 1, 0.0, FaultSpec.of("bounce", "controller"))
    assert list(clashes(bounced, [slowed, killed, reset]))
    other_latency = Step(slowed.at_s + 1, 3.0, FaultSpec.of("latency", "non-controller"))
    assert list(clashes(other_latency, [slowed]))


def test_generic_schedules_hold_it_within_the_overlap_rules() -> None:
    held = []
    for seed in range(300):
        schedule = generic_schedule(seed, 90, heal_s=20, sparse=False)
        steps = reset_mid_failover(seed, schedule.heal_at_s)
        if steps and all(s in schedule.steps for s in steps):
            held.append(schedule)
    assert len(held) >= 10
    assert all(overlap_violations(schedule) == [] for schedule in held)


def test_no_forced_controller_election_moves_the_controller_the_reset_is_for() -> None:
    slowed, killed, reset = reset_mid_failover_from(random.Random(2), 60.0)
    moves = [
        Action(round(t, 1), "move-controller")
        for t in (slowed.at_s - 3.0, slowed.at_s - 1.0, killed.at_s + 4.0, reset.at_s + 16.5)
    ]
    kept = outside_cut((slowed, killed, reset), moves)
    assert kept == [moves[0], moves[3]]
    # without the slowed links the reset is no group of this kind
    assert outside_cut((killed, reset), moves) == moves
