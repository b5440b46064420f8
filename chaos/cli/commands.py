"""The handlers of `python -m chaos list | run | all | replay | shrink` (the parser and
`heal` are in `chaos.__main__`). Each returns the process exit code: 0 the verdict holds,
1 an invariant is broken (or, for `shrink`, the failure was reproduced and shrunk), 2 a
usage or set-up error. Main thread.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from chaos.errors import ChaosError, FaultError, ScheduleError
from chaos.generator.generic import generic_schedule
from chaos.generator.scenarios import SCENARIOS, Scenario
from chaos.generator.schedule import Schedule, read_schedule, write_schedule
from chaos.generator.shrink import ShrinkProgress, shrink
from chaos.run.runner import RunOutcome, RunRequest, run
from chaos.run.setup import NeedsDiskLayers, RunSetupError
from rundir.layout import RunDir, check_version

#: The `all` table's word for a scenario skipped on a cluster without disk layers.
NEEDS_LAYERS = "needs disk layers (make up DISK_LAYER=1)"


class UsageError(ChaosError):
    """Bad arguments the parser could not catch (an unknown scenario, a bad run dir)."""


def scenario_named(name: str, duration_s: float | None = None) -> Scenario:
    """The scenario `name`; `--duration` only for `random`, whose generator fills any
    length."""
    try:
        scenario = SCENARIOS[name]
    except KeyError:
        raise UsageError(f"unknown scenario {name!r}; `python -m chaos list` shows them") from None
    if duration_s is None:
        return scenario
    if name != "random":
        raise UsageError(f"{name} has a fixed timeline; --duration applies to `random` only")
    if duration_s < 40:
        raise UsageError(f"--duration must be at least 40 s (a 20 s heal phase), got {duration_s}")
    workload = dataclasses.replace(scenario.workload, duration_s=duration_s)

    def plan(seed: int | None) -> Schedule:
        topic = scenario.workload.topic
        return generic_schedule(0 if seed is None else seed, duration_s, topic=topic, heal_s=20)

    return dataclasses.replace(scenario, workload=workload, plan=plan)


def list_scenarios(args: argparse.Namespace) -> int:
    """Print every scenario: name, workload length, faults, bound, summary."""
    print(f"{'SCENARIO':<28} {'LENGTH':>6} {'BOUND':>6}  FAULTS / SUMMARY")
    for name, scenario in SCENARIOS.items():
        kinds = sorted({s.fault.kind for s in scenario.schedule(None).steps})
        print(
            f"{name:<28} {scenario.workload.duration_s:>5.0f}s {scenario.convergence_s:>5.0f}s  "
            f"{', '.join(kinds)}\n{'':<44}{scenario.summary}"
        )
    return 0


def _outcome_line(outcome: RunOutcome) -> str:
    recovery = "-" if outcome.recovery_s is None else f"{outcome.recovery_s:.1f} s"
    word = "PASS" if outcome.ok else "FAIL"
    bugs = f"; bug switches {', '.join(outcome.bug_switches)}" if outcome.bug_switches else ""
    return f"{word}: {outcome.run_dir} (recovered {recovery} after the heal{bugs})"


def _run_one(request: RunRequest) -> RunOutcome:
    outcome = run(request)
    print(outcome.verdict.table())
    print(_outcome_line(outcome))
    return outcome


def run_scenario(args: argparse.Namespace) -> int:
    """`run SCENARIO`: one run; its verdict decides the exit code."""
    scenario = scenario_named(args.scenario, args.duration)
    outcome = _run_one(run_request(args, scenario, args.seed))
    return 0 if outcome.ok else 1


def run_all(args: argparse.Namespace) -> int:
    """`all`: every scenario (or `--scenarios a,b`) once with `--seed`, then one table.
    Without `--scenarios`, a scenario whose disk faults the cluster cannot take (no disk
    layers) is skipped, said in its row, and fails nothing."""
    names = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    scenarios = [scenario_named(n) for n in names]
    rows: list[tuple[str, RunOutcome | None, str]] = []
    skipped: set[str] = set()
    for scenario in scenarios:
        print(f"==> {scenario.name} (seed {args.seed})", flush=True)
        try:
            rows.append((scenario.name, _run_one(run_request(args, scenario, args.seed)), ""))
        except (RunSetupError, FaultError) as exc:
            skip = isinstance(exc, NeedsDiskLayers) and not args.scenarios
            print(f"{scenario.name}: {'skipped' if skip else 'not run'}: {exc}", file=sys.stderr)
            rows.append((scenario.name, None, NEEDS_LAYERS if skip else str(exc)))
            if skip:
                skipped.add(scenario.name)
    print(all_table(rows, args.seed, frozenset(skipped)))
    ran = [o for name, o, _ in rows if name not in skipped]
    return 0 if all(o is not None and o.ok for o in ran) else 1


def all_table(
    rows: Sequence[tuple[str, RunOutcome | None, str]],
    seed: int | None,
    skipped: frozenset[str] = frozenset(),
) -> str:
    """One row per scenario: seed, faults, each invariant's status, recovery time; a
    scenario in `skipped` says why it was not run."""
    lines = [f"{'SCENARIO':<28} {'SEED':>4} {'FAULTS':>6} {'RECOVERY':>9}  VERDICT"]
    for name, outcome, error in rows:
        if outcome is None:
            said = "SKIPPED" if name in skipped else "NOT RUN"
            lines.append(f"{name:<28} {seed!s:>4} {'-':>6} {'-':>9}  {said}: {error}")
            continue
        recovery = "-" if outcome.recovery_s is None else f"{outcome.recovery_s:.1f}s"
        checks = " ".join(
            f"{r.name}={r.status()}" for r in outcome.verdict.results if not r.ok or not r.judged
        )
        verdict = "ok" if outcome.ok else "FAIL"
        lines.append(
            f"{name:<28} {seed!s:>4} {outcome.faults:>6} {recovery:>9}  {verdict}"
            + (f" ({checks})" if checks else "")
        )
    return "\n".join(lines)


def run_request(
    args: argparse.Namespace,
    scenario: Scenario,
    seed: int | None,
    schedule: Schedule | None = None,
) -> RunRequest:
    return RunRequest(
        scenario,
        seed,
        args.project,
        args.runs,
        schedule=schedule,
        force_plain=args.plain,
        keep_topic=args.keep_topic,
        inter_broker_protocol=getattr(args, "inter_broker_protocol", None),
        flush_interval=getattr(args, "flush_interval", None),
    )


def recorded_run(run_dir: Path) -> tuple[Scenario, Schedule]:
    """The scenario and schedule a run directory recorded."""
    found = RunDir(run_dir)
    if not found.config.exists() or not found.schedule.exists():
        raise UsageError(f"{run_dir}: not a chaos run directory (no config.json/schedule.json)")
    try:
        config = found.read_json(found.config)
        check_version(config, run_dir)
        schedule = read_schedule(found.schedule)
    except (ValueError, ScheduleError) as exc:
        raise UsageError(str(exc)) from None
    workload = config.get("workload", {})
    duration = workload.get("duration_s") if config.get("scenario") == "random" else None
    return scenario_named(str(config.get("scenario")), duration), schedule


def replay(args: argparse.Namespace) -> int:
    """`replay RUN_DIR`: the recorded schedule again, as a new run."""
    scenario, schedule = recorded_run(args.run_dir)
    outcome = _run_one(run_request(args, scenario, schedule.seed, schedule))
    return 0 if outcome.ok else 1


def shrink_run(args: argparse.Namespace) -> int:
    """`shrink RUN_DIR`: replay ever smaller subsets of the run's schedule (ddmin); print
    the smallest that still fails and write it to RUN_DIR/shrunk-schedule.json."""
    scenario, schedule = recorded_run(args.run_dir)

    def fails(candidate: Schedule) -> bool:
        return not run(run_request(args, scenario, candidate.seed, candidate)).ok

    def progress(step: ShrinkProgress) -> None:
        verdict = "fails" if step.trial.failed else "passes"
        print(
            f"shrink: replay {step.tests_run}/{step.max_tests}: steps {list(step.trial.kept)} "
            f"{verdict}; smallest failing so far {list(step.smallest)}",
            flush=True,
        )

    result = shrink(schedule, fails, max_tests=args.max_runs, progress=progress)
    if not result.reproduced:
        print("shrink: the recorded schedule did not fail again; nothing to shrink")
        return 0
    out = args.run_dir / "shrunk-schedule.json"
    write_schedule(out, result.minimal)
    budget = " (budget exhausted)" if result.exhausted else ""
    print(
        f"shrink: {len(schedule.steps)} -> {len(result.minimal.steps)} steps after "
        f"{result.tests_run} replays{budget}; kept steps {list(result.kept)}; written to {out}"
    )
    print(result.minimal.describe())
    return 1
