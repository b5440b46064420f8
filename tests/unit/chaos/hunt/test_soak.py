"""The fixed build's soak against a fake cluster: fresh generic schedules on brokers with
no switch, seeds of a stream no hunt draws, the brokers recreated only after a run that
did not hold, every failed verdict an alarm counted by invariant; the summary's shape and
the command's usage errors."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from chaos.__main__ import build_parser, main
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.blind import DEFAULT_RUN_S
from chaos.hunt.blind_report import Pace
from chaos.hunt.corpus import draw_schedule
from chaos.hunt.soak import SEED_BOUND, SoakResult, SoakSettings, soak, soak_seeds
from chaos.hunt.soak_command import DEFAULT_PROJECT, DEFAULT_RUNS, summary_json, write_summary
from chaos.run.runner import RunOutcome
from chaos.run.setup import RunSetupError
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.invariants.names import CONVERGES_AFTER_HEAL


class FakeCluster:
    """Builds and runs: a run fails `converges_after_heal` when its seed is in `failing`;
    the first `setup_errors` runs cannot be set up."""

    def __init__(self, failing: frozenset[int] = frozenset(), setup_errors: int = 0) -> None:
        self.failing = failing
        self.setup_errors = setup_errors
        self.log: list[str] = []
        self.schedules: list[Schedule] = []

    def use(self, switches: tuple[str, ...]) -> None:
        self.log.append(f"use {','.join(switches) or '-'}")

    def run(self, scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        assert schedule is not None
        assert scenario.name == "random"
        if self.setup_errors:
            self.setup_errors -= 1
            self.log.append("setup error")
            raise RunSetupError("the cluster is not ready")
        self.log.append(f"run {seed}")
        self.schedules.append(schedule)
        broken = (Violation("t-0", "never converged"),) if seed in self.failing else ()
        verdict = RunVerdict((InvariantResult(CONVERGES_AFTER_HEAL, broken),))
        return RunOutcome(Path(f"runs/{seed}"), verdict, 1.0, len(schedule.steps), ())


def _soak(cluster: FakeCluster, runs: int, seeds: tuple[int, ...] = ()) -> SoakResult:
    settings = SoakSettings(runs=runs, run_s=45.0, seeds=seeds, soak_seed=7)
    minutes = itertools.count(0.0, 60.0)
    return soak(cluster, cluster.run, settings, lambda: next(minutes), say=lambda _: None)


def test_the_given_seeds_come_first_then_the_soaks_own_stream() -> None:
    settings = SoakSettings(seeds=(5, 9), soak_seed=7)
    drawn = list(itertools.islice(soak_seeds(settings), 5))
    assert drawn[:2] == [5, 9]
    rng = random.Random("soak:7")
    assert drawn[2:] == [rng.randrange(1, SEED_BOUND) for _ in range(3)]
    hunts = random.Random("1:kafka-1367")  # a blind hunt's planner stream
    assert drawn[2:] != [hunts.randrange(1, SEED_BOUND) for _ in range(3)]


def test_every_run_is_a_fresh_schedule_on_brokers_without_a_switch() -> None:
    cluster = FakeCluster()
    result = _soak(cluster, runs=3, seeds=(11, 12))
    assert cluster.log == ["use -", "run 11", "run 12", f"run {result.runs[2].attempt.seed}"]
    assert cluster.schedules[0] == draw_schedule(11, 45.0)
    assert (result.held, len(result.alarms), result.not_judged) == (3, 0, 0)
    assert result.ok
    assert [r.minutes for r in result.runs] == [1.0, 2.0, 3.0]


def test_an_alarm_is_counted_by_invariant_and_the_brokers_recreated_after_it() -> None:
    cluster = FakeCluster(failing=frozenset({12}))
    result = _soak(cluster, runs=3, seeds=(11, 12, 13))
    assert cluster.log == ["use -", "run 11", "run 12", "use -", "run 13"]
    assert [r.attempt.seed for r in result.alarms] == [12]
    assert result.fired == {CONVERGES_AFTER_HEAL: 1}
    assert result.recreated == 1
    assert not result.ok


def test_a_run_that_cannot_be_set_up_is_not_judged() -> None:
    cluster = FakeCluster(setup_errors=1)
    result = _soak(cluster, runs=2, seeds=(11, 12))
    assert result.not_judged == 1
    assert result.held == 1
    assert cluster.log == ["use -", "setup error", "use -", "run 12"]
    assert result.ok


def test_no_judged_run_is_not_a_clean_soak() -> None:
    assert not _soak(FakeCluster(setup_errors=5), runs=2, seeds=(1, 2)).ok


def test_the_summary_names_every_alarm_with_its_schedule(tmp_path: Path) -> None:
    result = _soak(FakeCluster(failing=frozenset({12})), runs=2, seeds=(11, 12))
    path = write_summary(tmp_path, result, Pace(2, 0.05), {"runs": 2})
    summary = json.loads(path.read_text())
    assert summary == summary_json(result, Pace(2, 0.05), {"runs": 2})
    assert (summary["runs"], summary["held"], summary["false_alarms"]) == (2, 1, 1)
    assert summary["fired"] == {CONVERGES_AFTER_HEAL: 1}
    assert summary["alarms"][0]["seed"] == 12
    assert summary["alarms"][0]["fired"] == [CONVERGES_AFTER_HEAL]
    assert summary["alarms"][0]["schedule"]
    assert [r["seed"] for r in summary["every_run"]] == [11, 12]
    assert summary["runs_per_hour"] == 40.0
    assert summary["ok"] is False


def test_the_defaults() -> None:
    args = build_parser().parse_args(["soak"])
    assert (args.runs, args.run_seconds, args.soak_seed) == (DEFAULT_RUNS, DEFAULT_RUN_S, 1)
    assert args.project == DEFAULT_PROJECT


@pytest.mark.parametrize(
    "argv",
    [
        ["soak", "--runs", "0"],
        ["soak", "--run-seconds", "20"],
        ["soak", "--seeds", "1,x"],
        ["soak", "--project", "cov"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", "cov")
    assert main(argv) == 2
