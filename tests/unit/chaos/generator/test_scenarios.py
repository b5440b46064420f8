"""The scenario registry: the fixed names, each scenario's schedule a valid pure function
of the seed that stays within its workload and ends with a heal, runbooks that agree with
the workload they describe, and the checks a `Scenario` makes on itself."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.generator.scenarios import SCENARIOS
from chaos.generator.scenarios.scenario import (
    CORE_INVARIANTS,
    INVARIANTS,
    SESSION_TIMEOUT_S,
    Draws,
    Scenario,
    Workload,
)
from chaos.generator.schedule import Schedule, Trigger

NAMES = (
    "broker-failure",
    "controller-failover",
    "failover-after-bounce",
    "controller-pause",
    "deposed-controller",
    "zombie-controller",
    "moved-controller",
    "moved-controller-election",
    "moved-while-reconnecting",
    "zk-isolation",
    "controller-expiries",
    "network-partition",
    "isolated-election",
    "lost-isr-reply",
    "zk-deaf-leader",
    "broker-bounce",
    "fast-bounce",
    "slow-controller-bounce",
    "slow-reregistration",
    "lost-registration-reply",
    "controlled-shutdown",
    "reassignment-under-failover",
    "stalled-reassignment",
    "stalled-deletion",
    "last-replica-standing",
    "empty-broker-failure",
    "zk-leader-loss",
    "zk-quorum-loss",
    "controller-zk-reset",
    "rolling-restart",
    "slow-network",
    "starved-controller",
    "clock-skew",
    "disk-failure",
    "slow-disk",
    "disk-full",
    "power-loss",
    "random",
    "duplicated-requests",
    "reordered-requests",
    "skipped-epoch",
    "cert-rotation",
)
SEEDS = st.one_of(st.none(), st.integers(min_value=0, max_value=2**63))
PROPERTY = settings(max_examples=60, deadline=None)


def test_the_registry_holds_the_fixed_names() -> None:
    assert tuple(SCENARIOS) == NAMES
    assert all(scenario.name == name for name, scenario in SCENARIOS.items())


@pytest.mark.parametrize("name", NAMES)
@given(seed=SEEDS)
@PROPERTY
def test_a_schedule_is_a_valid_pure_function_of_the_seed(name: str, seed: int | None) -> None:
    scenario = SCENARIOS[name]
    schedule = scenario.schedule(seed)
    assert scenario.schedule(seed) == schedule
    assert Schedule.from_json(schedule.to_json()) == schedule
    assert schedule.steps, "a scenario injects at least one fault"
    # 90 s at most, but for the three whose delayed controller re-arms its watches for 30
    # to 40 s before the kill or the reset can come, and the CA rotation's restarts
    slow = ("zk-quorum-loss", "controller-zk-reset", "moved-while-reconnecting")
    longest = 330 if name == "cert-rotation" else 125 if name in slow else 90
    assert schedule.end_s == scenario.workload.duration_s <= longest
    assert schedule.last_fault_end_s <= schedule.heal_at_s < schedule.end_s
    assert schedule.active_at(schedule.heal_at_s) == ()
    assert schedule.end_s - schedule.heal_at_s >= 15, "a heal phase under load"
    assert all(step.at_s >= 5 for step in schedule.steps), "load before the first fault"


@pytest.mark.parametrize("name", NAMES)
def test_seeds_vary_the_schedule(name: str) -> None:
    schedules = {SCENARIOS[name].schedule(seed) for seed in range(10)}
    assert len(schedules) > 1


@pytest.mark.parametrize("name", NAMES)
def test_the_runbook_describes_the_workload_and_the_bound(name: str) -> None:
    scenario = SCENARIOS[name]
    w = scenario.workload
    runbook = " ".join(scenario.runbook.split())
    setup = runbook[runbook.index("Setup:") : runbook.index("Steps:")]
    acks = "acks=all" if w.acks == -1 else f"acks={w.acks}"
    for words in (
        f"topic `{w.topic}`",
        f"{w.partitions} partitions",
        f"replication factor {w.replication_factor}",
        f"min ISR {w.min_insync_replicas}",
        acks,
        f"for {w.duration_s:g} s",
    ):
        assert words in setup, f"{name}: Setup does not say {words!r}"
    verdict = runbook[runbook.index("Verdict:") :]
    assert f"within {scenario.convergence_s:g} s of the heal" in verdict
    assert runbook.startswith(f"{name}: {scenario.summary}")


@pytest.mark.parametrize("name", NAMES)
def test_data_loss_is_judged_only_with_unclean_election_off(name: str) -> None:
    scenario = SCENARIOS[name]
    assert scenario.invariants <= INVARIANTS.keys()
    checks_writes = "acknowledged_writes" in scenario.invariants
    assert checks_writes != scenario.workload.unclean_leader_election


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_pause_outlasts_the_session_by_far(seed: int | None) -> None:
    (pause,) = SCENARIOS["controller-pause"].schedule(seed).steps
    assert pause.fault.describe() == "pause controller"
    assert pause.duration_s >= 2 * SESSION_TIMEOUT_S


@given(seed=SEEDS)
@PROPERTY
def test_bounces_are_instant_and_hit_three_roles(seed: int | None) -> None:
    steps = SCENARIOS["broker-bounce"].schedule(seed).steps
    assert {step.fault.kind for step in steps} == {"bounce"}
    assert all(step.duration_s == 0 for step in steps)
    assert len({step.fault.target for step in steps}) == 3


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_moves_while_its_slow_preferred_elections_are_in_flight(
    seed: int | None,
) -> None:
    scenario = SCENARIOS["moved-controller-election"]
    schedule = scenario.schedule(seed)
    bounce, latency = schedule.steps
    elect, move = schedule.actions
    assert bounce.fault.describe() == "bounce non-controller:1"
    assert latency.fault.kind == "latency"
    assert latency.fault.target == "controller"
    delay_ms, timeout_ms = latency.fault.param("delay_ms"), elect.param("timeout_ms")
    assert isinstance(delay_ms, int)
    assert isinstance(timeout_ms, int)
    delay_s = delay_ms / 1000
    assert delay_s < 2, "below kazoo's connection handshake"
    assert elect.kind == "elect-leaders"
    assert elect.param("topic") == scenario.workload.topic
    assert timeout_ms / 1000 < delay_s, "answered before the multi lands"
    assert move.kind == "move-controller"
    assert 0 < move.at_s - elect.at_s < delay_s
    # the bounced broker is back in the ISRs before the delay, and the controller has
    # worked through what its reconnection through the delay fires before the request
    assert bounce.at_s + 8 <= latency.at_s <= elect.at_s - 15
    assert latency.at_s + latency.duration_s > move.at_s + 8, "slow until it resigned"


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_dies_just_after_the_reassignment_starts(seed: int | None) -> None:
    schedule = SCENARIOS["reassignment-under-failover"].schedule(seed)
    (action,) = schedule.actions
    (kill,) = schedule.steps
    assert action.kind == "reassign"
    assert action.param("topic") == SCENARIOS["reassignment-under-failover"].workload.topic
    assert 0.5 <= kill.at_s - action.at_s <= 1.5
    assert kill.fault.describe() == "kill controller"


@given(seed=SEEDS)
@PROPERTY
def test_the_stale_replica_dies_first_and_returns_first(seed: int | None) -> None:
    schedule = SCENARIOS["last-replica-standing"].schedule(seed)
    first, second = schedule.steps
    assert [s.fault.describe() for s in schedule.steps] == [
        "kill non-controller:1",
        "kill non-controller:2",
    ]
    assert 3 <= second.at_s - first.at_s <= 9
    assert first.ends_s < second.ends_s <= schedule.heal_at_s


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_is_frozen_across_the_bounced_brokers_reregistration(
    seed: int | None,
) -> None:
    bounce, pause = SCENARIOS["fast-bounce"].schedule(seed).steps
    assert (bounce.fault.describe(), bounce.duration_s) == ("bounce non-controller:1", 0)
    assert pause.fault.describe() == "pause controller"
    assert pause.at_s < bounce.at_s + SESSION_TIMEOUT_S < pause.ends_s  # old session ends
    assert pause.duration_s < SESSION_TIMEOUT_S  # the controller keeps its own session


@given(seed=SEEDS)
@PROPERTY
def test_a_broker_is_bounced_and_registers_again_while_the_controller_is_delayed(
    seed: int | None,
) -> None:
    schedule = SCENARIOS["slow-controller-bounce"].schedule(seed)
    latency, bounce = schedule.steps
    assert latency.fault.describe() == "latency controller delay_ms=125"
    assert (bounce.fault.describe(), bounce.duration_s) == ("bounce non-controller:1", 0)
    # the old registration vanishes and the new one appears while the delay holds
    assert latency.at_s < bounce.at_s
    assert bounce.at_s + 2 * SESSION_TIMEOUT_S < latency.ends_s
    assert latency.ends_s <= schedule.heal_at_s


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_dies_while_a_broker_is_cut_off_and_the_cut_outlasts_the_connects(
    seed: int | None,
) -> None:
    schedule = SCENARIOS["isolated-election"].schedule(seed)
    cut, kill = schedule.steps
    assert (cut.fault.describe(), kill.fault.describe()) == (
        "broker-isolate non-controller:1",
        "kill controller",
    )
    assert cut.at_s < kill.at_s < cut.at_s + 3  # the cut broker is still in the ISRs
    # the dead controller's session expires, a successor elects, and its connections
    # across the cut give up (20 s), all before the cut heals
    assert kill.at_s + SESSION_TIMEOUT_S + 20 < cut.ends_s < schedule.heal_at_s
    assert kill.ends_s < cut.ends_s


@given(seed=SEEDS)
@PROPERTY
def test_the_quorum_is_lost_while_the_slowed_controller_handles_the_kill(
    seed: int | None,
) -> None:
    schedule = SCENARIOS["zk-quorum-loss"].schedule(seed)
    latency, kill, outage = schedule.steps
    assert latency.fault.describe() == "latency controller delay_ms=1500"
    assert kill.fault.describe() == "kill non-controller:1"
    assert outage.fault.describe() == "pause zk-followers"
    # the outage waits, from the kill on, for the controller's elections to be done: the
    # killed broker's session has expired and new leaders are chosen; the window after
    # them is 1.5 s wide, too narrow for a time to hit
    assert (outage.at_s, outage.duration_s) == (kill.at_s, 16)
    assert outage.trigger == Trigger("partition_state_change", (("target", "OnlinePartition"),), 25)
    # longer than a command's retries (12 s); the broker returns only after the thaw
    # when the elections come in their usual 6 to 10 s
    assert outage.duration_s > 12
    assert kill.at_s + 10 + outage.duration_s < kill.ends_s
    assert outage.ends_s <= schedule.heal_at_s
    assert latency.at_s < kill.at_s
    # the delay outlasts the failing request's ConnectionLoss (about 4 s into an outage
    # that begins 6 to 10 s after the kill) and is gone at least 2 s before the thaw, so
    # the controller reconnects in time to keep its session
    assert kill.at_s + 10 + 4 < latency.ends_s <= kill.at_s + 6 + outage.duration_s - 2


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_s_connection_is_reset_when_its_elections_are_done(
    seed: int | None,
) -> None:
    schedule = SCENARIOS["controller-zk-reset"].schedule(seed)
    latency, kill, reset = schedule.steps
    assert latency.fault.describe() == "latency controller delay_ms=1500"
    assert kill.fault.describe() == "kill non-controller:1"
    assert reset.fault.describe() == "zk-reset controller"
    # the reset waits, from the kill on, for the controller's elections; it is instant
    assert (reset.at_s, reset.duration_s) == (kill.at_s, 0)
    assert reset.trigger == Trigger("partition_state_change", (("target", "OnlinePartition"),), 25)
    # the kill comes once the delayed controller has re-armed its watches (30 to 40 s)
    assert kill.at_s - latency.at_s >= 40
    # the delay lasts past the elections (6 to 14 s after the kill) and the reset
    assert latency.ends_s >= kill.at_s + 20
    assert reset.ends_s <= schedule.heal_at_s
    assert kill.ends_s <= schedule.heal_at_s


@given(seed=SEEDS)
@PROPERTY
def test_the_controller_dies_while_a_frozen_broker_holds_the_reassignment_up(
    seed: int | None,
) -> None:
    schedule = SCENARIOS["stalled-reassignment"].schedule(seed)
    (action,) = schedule.actions
    freeze, kill = schedule.steps
    assert (freeze.fault.describe(), kill.fault.describe()) == (
        "pause non-controller:1",
        "kill controller",
    )
    assert freeze.at_s < action.at_s < kill.at_s < freeze.ends_s
    assert freeze.duration_s < SESSION_TIMEOUT_S


@given(seed=SEEDS)
@PROPERTY
def test_a_rolling_restart_stops_every_broker_once_and_never_two_at_once(
    seed: int | None,
) -> None:
    steps = SCENARIOS["rolling-restart"].schedule(seed).steps
    assert sorted(step.fault.target for step in steps) == ["broker:1", "broker:2", "broker:3"]
    for before, after in itertools.pairwise(steps):
        assert after.at_s - before.ends_s >= 10


def test_controlled_shutdown_and_rolling_restart_judge_offline_partitions() -> None:
    for name in ("controlled-shutdown", "rolling-restart"):
        assert "no_offline_partitions" in SCENARIOS[name].invariants
        assert {step.fault.kind for step in SCENARIOS[name].schedule(1).steps} == {"stop"}


def test_draws_without_a_seed_are_the_nominal_values() -> None:
    draws = Draws(None)
    assert draws.around(15.04, 3) == 15.0
    assert draws.pick(("a", "b")) == "a"
    assert draws.order((3, 1, 2)) == [3, 1, 2]
    seeded = Draws(9)
    assert all(12 <= seeded.around(15, 3) <= 18 for _ in range(100))


def _plan(seed: int | None) -> Schedule:
    return SCENARIOS["broker-failure"].plan(seed)


RUNBOOK = "demo: a demo.\n\nSetup: x\n\nSteps: y\n\nVerdict: z\n"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"invariants": CORE_INVARIANTS | {"no-cake"}}, "unknown invariants no-cake"),
        (
            {"workload": Workload("t", unclean_leader_election=True)},
            "data loss cannot be judged",
        ),
        ({"convergence_s": 0}, "convergence bound must be positive"),
        ({"runbook": "demo: a demo."}, "needs Setup, Steps and Verdict"),
        ({"name": "Demo"}, "lowercase words"),
    ],
)
def test_a_scenario_refuses_what_cannot_be_run_or_judged(
    kwargs: dict[str, object], words: str
) -> None:
    fields: dict[str, object] = {
        "name": "demo",
        "summary": "a demo",
        "workload": Workload("t", duration_s=75),
        "plan": _plan,
        "convergence_s": 30,
        "invariants": CORE_INVARIANTS,
        "runbook": RUNBOOK,
        **kwargs,
    }
    with pytest.raises(ValueError, match=words):
        Scenario(**fields)  # type: ignore[arg-type]


def test_a_runbook_names_its_scenario_and_a_plan_must_span_the_workload() -> None:
    scenario = Scenario.from_runbook(RUNBOOK, Workload("t", duration_s=60), _plan, 30)
    assert (scenario.name, scenario.summary) == ("demo", "a demo")
    with pytest.raises(ValueError, match=re.escape("ends at 75.0 s, the workload at 60")):
        scenario.schedule(1)
    with pytest.raises(ValueError, match=re.escape("starts with '<name>: <summary>.'")):
        Scenario.from_runbook("no summary here", Workload("t"), _plan, 30)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"topic": "a b"}, "illegal"),
        (
            {"min_insync_replicas": 3, "replication_factor": 2},
            r"min ISR must be 1\.\.replication factor \(2\), got 3",
        ),
        ({"acks": 0}, "acks must be"),
        ({"duration_s": 0}, "duration must be positive"),
    ],
)
def test_a_workload_refuses_bad_settings(kwargs: dict[str, object], words: str) -> None:
    arguments: dict[str, object] = {"topic": "t", **kwargs}
    with pytest.raises(ValueError, match=words):
        Workload(**arguments)  # type: ignore[arg-type]


def test_a_workload_gives_the_run_its_config() -> None:
    config = SCENARIOS["network-partition"].workload.config()
    assert (config.topic, config.partitions, config.duration_s, config.acks) == (
        "chaos-network-partition",
        6,
        90,
        -1,
    )


@given(seed=SEEDS)
@PROPERTY
def test_a_slow_broker_loses_its_session_and_registers_again_still_slow(
    seed: int | None,
) -> None:
    latency, first, second = SCENARIOS["slow-reregistration"].schedule(seed).steps
    assert latency.fault.describe() == "latency non-controller:1 delay_ms=1000"
    for cut in (first, second):
        assert cut.fault.describe() == "zk-isolate non-controller:1"
        assert cut.duration_s > SESSION_TIMEOUT_S  # the session expires
    assert latency.at_s < first.at_s
    assert first.ends_s + 5 <= second.at_s  # registered again in between
    assert second.ends_s + 5 <= latency.ends_s  # still slow after the second


@given(seed=SEEDS)
@PROPERTY
def test_three_controllers_in_turn_lose_their_sessions(seed: int | None) -> None:
    schedule = SCENARIOS["controller-expiries"].schedule(seed)
    assert [s.fault.describe() for s in schedule.steps] == ["zk-isolate controller"] * 3
    assert all(s.duration_s > SESSION_TIMEOUT_S for s in schedule.steps)
    for earlier, later in itertools.pairwise(schedule.steps):
        assert later.at_s - earlier.ends_s >= 6  # the broker is back and registered
    assert schedule.steps[-1].ends_s <= schedule.heal_at_s
