"""The blind hunt's table and `summary.json` (`python -m chaos hunt`): per switch whether
it was caught, by which invariant, after how many runs and minutes, the shrunk schedule's
steps, the coverage reached and how it grew run by run, and whether the fixed build
replayed every schedule clean; over the whole hunt the fixed-build replays, the false
alarms among them and the runs per hour. Pure apart from `write_summary`; caller's
thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from chaos.hunt.blind import BlindResult, BlindRun
from chaos.hunt.report import short_schedule, write_json

__all__ = ["HEADERS", "Pace", "rich_table", "summary_json", "write_summary"]

HEADERS = (
    "bug",
    "caught",
    "invariant",
    "runs to catch",
    "minutes to catch",
    "shrunk steps",
    "behaviours (growth)",
    "fixed build clean",
)


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast the hunt went: every run it performed (buggy, shrink replays, fixed
    replays) over the hours it took, set-up included, and how many times an earlier
    run's admin work was tidied off the project before a run (`chaos.hunt.tidy`)."""

    runs: int
    hours: float
    tidied: int = 0

    @property
    def runs_per_hour(self) -> float | None:
        """Runs per hour of the hunt (None before any time passed)."""
        return round(self.runs / self.hours, 1) if self.hours > 0 else None


def _invariant(result: BlindResult) -> str | None:
    found = result.catching
    return found.attempt.fired[0] if found is not None and found.attempt.fired else None


def _minutes(result: BlindResult) -> float | None:
    found = result.catching
    return None if found is None else round(found.minutes, 1)


def _fixed_cell(result: BlindResult) -> str:
    if not result.fixed:
        return "-"
    if result.fixed_clean:
        return f"yes ({len(result.fixed)} replays)"
    unjudged = sum(1 for a in result.fixed if a.ok is None)
    return f"no: {result.false_alarms} false alarm(s), {unjudged} not judged"


def cells(result: BlindResult) -> tuple[str, ...]:
    """One switch's row, in `HEADERS` order."""
    if result.error:
        return (result.bug, f"not hunted: {result.error}", "-", "-", "-", "-", "-", "-")
    runs = result.runs_to_catch
    growth = ",".join(str(n) for n in result.growth)
    shrunk = "-" if result.shrunk is None else str(len(result.shrunk.steps))
    return (
        result.bug,
        "yes" if result.caught else "no",
        ", ".join(result.catching.attempt.fired) if result.catching else "-",
        str(runs) if runs is not None else f"> {len(result.runs)}",
        "-" if _minutes(result) is None else f"{_minutes(result):g}",
        shrunk,
        f"{len(result.reached)} ({growth})",
        _fixed_cell(result),
    )


def rich_table(results: Sequence[BlindResult], title: str = "blind hunt") -> Table:
    """The results as a `rich` table: caught and clean rows green, the others red."""
    table = Table(title=title)
    for header in HEADERS:
        table.add_column(header, overflow="fold")
    for result in results:
        table.add_row(*cells(result), style="green" if result.ok else "red")
    return table


def _run_json(run: BlindRun) -> dict[str, Any]:
    return {
        **run.attempt.to_json(),
        "origin": run.origin,
        "schedule": short_schedule(run.schedule),
        "steps": len(run.schedule.steps),
        "new_behaviours": run.new,
        "minutes": round(run.minutes, 2),
    }


def _bug_json(result: BlindResult) -> dict[str, Any]:
    return {
        "bug": result.bug,
        "caught": result.caught,
        "invariant": _invariant(result),
        "fired": list(result.catching.attempt.fired) if result.catching else [],
        "runs_to_catch": result.runs_to_catch,
        "minutes_to_catch": _minutes(result),
        "shrunk_steps": None if result.shrunk is None else len(result.shrunk.steps),
        "shrunk_schedule": None if result.shrunk is None else short_schedule(result.shrunk),
        "shrink": result.shrink_note,
        "coverage": {
            "reached": len(result.reached),
            "growth": list(result.growth),
            "behaviours": sorted(result.reached),
        },
        "fixed_clean": result.fixed_clean,
        "false_alarms": result.false_alarms,
        "buggy_runs": [_run_json(r) for r in result.runs],
        "fixed_runs": [a.to_json() for a in result.fixed],
        "brokers_recreated": result.recreated,
        "error": result.error,
    }


def summary_json(
    results: Sequence[BlindResult], pace: Pace, settings: dict[str, Any]
) -> dict[str, Any]:
    """Everything the hunt found, per switch and over all, with its settings."""
    return {
        "ok": bool(results) and all(r.ok for r in results),
        "settings": settings,
        "bugs": [_bug_json(r) for r in results],
        "fixed_runs": sum(len(r.fixed) for r in results),
        "fixed_false_alarms": sum(r.false_alarms for r in results),
        "runs": pace.runs,
        "tidied": pace.tidied,
        "hours": round(pace.hours, 3),
        "runs_per_hour": pace.runs_per_hour,
    }


def write_summary(
    directory: Path, results: Sequence[BlindResult], pace: Pace, settings: dict[str, Any]
) -> Path:
    """`summary.json` in `directory`; its path."""
    return write_json(directory, summary_json(results, pace, settings))
