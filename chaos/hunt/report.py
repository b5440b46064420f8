"""The bug hunt's table (`python -m chaos bugs`): one row per bug with the scenario that
caught it, the run and invariants that fired, the runs it took, the shrunk schedule in
short form and whether the fixed build ran clean; as a `rich` table for the terminal, as
markdown (docs/bugs.md, `summary.md`) and as JSON (`summary.json`). Pure apart from
`write_summary`; caller's thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from chaos.generator.schedule import Schedule, Step
from chaos.hunt.hunt import BugResult

__all__ = [
    "HEADERS",
    "Row",
    "markdown",
    "rich_table",
    "row_of",
    "summary_json",
    "write_json",
    "write_summary",
]

HEADERS = ("bug", "scenario", "caught", "runs needed", "shrunk schedule", "fixed build clean")


@dataclass(frozen=True, slots=True)
class Row:
    """One bug's line of the table, every cell as text."""

    bug: str
    scenario: str
    caught: str
    runs: str
    shrunk: str
    fixed: str
    ok: bool

    def cells(self) -> tuple[str, ...]:
        """The cells in `HEADERS` order."""
        return (self.bug, self.scenario, self.caught, self.runs, self.shrunk, self.fixed)


def short_schedule(schedule: Schedule | None) -> str:
    """`kill busiest-leader @15.2s+20.1s; reassign @20.0s`: faults and actions by time; a
    triggered step as `zk-reset controller @49.3s on partition_state_change ...`."""
    if schedule is None:
        return "-"
    items = [(s.at_s, _short_step(s)) for s in schedule.steps]
    items += [(a.at_s, f"{a.kind} @{a.at_s:g}s") for a in schedule.actions]
    return "; ".join(text for _, text in sorted(items)) or "no faults"


def _short_step(step: Step) -> str:
    text = f"{step.fault.describe()} @{step.at_s:g}s"
    text += f"+{step.duration_s:g}s" if step.duration_s else ""
    return text + (f" {step.trigger.describe()}" if step.trigger is not None else "")


def row_of(result: BugResult) -> Row:
    """The table row of one bug's hunt."""
    catching = result.catching
    ran = [a for a in result.buggy if a.ok is not None]
    if catching is not None:
        number = result.buggy.index(catching) + 1
        fired = ", ".join(catching.fired)
        mark = "" if result.expected else " (not the expected invariant)"
        caught = f"yes, run {number}: {fired}{mark}"
        scenario = f"{catching.scenario} (seed {catching.seed})"
        runs = str(number)
    else:
        errors = [a.error for a in result.buggy if a.ok is None]
        caught = "no" + (f" ({len(errors)} not run: {errors[0]})" if errors else "")
        scenario = ", ".join(result.plan.scenario_names)
        runs = f"> {len(ran)}" if ran else "-"
    if not result.fixed:
        fixed = "-"
    elif result.fixed_clean:
        fixed = "yes"
    else:
        bad = [a for a in result.fixed if a.ok is not True]
        fixed = "no: " + "; ".join(
            f"{a.scenario} seed {a.seed} " + (", ".join(a.fired) or a.error) for a in bad
        )
    shrunk = short_schedule(result.shrunk) if catching is not None else "-"
    if catching is not None and result.shrink_note:
        shrunk = f"{shrunk} ({result.shrink_note})"
    return Row(result.bug, scenario, caught, runs, shrunk, fixed, result.ok)


def rich_table(rows: Sequence[Row], title: str = "bug hunt") -> Table:
    """The rows as a `rich` table: caught and clean rows green, the others red."""
    table = Table(title=title)
    for header in HEADERS:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row.cells(), style="green" if row.ok else "red")
    return table


def markdown(rows: Sequence[Row]) -> str:
    """The rows as a markdown table (`|` in a cell escaped)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + " --- |" * len(HEADERS)]
    for row in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row.cells()) + " |")
    return "\n".join(lines)


def summary_json(results: Sequence[BugResult], settings: dict[str, Any]) -> dict[str, Any]:
    """Everything the hunt found, per bug, with the settings it ran with."""
    return {
        "ok": all(r.ok for r in results),
        "settings": settings,
        "bugs": [
            {
                "bug": r.bug,
                "scenarios": list(r.plan.scenario_names),
                "expected_invariants": sorted(r.plan.catches),
                "caught": r.caught,
                "expected": r.expected,
                "fixed_clean": r.fixed_clean,
                "buggy_runs": [a.to_json() for a in r.buggy],
                "fixed_runs": [a.to_json() for a in r.fixed],
                "shrunk_schedule": None if r.shrunk is None else short_schedule(r.shrunk),
                "shrink": r.shrink_note,
                "regressions": [str(g) for g in r.comparison().regressions],
            }
            for r in results
        ],
    }


def write_json(directory: Path, document: dict[str, Any]) -> Path:
    """`document` as `summary.json` in `directory` (made if missing); its path. Every
    hunt's and the soak's summary."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "summary.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def write_summary(
    directory: Path, results: Sequence[BugResult], settings: dict[str, Any]
) -> tuple[Path, Path]:
    """`summary.json` and `summary.md` in `directory`; their paths."""
    as_json = write_json(directory, summary_json(results, settings))
    as_md = directory / "summary.md"
    as_md.write_text(f"# Bug hunt {directory.name}\n\n{markdown([row_of(r) for r in results])}\n")
    return as_json, as_md
