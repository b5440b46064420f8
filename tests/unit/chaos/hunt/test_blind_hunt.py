"""The blind hunt of one switch against a fake cluster: generic schedules on the buggy
build until a verdict fails, coverage read after each run, the brokers recreated only
after a run that did not hold, the failing schedule shrunk on the buggy build, every
schedule replayed on the fixed build; and the summary's shape."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.blind import BlindResult, BlindSettings, blind_hunt, blind_scenario
from chaos.hunt.blind_report import Pace, cells, summary_json, write_summary
from chaos.hunt.corpus import draw_schedule
from chaos.run.runner import RunOutcome
from chaos.run.setup import RunSetupError
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.invariants.names import ACKNOWLEDGED_WRITES

BUG = "unclean-election"


class FakeCluster:
    """Builds, runs and coverage: a run on the switched build fails when its schedule
    holds a `kill` step (and, shrunk, keeps one); each run reaches the behaviours named
    after its steps' kinds and targets."""

    def __init__(self, fail: bool = True, fixed_fails: bool = False) -> None:
        self.switches: tuple[str, ...] = ()
        self.fail = fail
        self.fixed_fails = fixed_fails
        self.log: list[str] = []
        self.ran: dict[Path, Schedule] = {}
        self.setup_errors = 0  # how many of the next runs cannot be set up
        self.failing_uses: set[int] = set()  # which calls of `use` fail (from 1)
        self.run_builds: list[tuple[str, ...]] = []  # each run's switches
        self.unperformed = 0  # how many of the next runs perform no step

    def use(self, switches: tuple[str, ...]) -> None:
        self.log.append(f"use {','.join(switches) or '-'}")
        if sum(line.startswith("use") for line in self.log) in self.failing_uses:
            raise RunSetupError("brokers did not settle")
        self.switches = switches

    def run(self, scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        assert schedule is not None
        assert scenario.name == "random"
        if self.setup_errors:
            self.setup_errors -= 1
            self.log.append("setup error")
            raise RunSetupError("the cluster is not ready")
        self.log.append("run")
        self.run_builds.append(self.switches)
        killed = any(s.fault.kind == "kill" for s in schedule.steps)
        fails = killed and (self.fail if self.switches else self.fixed_fails)
        result = InvariantResult(ACKNOWLEDGED_WRITES, (Violation("e", "lost"),) if fails else ())
        run_dir = Path(f"runs/run-{len(self.ran) + 1}")
        self.ran[run_dir] = schedule
        missed: tuple[str, ...] = ()
        if self.unperformed and not fails:
            self.unperformed -= 1
            missed = ("step 0: did not take effect",)
        outcome = RunOutcome(run_dir, RunVerdict((result,)), 1.0, len(schedule.steps))
        return dataclasses.replace(outcome, bug_switches=self.switches, failed_steps=missed)

    def coverage(self, run_dir: Path) -> frozenset[str]:
        steps = self.ran[run_dir].steps
        return frozenset(f"{s.fault.kind}:{s.fault.target}" for s in steps)


class Clock:
    """A clock that moves a minute each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 60.0
        return self.now


def _hunt(cluster: FakeCluster, runs: int = 12, seeds: tuple[int, ...] = ()) -> BlindResult:
    settings = BlindSettings(runs=runs, run_s=45.0, max_shrink=8, seeds=seeds, hunt_seed=3)
    return blind_hunt(
        BUG, cluster, cluster.run, settings, cluster.coverage, Clock(), say=lambda _: None
    )


def _first_kill_seed() -> int:
    return next(
        s
        for s in range(1, 200)
        if any(st.fault.kind == "kill" for st in draw_schedule(s, 45.0).steps)
    )


def test_caught_shrunk_and_every_schedule_replayed_clean_on_the_fixed_build() -> None:
    cluster = FakeCluster()
    seed = _first_kill_seed()
    result = _hunt(cluster, seeds=(seed,))
    assert result.caught
    assert result.runs_to_catch == 1
    assert result.runs[0].origin == f"fresh seed {seed}"
    assert result.catching is not None
    assert result.catching.attempt.fired == (ACKNOWLEDGED_WRITES,)
    assert result.shrunk is not None
    assert [s.fault.kind for s in result.shrunk.steps] == ["kill"]
    assert result.fixed_clean
    assert result.ok
    assert [a.ok for a in result.fixed] == [True]
    assert cluster.log[0] == f"use {BUG}"
    fixed = len(result.fixed)
    assert cluster.run_builds[:-fixed] == [(BUG,)] * (len(cluster.run_builds) - fixed)
    assert cluster.run_builds[-fixed:] == [()] * fixed


def test_coverage_grows_run_by_run_and_later_runs_mutate_earlier_schedules() -> None:
    result = _hunt(FakeCluster(fail=False), runs=8)
    union = [frozenset().union(*(r.behaviours for r in result.runs[: i + 1])) for i in range(8)]
    assert result.growth == tuple(len(u) for u in union)
    assert result.reached == union[-1]
    assert result.runs[0].origin.startswith("fresh seed ")
    assert any(r.origin.startswith("run ") for r in result.runs)


def test_the_brokers_are_kept_while_runs_hold_and_recreated_after_one_that_did_not() -> None:
    cluster = FakeCluster(fail=False)
    cluster.setup_errors = 1
    result = _hunt(cluster, runs=3)
    assert [r.attempt.ok for r in result.runs] == [None, True, True]
    assert cluster.log[:5] == [f"use {BUG}", "setup error", f"use {BUG}", "run", "run"]
    assert cluster.log[5:] == ["use -", "run", "run", "run"]
    assert result.recreated == 1


def test_brokers_that_do_not_come_back_make_a_run_not_judged_and_the_next_tries_again() -> None:
    cluster = FakeCluster(fail=False)
    cluster.setup_errors = 1
    cluster.failing_uses = {2}
    result = _hunt(cluster, runs=3)
    assert [r.attempt.ok for r in result.runs] == [None, None, True]
    assert result.runs[1].attempt.error == "recreating the brokers: brokers did not settle"
    assert cluster.log[:5] == [f"use {BUG}", "setup error", f"use {BUG}", f"use {BUG}", "run"]
    assert result.recreated == 2


def test_a_run_not_judged_is_never_the_parent_of_a_mutation() -> None:
    cluster = FakeCluster(fail=False)
    cluster.unperformed = 3  # the first run, tried three times, performs nothing
    result = _hunt(cluster, runs=6)
    first = result.runs[0]
    assert first.attempt.ok is None
    assert first.attempt.error.startswith("not exercised")
    assert first.behaviours  # what it reached is reported...
    mutated = [r.origin for r in result.runs if r.origin.startswith("run ")]
    assert mutated  # ...but only judged runs are mutated
    assert not any(origin.startswith("run 1:") for origin in mutated)


def test_not_caught_replays_every_schedule_on_the_fixed_build() -> None:
    cluster = FakeCluster(fail=False)
    result = _hunt(cluster, runs=4)
    assert not result.caught
    assert not result.ok
    assert result.shrunk is None
    assert result.shrink_note == "not caught"
    assert len(result.runs) == 4 == len(result.fixed)
    fixed_runs = [s for p, s in cluster.ran.items() if p.name in {f"run-{i}" for i in range(5, 9)}]
    assert fixed_runs == [r.schedule for r in result.runs]


def test_a_false_alarm_on_the_fixed_build_is_counted_and_the_brokers_recreated() -> None:
    cluster = FakeCluster(fixed_fails=True)
    result = _hunt(cluster, seeds=(_first_kill_seed(),))
    assert result.caught
    assert result.false_alarms == 1
    assert not result.fixed_clean
    assert not result.ok


def test_the_same_hunt_seed_and_coverage_choose_the_same_schedules() -> None:
    first, second = _hunt(FakeCluster(fail=False), runs=6), _hunt(FakeCluster(fail=False), runs=6)
    assert [r.schedule for r in first.runs] == [r.schedule for r in second.runs]
    assert [r.origin for r in first.runs] == [r.origin for r in second.runs]


def test_the_blind_scenario_is_random_as_long_as_the_run() -> None:
    scenario = blind_scenario(50.0)
    assert scenario.name == "random"
    assert scenario.workload.duration_s == 50.0
    assert scenario.schedule(4) == draw_schedule(4, 50.0)


def test_the_summary_holds_each_switch_and_the_hunt_figures(tmp_path: Path) -> None:
    result = _hunt(FakeCluster(), seeds=(_first_kill_seed(),))
    missed = _hunt(FakeCluster(fail=False), runs=2)
    path = write_summary(tmp_path, [result, missed], Pace(runs=10, hours=0.5), {"runs": 12})
    summary = json.loads(path.read_text())
    assert summary == summary_json([result, missed], Pace(10, 0.5), {"runs": 12})
    assert summary["runs_per_hour"] == 20.0
    assert summary["fixed_runs"] == 3
    assert summary["fixed_false_alarms"] == 0
    assert summary["ok"] is False
    caught, not_caught = summary["bugs"]
    assert {
        "bug",
        "caught",
        "invariant",
        "runs_to_catch",
        "minutes_to_catch",
        "shrunk_steps",
        "coverage",
    } <= caught.keys()
    assert caught["caught"] is True
    assert caught["invariant"] == ACKNOWLEDGED_WRITES
    assert caught["runs_to_catch"] == 1
    assert caught["minutes_to_catch"] == 1.0
    assert caught["shrunk_steps"] == 1
    assert caught["coverage"]["reached"] == len(caught["coverage"]["behaviours"])
    assert caught["coverage"]["growth"] == [caught["coverage"]["reached"]]
    assert not_caught["caught"] is False
    assert not_caught["runs_to_catch"] is None
    assert len(not_caught["coverage"]["growth"]) == 2
    assert cells(missed)[3] == "> 2"
