"""Which invariants a generic schedule is judged on, and the `random` scenario judging
them."""

from __future__ import annotations

from chaos.generator.generic import generic_schedule
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.scenarios.invariant_names import INVARIANTS
from chaos.generator.scenarios.judged import CONDITIONAL, judged_invariants
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from rundir.invariants.names import (
    DEAD_BROKER_FORGOTTEN,
    NO_OFFLINE_PARTITIONS,
    REASSIGNMENT_COMPLETES,
    REGISTRATION_SERVED,
    REREGISTRATION_COMPLETES,
    TOPIC_DELETION_COMPLETES,
)


def _schedule(steps: tuple[Step, ...], actions: tuple[Action, ...] = ()) -> Schedule:
    return Schedule(1, steps, 80, 100, actions)


def _step(at: float, kind: str, target: str, hold: float = 5.0) -> Step:
    return Step(at, hold, FaultSpec.of(kind, target))


def test_every_invariant_but_the_conditional_ones_is_always_judged() -> None:
    judged = judged_invariants(_schedule((_step(10, "latency", "all-brokers"),)))
    assert judged == set(INVARIANTS) - CONDITIONAL | {REGISTRATION_SERVED, REREGISTRATION_COMPLETES}


def test_the_operations_invariants_are_judged_when_the_schedule_performs_them() -> None:
    side = (("topic", "t-side"),)
    actions = (Action(5, "reassign", side), Action(20, "delete-topic", side))
    judged = judged_invariants(_schedule((_step(10, "kill", "controller"),), actions))
    assert {REASSIGNMENT_COMPLETES, TOPIC_DELETION_COMPLETES} <= judged
    assert not {REASSIGNMENT_COMPLETES, TOPIC_DELETION_COMPLETES} & judged_invariants(
        _schedule((_step(10, "kill", "controller"),), actions[:0])
    )


def test_a_retirement_is_a_reassignment_to_complete() -> None:
    retire = (Action(5, "vacate", (("broker", "non-controller:2"),)),)
    assert REASSIGNMENT_COMPLETES in judged_invariants(_schedule((), retire))


def test_dead_brokers_must_be_forgotten_when_some_fault_kills_stops_or_bounces_one() -> None:
    """The invariant leaves out the failures other faults came near (its own tests), so a
    schedule that mixes them is judged on it too."""
    for kind, hold in (("kill", 20.0), ("stop", 20.0), ("bounce", 0.0)):
        killed = (_step(10, kind, "non-controller:1", hold), _step(40, "pause", "controller"))
        assert DEAD_BROKER_FORGOTTEN in judged_invariants(_schedule(killed)), kind
    for kind, target in (("pause", "non-controller"), ("broker-isolate", "controller"),
                         ("kill", "zk-leader"), ("request", "broker:1")):  # fmt: skip
        other = (_step(40, kind, target),)
        assert DEAD_BROKER_FORGOTTEN not in judged_invariants(_schedule(other)), kind


def test_no_offline_partitions_is_judged_for_one_broker_at_a_time_far_apart() -> None:
    apart = (_step(10, "stop", "controller"), _step(40, "latency", "non-controller"))
    assert NO_OFFLINE_PARTITIONS in judged_invariants(_schedule(apart))
    close = (_step(10, "stop", "controller"), _step(25, "latency", "non-controller"))
    assert NO_OFFLINE_PARTITIONS not in judged_invariants(_schedule(close))
    # a leader that vanishes has its partitions moved offline before the election
    for kind in ("kill", "pause", "bounce", "session-expire", "zk-isolate", "broker-isolate"):
        hold = 0.0 if kind == "bounce" else 5.0
        away = (_step(10, kind, "non-controller", hold), _step(40, "latency", "controller"))
        assert NO_OFFLINE_PARTITIONS not in judged_invariants(_schedule(away)), kind
    on_zk = (_step(10, "zk-pause", "zk-leader"),)
    assert NO_OFFLINE_PARTITIONS not in judged_invariants(_schedule(on_zk))
    grouped = (_step(10, "latency", "all-brokers"),)
    assert NO_OFFLINE_PARTITIONS not in judged_invariants(_schedule(grouped))


def test_registration_served_is_not_judged_when_a_starved_broker_overlaps_one_away() -> None:
    starved = (_step(10, "cpu-starve", "controller", 20), _step(15, "bounce", "non-controller", 0))
    assert REGISTRATION_SERVED not in judged_invariants(_schedule(starved))
    assert REREGISTRATION_COMPLETES not in judged_invariants(_schedule(starved))
    after = (_step(10, "cpu-starve", "controller"), _step(40, "bounce", "non-controller", 0))
    assert {REGISTRATION_SERVED, REREGISTRATION_COMPLETES} <= judged_invariants(_schedule(after))
    zk = (_step(10, "cpu-starve", "zk-leader", 20), _step(15, "kill", "non-controller"))
    assert REGISTRATION_SERVED not in judged_invariants(_schedule(zk))
    cut = (_step(10, "partition", "all"),)
    assert REGISTRATION_SERVED not in judged_invariants(_schedule(cut))


def test_sparse_schedules_are_judged_on_no_offline_partitions_some_of_the_time() -> None:
    # rarely: most sparse schedules take some broker away uncleanly (5 of seeds 0..299)
    sparse = [generic_schedule(seed, 90, sparse=True) for seed in range(100)]
    assert any(NO_OFFLINE_PARTITIONS in judged_invariants(s) for s in sparse)
    dense = [generic_schedule(seed, 90, sparse=False) for seed in range(40)]
    assert not any(NO_OFFLINE_PARTITIONS in judged_invariants(s) for s in dense)


def test_the_random_scenario_judges_what_its_schedule_meets() -> None:
    scenario = SCENARIOS["random"]
    for seed in range(10):
        schedule = scenario.schedule(seed)
        judged = scenario.invariants_for(schedule)
        assert judged == scenario.invariants | judged_invariants(schedule)
        assert judged <= INVARIANTS.keys()
    other = SCENARIOS["broker-failure"]
    assert other.invariants_for(other.schedule(None)) == other.invariants
