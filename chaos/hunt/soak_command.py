"""`python -m chaos soak`: the fixed build's false alarms under the generic generator
(`chaos.hunt.soak`; docs/bugs.md, "False alarms on the fixed build").

Like the hunts it brings up a compose project of its own (`--project`, `testbed-soak` by
default; never the repository's default project) with short ZooKeeper sessions, and
removes it at the end, also on errors and Ctrl-C. It runs `--runs` fresh schedules of
`--run-seconds` on brokers with no switch on, prints a table of the alarms by invariant
and writes `summary.json` into `<out>/soak-<time>/` beside the runs, rewritten after every
run (a long soak that is stopped keeps what it found):
`{"ok", "settings", "runs", "held", "false_alarms", "not_judged", "fired", "alarms",
"every_run", "brokers_recreated", "tidied", "hours", "runs_per_hour"}` (`tidied`: how
often an earlier run's admin work was cleared off the project, `chaos.hunt.tidy`).

Exit code 0 only when at least one run was judged and none raised an alarm; 1 otherwise;
2 on usage or set-up errors. Main thread.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from chaos.hunt.blind_command import add_run_seconds, run_seconds_of
from chaos.hunt.blind_report import Pace
from chaos.hunt.builds import ComposeBuilds
from chaos.hunt.command import (
    REPO_ROOT,
    ProjectRuns,
    add_hunt_arguments,
    guarded,
    parse_seeds,
    print_table,
)
from chaos.hunt.report import short_schedule, write_json
from chaos.hunt.soak import SoakResult, SoakRun, SoakSettings, soak
from chaos.run.setup import RunSetupError
from harness.compose import ComposeStartError, started_project

__all__ = ["DEFAULT_PROJECT", "DEFAULT_RUNS", "add_parser", "soak_fixed", "summary_json"]

DEFAULT_PROJECT = "testbed-soak"
DEFAULT_RUNS = 100


def add_parser(commands: Any) -> None:
    """The `soak` subparser."""
    parser = commands.add_parser(
        "soak",
        help="the fixed build under the generic generator: every failed verdict an alarm",
        description="Recreate the brokers of a compose project of the soak's own with no "
        "bug switch on and run fresh generic schedules, seeds no hunt draws, each judged "
        "by every invariant; a failed verdict is a false alarm of the testbed or a bug of "
        "the fixed build. Exit 0 only if no run raised an alarm.",
    )
    parser.add_argument(
        "--runs", type=int, default=DEFAULT_RUNS, help=f"runs (default {DEFAULT_RUNS})"
    )
    parser.add_argument("--seeds", default="", help="comma-separated seeds to run first")
    parser.add_argument("--soak-seed", type=int, default=1, help="the soak's seed (default 1)")
    add_run_seconds(parser)
    add_hunt_arguments(parser, DEFAULT_PROJECT, "where soak-<time>/ goes", shrink=False)


def soak_fixed(args: argparse.Namespace, default_project: str) -> int:
    """`soak` (see the module docstring); the exit code."""
    seeds = parse_seeds(args.seeds)
    settings = SoakSettings(args.runs, run_seconds_of(args), seeds, args.soak_seed)
    return guarded(args, default_project, lambda: _soak(args, settings))


def _run_json(run: SoakRun) -> dict[str, Any]:
    return {
        **run.attempt.to_json(),
        "schedule": short_schedule(run.schedule),
        "steps": len(run.schedule.steps),
        "minutes": round(run.minutes, 2),
    }


def summary_json(result: SoakResult, pace: Pace, settings: dict[str, Any]) -> dict[str, Any]:
    """Everything the soak found, with its settings."""
    return {
        "ok": result.ok,
        "settings": settings,
        "runs": len(result.runs),
        "held": result.held,
        "false_alarms": len(result.alarms),
        "not_judged": result.not_judged,
        "fired": result.fired,
        "alarms": [_run_json(r) for r in result.alarms],
        "every_run": [_run_json(r) for r in result.runs],
        "brokers_recreated": result.recreated,
        "tidied": pace.tidied,
        "hours": round(pace.hours, 3),
        "runs_per_hour": pace.runs_per_hour,
    }


def rich_table(result: SoakResult, title: str) -> Table:
    """Runs held, not judged, and the alarms by invariant with their seeds."""
    table = Table(title=title)
    for header in ("verdict", "runs", "seeds"):
        table.add_column(header, overflow="fold")
    table.add_row("held", str(result.held), "", style="green")
    table.add_row("not judged", str(result.not_judged), "")
    for invariant, count in result.fired.items():
        seeds = [str(r.attempt.seed) for r in result.alarms if invariant in r.attempt.fired]
        table.add_row(f"alarm: {invariant}", str(count), ", ".join(seeds), style="red")
    return table


def _soak(args: argparse.Namespace, settings: SoakSettings) -> int:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out / f"soak-{stamp}"
    recorded = {
        "runs": settings.runs,
        "run_s": settings.run_s,
        "seeds": list(settings.seeds),
        "soak_seed": settings.soak_seed,
        "project": args.project,
        "session_ms": args.session_ms,
    }
    print(f"soak: {settings.runs} run(s) on project {args.project}, runs in {out}", flush=True)
    started = time.monotonic()
    run_one = ProjectRuns(args.project, out, args.plain)

    def pace() -> Pace:
        hours = (time.monotonic() - started) / 3600
        return Pace(run_one.performed, hours, run_one.tidied)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        with started_project(
            REPO_ROOT, args.project, f"soak-{stamp}-cluster", args.session_ms, stable_ports=True
        ) as cluster:
            result = soak(
                ComposeBuilds(cluster),
                run_one,
                settings,
                say=say,
                on_run=lambda so_far: write_summary(out, so_far, pace(), recorded),
            )
    except ComposeStartError as exc:
        raise RunSetupError(f"the soak's compose project did not come up: {exc}") from None
    print_table(rich_table(result, title=f"soak {out.name}"))
    final = pace()
    path = write_summary(out, result, final, recorded)
    print(f"{final.runs} runs in {final.hours * 60:.1f} min: {final.runs_per_hour} runs per hour")
    print(f"summary: {path}")
    return 0 if result.ok else 1


def write_summary(
    directory: Path, result: SoakResult, pace: Pace, settings: dict[str, Any]
) -> Path:
    """`summary.json` in `directory`; its path."""
    return write_json(directory, summary_json(result, pace, settings))
