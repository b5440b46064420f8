"""Reach after the fact: which runs of a blind hunt had the shape their switch needs
(`chaos.hunt.reach_shapes`), read from the run directories (docs/bugs.md, "Reach").

    python -m chaos.hunt.reach_runs HUNT_DIR

reads every run directory under HUNT_DIR (a `hunt-<time>/` of `python -m chaos hunt`):
the switches it ran with (`config.json`'s `bug_switches`), its schedule (`schedule.json`)
and its verdict (`verdict.json`), and prints, per switch, its runs, those whose schedule
has the switch's shape, and what each of those came to. A switch not caught whose runs
never had its shape was out of the schedules' reach, the generator's to widen; one whose
runs had it and held was reached and missed, by timing (a shape is necessary, not
sufficient) or by the invariants. The fixed build's replays (no switch) are not counted.
A run directory that does not read is named and skipped.

The analysis alone imports the shapes (an import contract): the hunt stays blind.
Reads files; the caller's thread.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from chaos.generator.schedule import Schedule
from chaos.hunt.reach_shapes import shape_for

__all__ = ["HuntRun", "main", "read_runs", "render"]


@dataclass(frozen=True, slots=True)
class HuntRun:
    """One buggy run of a hunt: its directory's name, its switch, whether its schedule
    had the switch's shape, and its verdict (`held`, `failed`, `no verdict`)."""

    name: str
    switch: str
    shaped: bool
    verdict: str


def _verdict(run: Path) -> str:
    try:
        ok = json.loads((run / "verdict.json").read_text()).get("ok")
    except (OSError, ValueError, AttributeError):
        return "no verdict"
    return "held" if ok is True else "failed" if ok is False else "no verdict"


def read_runs(hunt: Path, skipped: list[str]) -> Iterator[HuntRun]:
    """The buggy runs under `hunt`, in name order (their start); the names of those that
    do not read, with why, go to `skipped`."""
    for run in sorted(p for p in hunt.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            switches = json.loads((run / "config.json").read_text())["bug_switches"]
            schedule = Schedule.from_json(json.loads((run / "schedule.json").read_text()))
            shapes = [(s, shape_for(s)) for s in switches]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            skipped.append(f"{run.name}: {type(exc).__name__}: {exc}")
            continue
        for switch, shape in shapes:
            yield HuntRun(run.name, switch, shape.match(schedule), _verdict(run))


def render(runs: Sequence[HuntRun]) -> str:
    """A Markdown table: per switch, its runs, those with its shape and their verdicts."""
    lines = [
        "| switch | run directories | with its shape | their verdicts |",
        "| --- | --- | --- | --- |",
    ]
    for switch in dict.fromkeys(r.switch for r in runs):
        mine = [r for r in runs if r.switch == switch]
        shaped = [r for r in mine if r.shaped]
        said = ", ".join(f"{r.name} {r.verdict}" for r in shaped) or "-"
        lines.append(f"| `{switch}` | {len(mine)} | {len(shaped)} | {said} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table for a hunt directory; 2 when it is not a directory or holds no
    buggy run."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos.hunt.reach_runs",
        description="which runs of a blind hunt had the shape their switch needs",
    )
    parser.add_argument("hunt", type=Path, metavar="HUNT_DIR", help="a hunt-<time>/ directory")
    args = parser.parse_args(argv)
    if not args.hunt.is_dir():
        print(f"{args.hunt}: not a directory", file=sys.stderr)
        return 2
    skipped: list[str] = []
    runs = list(read_runs(args.hunt, skipped))
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    if not runs:
        print(f"{args.hunt}: no run with a bug switch", file=sys.stderr)
        return 2
    print(render(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
