"""The blind hunt's reach, offline: how often the generic generator's fresh schedules
(`chaos.hunt.corpus.draw_schedule`) have the shape each bug switch needs
(`chaos.hunt.reach_shapes`), without a cluster (docs/bugs.md, "Blind hunt").

    python -m chaos.hunt.reach [--schedules N] [--seconds S]

draws the schedules of seeds 1..N (200) over S seconds (45, the blind hunt's run) and
prints, per switch, how many have its shape, the share, the expected number of fresh
schedules to a first one (one over the share) and the chance that ten fresh schedules
hold one. Mutations of the hunt are not counted: they move, drop, add and retarget steps
one at a time and reach a shape mostly from a schedule that is near it already.

Pure apart from the printing; the caller's thread.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from chaos.hunt.blind import DEFAULT_RUN_S
from chaos.hunt.corpus import draw_schedule
from chaos.hunt.reach_shapes import SHAPES, Shape

__all__ = ["Reach", "main", "reach", "render"]

#: How many fresh schedules the table is made of unless told.
DEFAULT_SCHEDULES = 200
#: The run length the blind hunt draws for.
DEFAULT_SECONDS = DEFAULT_RUN_S
#: The runs of the blind hunt per switch the last column is about.
HUNT_RUNS = 10


@dataclass(frozen=True, slots=True)
class Reach:
    """How many of `schedules` fresh schedules have `shape`."""

    shape: Shape
    matched: int
    schedules: int

    @property
    def share(self) -> float:
        """The share of schedules with the shape."""
        return self.matched / self.schedules

    @property
    def runs_to_first(self) -> float:
        """The expected fresh schedules to a first one with the shape (inf: never seen)."""
        return 1 / self.share if self.matched else float("inf")

    @property
    def within_hunt(self) -> float:
        """The chance that `HUNT_RUNS` fresh schedules hold one with the shape."""
        return 1 - (1 - self.share) ** HUNT_RUNS


def reach(schedules: int, seconds: float = DEFAULT_SECONDS) -> tuple[Reach, ...]:
    """Each shape's reach over the fresh schedules of seeds 1..`schedules`."""
    if schedules < 1:
        raise ValueError(f"the table needs at least one schedule, got {schedules}")
    drawn = [draw_schedule(seed, seconds) for seed in range(1, schedules + 1)]
    return tuple(
        Reach(shape, sum(1 for s in drawn if shape.match(s)), schedules) for shape in SHAPES
    )


def render(rows: Sequence[Reach]) -> str:
    """The table, one line per switch, as Markdown."""
    lines = [
        "| switch | schedules with its shape | share | runs to a first | "
        f"in {HUNT_RUNS} runs | shape |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        first = f"{r.runs_to_first:.1f}" if r.matched else "never"
        lines.append(
            f"| `{r.shape.bug}` | {r.matched}/{r.schedules} | {r.share:.0%} | {first} | "
            f"{r.within_hunt:.0%} | {r.shape.text} |"
        )
    rare = sum(1 for r in rows if r.share < 1 / HUNT_RUNS)
    lines.append("")
    lines.append(f"{rare} of {len(rows)} switches under one schedule in {HUNT_RUNS}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; exit code 0 (2 for bad arguments)."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos.hunt.reach",
        description="How often the generic generator's fresh schedules have the shape "
        "each bug switch needs.",
    )
    parser.add_argument("--schedules", type=int, default=DEFAULT_SCHEDULES, metavar="N")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, metavar="S")
    args = parser.parse_args(argv)
    if args.schedules < 1:
        parser.error("--schedules must be at least 1")
    sys.stdout.write(render(reach(args.schedules, args.seconds)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
