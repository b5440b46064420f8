"""`python -m chaos bugs`: the bug hunt over the historical bug switches (docs/bugs.md,
"Running the bug hunt").

It brings up a compose project of its own (`--project`, `testbed-bugs` by default; never
the repository's default project) with short ZooKeeper sessions, hunts each selected
bug there (`chaos.hunt.hunt`: buggy runs until one fails, shrink, the same runs on the
fixed build), prints one table and writes `summary.json` and `summary.md` (rewritten
after every bug, so a long hunt that is stopped keeps what it found) beside the runs in
`runs/bugs-<time>/`. The project is removed at the end, also on errors and Ctrl-C.

Exit code 0 only when every selected bug was caught and every fixed-build run passed;
1 otherwise; 2 on usage or set-up errors. Main thread.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from chaos.cluster.leftovers import Leftovers
from chaos.cluster.project_lock import ProjectBusy, held
from chaos.errors import ChaosError
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.builds import ComposeBuilds
from chaos.hunt.hunt import Attempt, BugResult, HuntSettings, hunt
from chaos.hunt.plan import DEFAULT_RUNS, BugPlan, plans_for
from chaos.hunt.report import rich_table, row_of, write_summary
from chaos.hunt.tidy import left_stuck, present, tidy
from chaos.run.runner import RunOutcome, RunRequest, run
from chaos.run.setup import LeftoverWork, RunSetupError
from harness.compose import ComposeStartError, missing_images, started_project

__all__ = [
    "DEFAULT_PROJECT",
    "HuntUsageError",
    "ProjectRuns",
    "add_hunt_arguments",
    "add_parser",
    "guarded",
    "hunt_bugs",
    "parse_seeds",
    "print_table",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PROJECT = "testbed-bugs"
#: The brokers' ZooKeeper session in the hunt's project, as in the chaos test tier.
SESSION_MS = 6000
#: The table's width when the output is not a terminal.
TABLE_WIDTH = 200


class HuntUsageError(ChaosError):
    """Bad arguments to `bugs`."""


def add_parser(commands: Any) -> None:
    """The `bugs` subparser."""
    parser = commands.add_parser(
        "bugs",
        help="hunt the historical bug switches: caught on the buggy build, clean on the fixed",
        description="For each bug switch: recreate the brokers of a compose project of the "
        "hunt's own with the switch on, run its scenarios (seeds 1..N) until a verdict "
        "fails, shrink that schedule, then run the same seeds without the switch. Exit 0 "
        "only if every bug was caught and every fixed run passed.",
    )
    parser.add_argument("--bugs", default="", help="comma-separated switches (default: all)")
    parser.add_argument(
        "--runs", type=int, default=DEFAULT_RUNS, help="most buggy runs per bug (default 5)"
    )
    parser.add_argument("--seeds", default="", help="comma-separated seeds (default 1..RUNS)")
    add_hunt_arguments(parser, DEFAULT_PROJECT, "where runs/bugs-<time> goes")


def add_hunt_arguments(
    parser: argparse.ArgumentParser, project: str, out_help: str, shrink: bool = True
) -> None:
    """The options every hunt takes: shrink budget (unless `shrink` is false: the soak
    shrinks nothing), its compose project (`project` by default), the brokers' session,
    where its directory goes, plain output."""
    if shrink:
        parser.add_argument(
            "--max-shrink", type=int, default=8, help="most replays to shrink with (default 8)"
        )
    parser.add_argument("--project", default=project, help=f"compose project (default {project})")
    parser.add_argument(
        "--session-ms", type=int, default=SESSION_MS, help="brokers' ZooKeeper session (ms)"
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs", help=out_help)
    parser.add_argument("--plain", action="store_true", help="plain progress lines, no live panel")


def parse_seeds(text: str) -> tuple[int, ...]:
    """`"1,2,5"` -> (1, 2, 5); blank: none (the hunt counts 1..runs)."""
    try:
        seeds = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise HuntUsageError(f"seeds are comma-separated integers, got {text!r}") from None
    if any(s < 0 for s in seeds):
        raise HuntUsageError(f"seeds are not negative, got {text!r}")
    return seeds


def hunt_bugs(args: argparse.Namespace, default_project: str) -> int:
    """`bugs`: the hunt (see the module docstring); the exit code."""
    try:
        plans = plans_for(args.bugs.split(","))
    except KeyError as exc:
        raise HuntUsageError(str(exc.args[0])) from None
    settings = HuntSettings(args.runs, args.max_shrink, parse_seeds(args.seeds))
    return guarded(args, default_project, lambda: _hunt_all(args, plans, settings))


def guarded(args: argparse.Namespace, default_project: str, go: Callable[[], int]) -> int:
    """`go()`, the hunt, after the checks every hunt makes: not on the repository's
    default project, at least one run, the images built, the project not held by another
    hunt (`HuntUsageError`, `RunSetupError` else)."""
    if args.project == default_project:
        raise HuntUsageError(f"the hunt never runs on the default project {default_project}")
    if args.runs < 1:
        raise HuntUsageError(f"--runs must be at least 1, got {args.runs}")
    missing = missing_images()
    if missing:
        raise RunSetupError(f"images missing: {', '.join(missing)}; run `make images`")
    try:
        with held(args.out, args.project):
            return go()
    except ProjectBusy as exc:
        raise HuntUsageError(str(exc)) from None


def _hunt_all(args: argparse.Namespace, plans: tuple[BugPlan, ...], settings: HuntSettings) -> int:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out / f"bugs-{stamp}"
    recorded = {
        "bugs": [p.bug for p in plans],
        "runs": settings.runs,
        "seeds": list(settings.seeds),
        "max_shrink": settings.max_shrink,
        "project": args.project,
        "session_ms": args.session_ms,
    }
    print(f"bug hunt: {len(plans)} bug(s) on project {args.project}, runs in {out}", flush=True)
    results: list[BugResult] = []
    try:
        with started_project(
            REPO_ROOT, args.project, f"bugs-{stamp}-cluster", args.session_ms, stable_ports=True
        ) as cluster:
            builds = ComposeBuilds(cluster)
            run_one = ProjectRuns(cluster.project, out, args.plain)
            for number, plan in enumerate(plans, 1):
                print(f"==> [{number}/{len(plans)}] {plan.bug}: {plan.why}", flush=True)
                results.append(_hunt_one(plan, builds, run_one, settings))
                write_summary(out, results, recorded)
    except ComposeStartError as exc:
        raise RunSetupError(f"the hunt's compose project did not come up: {exc}") from None
    print_table(rich_table([row_of(r) for r in results], title=f"bug hunt {out.name}"))
    json_path, md_path = write_summary(out, results, recorded)
    print(f"summary: {json_path} and {md_path}")
    return 0 if results and all(r.ok for r in results) else 1


class ProjectRuns:
    """`chaos.hunt.hunt.RunOne` on compose `project`: each run's directory under `out`,
    its verdict table printed, the runs counted (`performed`)."""

    def __init__(self, project: str, out: Path, plain: bool) -> None:
        self.project = project
        self.out = out
        self.plain = plain
        self.performed = 0
        self.tidied = 0
        self._stuck = False

    def __call__(self, scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        """One run (`chaos.run.runner.run`); when an earlier run left admin work in flight
        on the project, it is tidied away first (`chaos.hunt.tidy`): at once after a run
        that allowed a stall, else once the run's set-up has waited for it in vain."""
        self.performed += 1
        request = RunRequest(scenario, seed, self.project, self.out, schedule, self.plain)
        if self._stuck and (found := present(self.project)):
            self._tidy(found)
        try:
            outcome = run(request)
        except LeftoverWork as exc:
            print(exc, flush=True)
            self._tidy(exc.leftovers)
            outcome = run(request)
        self._stuck = left_stuck(outcome.verdict)
        print(outcome.verdict.table(), flush=True)
        return outcome

    def _tidy(self, found: Leftovers) -> None:
        tidy(self.project, found)
        self.tidied += 1


def print_table(table: Table) -> None:
    """`table` on the terminal, or as wide as `TABLE_WIDTH` in a log (whole cells)."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=TABLE_WIDTH)
    console.print(table)


def _hunt_one(
    plan: BugPlan, builds: ComposeBuilds, run_one: Any, settings: HuntSettings
) -> BugResult:
    """One bug's hunt; a build that cannot be brought up is that bug's result, not the
    end of the hunt."""
    try:
        return hunt(plan, builds, run_one, settings)
    except RunSetupError as exc:
        print(f"{plan.bug}: cannot hunt: {exc}", flush=True)
        failed = Attempt(plan.scenario_names[0], 0, None, None, error=str(exc))
        return BugResult(plan, (failed,), ())
