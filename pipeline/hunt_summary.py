"""The blind bug hunts among a report's inputs (`python -m chaos hunt`'s
`hunt-<time>/summary.json`, docs/bugs.md), as the front page's table shows them: per
bug whether the generic generator caught it, by which invariant, after how many runs
and minutes, and how many steps its schedule shrank to; per hunt the fixed build's runs,
its false alarms and the runs per hour.

    hunts, others = find_hunts(candidates, out)   # each summary copied into out/hunts/

`summary.json` is read as data (its writer is in `chaos/`, which the report may not
import); a directory whose `summary.json` lacks the blind hunt's keys is not a hunt (a
planned hunt's `bugs-<time>/` or a comparison's is another document). Pure file
reading and copying on the caller's thread.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HUNT_KEYS", "SUMMARY", "Hunt", "HuntRow", "find_hunts", "read_hunt"]

SUMMARY = "summary.json"
#: The keys that make a `summary.json` a blind hunt's.
HUNT_KEYS = ("bugs", "fixed_runs", "fixed_false_alarms", "runs_per_hour")


@dataclass(frozen=True, slots=True)
class HuntRow:
    """One bug of a hunt as the table shows it: every value already in words."""

    bug: str
    caught: bool | None
    invariant: str
    runs_to_catch: str
    minutes_to_catch: str
    shrunk_steps: str


@dataclass(frozen=True, slots=True)
class Hunt:
    """One blind hunt: its directory's name, its bugs, the fixed build's runs and false
    alarms, the runs per hour, and its summary's copy relative to the report."""

    name: str
    rows: tuple[HuntRow, ...]
    fixed_runs: str
    fixed_false_alarms: str
    runs_per_hour: str
    summary_href: str

    @property
    def caught(self) -> int:
        """How many of its bugs were caught."""
        return sum(r.caught is True for r in self.rows)


def _count(value: Any) -> str:
    """A count (or the length of a list of runs) in words; `-` when there is none."""
    if isinstance(value, list | tuple):
        return str(len(value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _row(bug: Mapping[str, Any]) -> HuntRow:
    caught = bug.get("caught")
    invariant = bug.get("invariant")
    if isinstance(invariant, list | tuple):
        invariant = ", ".join(map(str, invariant))
    minutes = bug.get("minutes_to_catch")
    return HuntRow(
        bug=str(bug.get("bug", "?")),
        caught=caught if isinstance(caught, bool) else None,
        invariant=str(invariant) if invariant else "-",
        runs_to_catch=_count(bug.get("runs_to_catch")),
        minutes_to_catch="-"
        if isinstance(minutes, bool) or not isinstance(minutes, int | float)
        else f"{minutes:.1f}",
        shrunk_steps=_count(bug.get("shrunk_steps")),
    )


def read_hunt(directory: Path) -> dict[str, Any] | None:
    """The blind hunt's summary in `directory`, or None when it holds none (no readable
    `summary.json`, or one without `HUNT_KEYS`)."""
    try:
        summary = json.loads((directory / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or any(key not in summary for key in HUNT_KEYS):
        return None
    if not isinstance(summary["bugs"], list):
        return None
    found: dict[str, Any] = summary
    return found


def find_hunts(candidates: Iterable[Path], out: Path) -> tuple[list[Hunt], list[Path]]:
    """The blind hunts among `candidates` (directories), each with its summary copied
    into `out/hunts/<name>/summary.json`, and the candidates that are not hunts."""
    hunts: list[Hunt] = []
    others: list[Path] = []
    for candidate in candidates:
        summary = read_hunt(candidate)
        if summary is None:
            others.append(candidate)
            continue
        copy = out / "hunts" / candidate.name / SUMMARY
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(candidate / SUMMARY, copy)
        hunts.append(
            Hunt(
                name=candidate.name,
                rows=tuple(_row(b) for b in summary["bugs"] if isinstance(b, dict)),
                fixed_runs=_count(summary["fixed_runs"]),
                fixed_false_alarms=_count(summary["fixed_false_alarms"]),
                runs_per_hour=_count(summary["runs_per_hour"]),
                summary_href=copy.relative_to(out).as_posix(),
            )
        )
    return hunts, others
