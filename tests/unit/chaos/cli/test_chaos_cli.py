"""`python -m chaos`: scenario lookup and `--duration`, the `all` table (a disk scenario
skipped, not failed, on a cluster without disk layers), refusing a directory that is not
a run, and exit code 2 for usage errors (no cluster is touched)."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

import pytest

import chaos.__main__ as chaos_main
from chaos.__main__ import main
from chaos.cli import commands
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.schedule import write_schedule
from chaos.run.runner import RunOutcome, RunRequest
from chaos.run.setup import NeedsDiskLayers
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.layout import RUN_DIR_VERSION, RunDir


def test_unknown_scenarios_and_durations_are_usage_errors() -> None:
    with pytest.raises(commands.UsageError, match="unknown scenario 'nope'"):
        commands.scenario_named("nope")
    with pytest.raises(commands.UsageError, match="fixed timeline"):
        commands.scenario_named("broker-failure", 120)
    with pytest.raises(commands.UsageError, match="at least 40 s"):
        commands.scenario_named("random", 10)


def test_a_random_mix_takes_any_duration() -> None:
    scenario = commands.scenario_named("random", 120)
    schedule = scenario.schedule(3)
    assert scenario.workload.duration_s == 120
    assert schedule.end_s == 120
    assert schedule == scenario.schedule(3)


def test_the_all_table_has_a_row_per_scenario() -> None:
    ok = RunVerdict((InvariantResult("one_controller_per_epoch", checked=3),))
    bad = RunVerdict((InvariantResult("acknowledged_writes", (Violation("t-0", "lost"),)),))
    table = commands.all_table(
        [
            ("broker-failure", RunOutcome(Path("r1"), ok, 7.5, 1), ""),
            ("zk-isolation", RunOutcome(Path("r2"), bad, None, 1), ""),
            ("controller-pause", None, "cluster is not up"),
        ],
        1,
    )
    lines = table.splitlines()
    assert len(lines) == 4
    assert "broker-failure" in lines[1]
    assert "7.5s" in lines[1]
    assert lines[1].rstrip().endswith("ok")
    assert "FAIL (acknowledged_writes=VIOLATED)" in lines[2]
    assert "NOT RUN: cluster is not up" in lines[3]


def test_replay_of_a_directory_that_is_not_a_run_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path), "--project", "none"]) == 2
    assert "not a chaos run directory" in capsys.readouterr().err


def test_a_recorded_run_gives_back_its_scenario_and_schedule(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r").create()
    schedule = SCENARIOS["zk-isolation"].schedule(5)
    run.write_json(run.config, {"run_dir_version": RUN_DIR_VERSION, "scenario": "zk-isolation"})
    write_schedule(run.schedule, schedule)
    scenario, recorded = commands.recorded_run(run.root)
    assert scenario.name == "zk-isolation"
    assert recorded == schedule
    run.write_json(run.config, {"run_dir_version": 99, "scenario": "zk-isolation"})
    with pytest.raises(commands.UsageError, match="version 99"):
        commands.recorded_run(run.root)


def test_run_of_an_unknown_scenario_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "nope"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def test_list_names_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert commands.list_scenarios(argparse.Namespace()) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in SCENARIOS)


@pytest.mark.parametrize(
    "argv",
    [["run", "broker-failure"], ["all"], ["replay", "r"], ["shrink", "r", "--keep-topic"]],
)
def test_every_run_command_parses_what_the_runner_needs(argv: list[str]) -> None:
    from chaos.__main__ import build_parser

    args = build_parser().parse_args(argv)
    request = commands.run_request(args, SCENARIOS["broker-failure"], 1)
    assert request.keep_topic == ("--keep-topic" in argv)
    assert request.force_plain is False


@pytest.mark.parametrize(("named", "code"), [(None, 0), ("broker-failure,disk-full", 1)])
def test_all_skips_the_disk_scenarios_on_a_cluster_without_layers_unless_named(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    named: str | None,
    code: int,
) -> None:
    ok = RunVerdict((InvariantResult("one_controller_per_epoch", checked=3),))

    def run_one(request: RunRequest) -> RunOutcome:
        if request.scenario.name in ("disk-failure", "slow-disk", "disk-full"):
            raise NeedsDiskLayers("no layers")
        return RunOutcome(Path("r"), ok, 1.0, 1)

    monkeypatch.setattr(commands, "_run_one", run_one)
    args = argparse.Namespace(
        scenarios=named, seed=1, project="p", runs=Path("runs"), plain=True, keep_topic=False
    )
    assert commands.run_all(args) == code
    table = capsys.readouterr().out
    said = "SKIPPED: needs disk layers" if named is None else "NOT RUN: no layers"
    assert said in next(line for line in table.splitlines() if line.startswith("disk-full"))


def test_a_sigterm_interrupts_a_command_as_ctrl_c_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    handler_before = signal.getsignal(signal.SIGTERM)

    def killed(args: object) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("the signal did not interrupt the command")

    monkeypatch.setitem(chaos_main.COMMANDS, "list", killed)
    assert chaos_main.main(["list"]) == 130
    assert "interrupted; faults were healed" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == handler_before
