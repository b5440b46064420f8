"""The hunt of one bug against a fake cluster: the buggy build runs until a verdict
fails, the failing schedule is shrunk on the buggy build, the fixed build reruns exactly
what the buggy build ran; set-up errors are recorded, not raised."""

from __future__ import annotations

from pathlib import Path

from chaos.generator.scenarios import SCENARIOS, Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.command import REPO_ROOT
from chaos.hunt.hunt import BugResult, HuntSettings, hunt
from chaos.hunt.plan import BugPlan
from chaos.run.runner import RunOutcome
from chaos.run.setup import RunSetupError
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.invariants.names import CONTROLLER_EPOCH_FENCING, CONVERGES_AFTER_HEAL

PAUSE = SCENARIOS["controller-pause"]
LAST = SCENARIOS["last-replica-standing"]


class FakeCluster:
    """Builds and runs: a run fails when the build has the switch and its seed is in
    `failing_seeds` (a schedule with fewer steps fails while it keeps step 1)."""

    def __init__(self, failing_seeds: set[int], fired: str = CONTROLLER_EPOCH_FENCING) -> None:
        self.switches: tuple[str, ...] = ()
        self.failing_seeds = failing_seeds
        self.fired = fired
        self.log: list[str] = []
        self.setup_error_seeds: set[int] = set()
        self.unexercised: dict[int, int] = {}  # seed -> how many more runs miss a step

    def use(self, switches: tuple[str, ...]) -> None:
        self.switches = switches
        self.log.append(f"use {','.join(switches) or '-'}")

    def run(self, scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        kept = None if schedule is None else len(schedule.steps)
        self.log.append(f"run {scenario.name} {seed} {self.switches} {kept}")
        if seed in self.setup_error_seeds:
            raise RunSetupError("the cluster is not ready")
        fails = bool(self.switches) and seed in self.failing_seeds
        if schedule is not None and len(schedule.steps) < len(scenario.schedule(seed).steps):
            fails = fails and 1 in [scenario.schedule(seed).steps.index(s) for s in schedule.steps]
        missed: tuple[str, ...] = ()
        if self.unexercised.get(seed, 0) > 0:
            self.unexercised[seed] -= 1
            missed = ("step 1 (pause controller): unable to freeze",)
        result = InvariantResult(self.fired, (Violation("e", "broken"),) if fails else ())
        verdict = RunVerdict((result,))
        run_dir = Path(f"runs/{scenario.name}-{seed}")
        return RunOutcome(run_dir, verdict, 1.0, 1, self.switches, failed_steps=missed)


def _plan(scenario: Scenario, catches: str = CONTROLLER_EPOCH_FENCING) -> BugPlan:
    return BugPlan("kafka-1188", (scenario,), frozenset({catches}), "why")


def _hunt(cluster: FakeCluster, plan: BugPlan, runs: int = 5) -> BugResult:
    return hunt(plan, cluster, cluster.run, HuntSettings(runs=runs), say=lambda _: None)


def test_caught_on_the_third_run_and_clean_on_the_fixed_build() -> None:
    cluster = FakeCluster({3})
    result = _hunt(cluster, _plan(PAUSE))
    assert [a.ok for a in result.buggy] == [True, True, False]
    assert result.caught
    assert result.expected
    assert result.fixed_clean
    assert result.ok
    assert result.catching is not None
    assert result.catching.fired == (CONTROLLER_EPOCH_FENCING,)
    assert [(a.scenario, a.seed) for a in result.fixed] == [(PAUSE.name, s) for s in (1, 2, 3)]
    assert cluster.log[0] == "use kafka-1188"
    assert "use -" in cluster.log
    switched = cluster.log.index("use -")
    assert all("('kafka-1188',)" in line for line in cluster.log[1:switched])
    assert all("()" in line for line in cluster.log[switched + 1 :])
    assert result.shrunk == PAUSE.schedule(3)
    assert result.shrink_note == "one step, nothing to shrink"


def test_a_two_step_schedule_is_shrunk_on_the_buggy_build() -> None:
    cluster = FakeCluster({1}, fired=CONVERGES_AFTER_HEAL)
    result = _hunt(cluster, _plan(LAST, CONVERGES_AFTER_HEAL))
    assert result.caught
    assert result.ok
    assert result.shrunk is not None
    assert len(result.shrunk.steps) == 1
    assert result.shrunk.steps[0] == LAST.schedule(1).steps[1]
    assert "2 -> 1 steps" in result.shrink_note
    switched = cluster.log.index("use -")
    shrink_runs = [line for line in cluster.log[:switched] if line.endswith(" 1")]
    assert shrink_runs
    assert all("('kafka-1188',)" in line for line in shrink_runs)


def test_not_caught_within_the_runs_is_not_ok_even_when_the_fixed_build_is_clean() -> None:
    result = _hunt(FakeCluster(set()), _plan(PAUSE), runs=2)
    assert not result.caught
    assert result.fixed_clean
    assert not result.ok
    assert result.shrunk is None
    assert len(result.buggy) == 2 == len(result.fixed)


def test_an_unexpected_invariant_is_caught_but_marked() -> None:
    result = _hunt(FakeCluster({1}, fired=CONVERGES_AFTER_HEAL), _plan(PAUSE))
    assert result.caught
    assert not result.expected


def test_a_run_that_could_not_be_set_up_counts_as_neither() -> None:
    cluster = FakeCluster({2})
    cluster.setup_error_seeds = {1}
    result = _hunt(cluster, _plan(PAUSE))
    assert [a.ok for a in result.buggy] == [None, False]
    assert result.buggy[0].error == "the cluster is not ready"
    assert result.caught
    assert not result.fixed_clean


def test_a_run_whose_step_failed_is_run_again_before_it_counts() -> None:
    cluster = FakeCluster({2})
    cluster.unexercised = {1: 1}
    result = _hunt(cluster, _plan(PAUSE))
    assert [a.ok for a in result.buggy] == [True, False]
    runs = [line for line in cluster.log if line.startswith("run ")]
    assert runs[:3] == [
        f"run {PAUSE.name} 1 ('kafka-1188',) None",
        f"run {PAUSE.name} 1 ('kafka-1188',) None",
        f"run {PAUSE.name} 2 ('kafka-1188',) None",
    ]
    assert result.ok


def test_a_run_never_exercised_counts_as_neither() -> None:
    cluster = FakeCluster({2})
    cluster.unexercised = {1: 5}
    result = _hunt(cluster, _plan(PAUSE))
    assert [a.ok for a in result.buggy] == [None, False]
    assert result.buggy[0].error.startswith("not exercised: step 1 (pause controller)")
    assert cluster.unexercised[1] == 5 - 2 - 2  # twice on each build
    assert not result.fixed_clean


def test_a_failed_verdict_counts_even_when_a_step_failed() -> None:
    cluster = FakeCluster({1})
    cluster.unexercised = {1: 1}
    result = _hunt(cluster, _plan(PAUSE))
    assert [a.ok for a in result.buggy] == [False]
    assert [line for line in cluster.log if line.startswith("run ")][1:2] == [
        f"run {PAUSE.name} 1 () None"
    ]


def test_a_replay_after_a_failed_run_starts_on_fresh_brokers() -> None:
    cluster = FakeCluster({1}, fired=CONVERGES_AFTER_HEAL)
    result = _hunt(cluster, _plan(LAST, CONVERGES_AFTER_HEAL))
    on = "run last-replica-standing 1 ('kafka-1188',)"
    assert cluster.log == [
        "use kafka-1188",
        f"{on} None",  # caught: its brokers may be damaged
        "use kafka-1188",
        f"{on} 2",  # the whole schedule fails again
        "use kafka-1188",
        f"{on} 1",  # step 0 alone holds: its brokers are reused
        f"{on} 1",  # step 1 alone fails
        "use -",
        "run last-replica-standing 1 () None",
    ]
    assert result.shrunk is not None
    assert result.shrunk.steps == (LAST.schedule(1).steps[1],)


def test_a_replay_that_cannot_be_set_up_counts_as_passing_and_says_why() -> None:
    cluster = FakeCluster({1}, fired=CONVERGES_AFTER_HEAL)
    said: list[str] = []
    runs = [0]
    original = cluster.run

    def run(scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        runs[0] += 1
        if schedule is not None:
            raise RunSetupError("the cluster is not ready")
        return original(scenario, seed, schedule)

    plan = _plan(LAST, CONVERGES_AFTER_HEAL)
    result = hunt(plan, cluster, run, HuntSettings(runs=5), say=said.append)
    assert result.caught
    assert result.shrunk is None
    assert result.shrink_note == "the failure did not come back on replay"
    replays = [line for line in said if "shrink replay" in line]
    assert replays
    assert all("could not be judged (the cluster is not ready)" in line for line in replays)


def test_the_hunt_is_judged_as_a_comparison_of_the_switched_build_with_the_fixed() -> None:
    result = _hunt(FakeCluster({2}), _plan(PAUSE))
    comparison = result.comparison()
    assert comparison.head == "bug switch kafka-1188"
    assert [(p.seed, p.base.ok, p.head.ok) for p in comparison.pairs] == [
        (1, True, True),
        (2, True, False),
    ]
    assert [(r.kind, r.scenario, r.name) for r in comparison.regressions] == [
        ("invariant", PAUSE.name, CONTROLLER_EPOCH_FENCING)
    ]
    assert comparison.exit_code() == 1


def test_a_bug_the_fixed_build_shares_is_no_regression_of_the_switch() -> None:
    result = _hunt(FakeCluster({1}), _plan(PAUSE), runs=1)
    assert result.buggy[0].ok is False
    shared = BugResult(result.plan, result.buggy, result.buggy)  # the fixed build fails alike
    assert shared.comparison().regressions == ()
    assert not shared.fixed_clean


def test_the_hunt_finds_the_repositorys_secrets_and_runs_from_its_root() -> None:
    assert (REPO_ROOT / "pyproject.toml").is_file()
    assert (REPO_ROOT / "docker-compose.yml").is_file()
