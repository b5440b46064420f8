"""`python -m chaos hunt`: the blind hunt over the historical bug switches (docs/bugs.md,
"Blind hunt").

Like `python -m chaos bugs` it brings up a compose project of its own (`--project`,
`testbed-hunt` by default; never the repository's default project) with short ZooKeeper
sessions, and removes it at the end, also on errors and Ctrl-C. For each selected switch
(`bugs.CATALOG`, all by default) it hunts with the generic generator only, no plan
(`chaos.hunt.blind`): up to `--runs` runs of `--run-seconds` on the buggy build, each
schedule a fresh seed's or a mutation of an earlier one chosen by coverage, from
`--hunt-seed`; shrink the failing schedule; replay every schedule on the fixed build. It
prints one table and writes `summary.json` into `<out>/hunt-<time>/` beside the runs
(rewritten after every switch, so a long hunt that is stopped keeps what it found).

Exit code 0 only when every selected switch was caught and the fixed build raised no
alarm; 1 otherwise; 2 on usage or set-up errors. Main thread.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bugs import CATALOG
from chaos.hunt.blind import DEFAULT_RUN_S, BlindResult, BlindSettings, blind_hunt, cannot_hunt
from chaos.hunt.blind_report import Pace, rich_table, write_summary
from chaos.hunt.builds import ComposeBuilds
from chaos.hunt.command import (
    REPO_ROOT,
    HuntUsageError,
    ProjectRuns,
    add_hunt_arguments,
    guarded,
    parse_seeds,
    print_table,
)
from chaos.hunt.corpus import HEAL_S
from chaos.run.setup import RunSetupError
from harness.compose import ComposeStartError, started_project
from rundir.coverage import read_coverage

__all__ = [
    "DEFAULT_PROJECT",
    "add_parser",
    "add_run_seconds",
    "hunt_blind",
    "run_seconds_of",
    "switches_named",
]

DEFAULT_PROJECT = "testbed-hunt"
DEFAULT_RUNS = 10
#: The shortest run: the heal phase and at least one fault before it.
MIN_RUN_S = HEAL_S + 15.0


def add_parser(commands: Any) -> None:
    """The `hunt` subparser."""
    parser = commands.add_parser(
        "hunt",
        help="hunt the bug switches blind: the generic generator with coverage feedback",
        description="For each bug switch: recreate the brokers of a compose project of the "
        "hunt's own with the switch on, run generic schedules (fresh seeds, or mutations "
        "of earlier schedules that reached rare behaviours) until a verdict fails, shrink "
        "that schedule, then replay every schedule without the switch. Exit 0 only if "
        "every switch was caught and the fixed build raised no alarm.",
    )
    parser.add_argument("--bugs", default="", help="comma-separated switches (default: all)")
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"most buggy runs per switch ({DEFAULT_RUNS})",
    )
    parser.add_argument(
        "--seeds", default="", help="comma-separated seeds fresh schedules take first"
    )
    parser.add_argument("--hunt-seed", type=int, default=1, help="the hunt's seed (default 1)")
    add_run_seconds(parser)
    add_hunt_arguments(parser, DEFAULT_PROJECT, "where hunt-<time>/ goes")


def add_run_seconds(parser: argparse.ArgumentParser) -> None:
    """`--run-seconds`: each generic run's length (the hunt's and the soak's)."""
    parser.add_argument(
        "--run-seconds",
        type=float,
        default=DEFAULT_RUN_S,
        help=f"each run's length, heal phase included (default {DEFAULT_RUN_S:g})",
    )


def run_seconds_of(args: argparse.Namespace) -> float:
    """`--run-seconds`, checked: `HuntUsageError` when it leaves no room for a fault
    before the heal phase."""
    if args.run_seconds < MIN_RUN_S:
        raise HuntUsageError(
            f"--run-seconds must be at least {MIN_RUN_S:g}, got {args.run_seconds}"
        )
    return float(args.run_seconds)


def switches_named(text: str) -> tuple[str, ...]:
    """The switches of `--bugs` (every switch of the catalog when blank), in the order
    given; `HuntUsageError` naming those the catalog does not have."""
    known = [bug.name for bug in CATALOG]
    chosen = list(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    unknown = [n for n in chosen if n not in known]
    if unknown:
        raise HuntUsageError(f"no bug switch {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(chosen) or tuple(known)


def hunt_blind(args: argparse.Namespace, default_project: str) -> int:
    """`hunt`: the blind hunt (see the module docstring); the exit code."""
    switches = switches_named(args.bugs)
    settings = BlindSettings(
        args.runs, run_seconds_of(args), args.max_shrink, parse_seeds(args.seeds), args.hunt_seed
    )
    return guarded(args, default_project, lambda: _hunt_all(args, switches, settings))


def _hunt_all(args: argparse.Namespace, switches: tuple[str, ...], settings: BlindSettings) -> int:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out / f"hunt-{stamp}"
    recorded = {
        "bugs": list(switches),
        "runs": settings.runs,
        "run_s": settings.run_s,
        "seeds": list(settings.seeds),
        "hunt_seed": settings.hunt_seed,
        "max_shrink": settings.max_shrink,
        "project": args.project,
        "session_ms": args.session_ms,
    }
    print(f"blind hunt: {len(switches)} switch(es) on project {args.project}, runs in {out}")
    results: list[BlindResult] = []
    started = time.monotonic()
    run_one = ProjectRuns(args.project, out, args.plain)

    def pace() -> Pace:
        hours = (time.monotonic() - started) / 3600
        return Pace(run_one.performed, hours, run_one.tidied)

    try:
        with started_project(
            REPO_ROOT, args.project, f"hunt-{stamp}-cluster", args.session_ms, stable_ports=True
        ) as cluster:
            builds = ComposeBuilds(cluster)
            for number, bug in enumerate(switches, 1):
                print(f"==> [{number}/{len(switches)}] {bug}: blind", flush=True)
                try:
                    found = blind_hunt(bug, builds, run_one, settings, read_coverage)
                except RunSetupError as exc:
                    print(f"{bug}: cannot hunt: {exc}", flush=True)
                    found = cannot_hunt(bug, exc)
                results.append(found)
                write_summary(out, results, pace(), recorded)
    except ComposeStartError as exc:
        raise RunSetupError(f"the hunt's compose project did not come up: {exc}") from None
    print_table(rich_table(results, title=f"blind hunt {out.name}"))
    final = pace()
    path = write_summary(out, results, final, recorded)
    print(f"{final.runs} runs in {final.hours * 60:.1f} min: {final.runs_per_hour} runs per hour")
    print(f"summary: {path}")
    return 0 if results and all(r.ok for r in results) else 1
