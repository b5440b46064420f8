"""The one report of every benchmark: rows of measures, a table for people, `bench.json`
and JSON lines for tools.

A `Measure` is one row: a figure (seconds, or a rate per second), the floor it is compared
with (measured in the same run, and said in words) and their ratio. A `Report` is the rows
with notes and the benchmark's detailed figures. `render_table` prints it; `bench_json`
and `result_lines` turn it into plain values; `write_results` writes the lines to
`<results>/<UTC timestamp>.jsonl` and copies them to `<results>/latest.jsonl` (format in
`bench/results/README.md`). Pure formatting plus file writes; main thread.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from eventlog.jsonlines import JsonLinesWriter

LATEST = "latest.jsonl"
_LABEL_WIDTH = 50


class Figure(Enum):
    """What a measure's figure is: a duration, or a rate (the JSON key names it)."""

    SECONDS = "seconds"
    PER_SECOND = "per_second"


@dataclass(frozen=True, slots=True)
class Measure:
    """One row: `figure` against `floor` (the same kind of figure, measured in the same
    run and described by `floor_phrase`). `unit`/`floor_unit` name what a rate counts;
    `extra` holds further plain values for the JSON line."""

    measure: str
    label: str
    partitions: int
    figure: float
    floor: float
    floor_phrase: str
    kind: Figure = Figure.SECONDS
    unit: str = ""
    floor_unit: str = ""
    note: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        """figure / floor; None when either is not a positive, finite number."""
        return ratio(self.figure, self.floor)

    def as_dict(self) -> dict[str, Any]:
        """The row as plain values: `seconds` + `floor_seconds`, or `per_second` +
        `floor_per_second`, the ratio, the floor in words and the extras."""
        key = self.kind.value
        out: dict[str, Any] = {
            "measure": self.measure,
            "partitions": self.partitions,
            key: _rounded(self.figure),
            f"floor_{key}": _rounded(self.floor),
            "ratio": None if self.ratio is None else round(self.ratio, 3),
            "floor": self.floor_phrase,
        }
        if self.kind is Figure.PER_SECOND:
            out["unit"] = self.unit
            out["floor_unit"] = self.floor_unit
        return {**out, **self.extra}


@dataclass(frozen=True, slots=True)
class Report:
    """What one benchmark run found: its rows, notes printed under them, and the detailed
    figures that go into `bench.json` only."""

    benchmark: str
    title: str
    measures: tuple[Measure, ...]
    notes: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)


def median_of(rows: Sequence[Measure]) -> Measure:
    """One row for repeated runs of one measure: the run whose figure is the median (the
    lower middle one of an even count), its note prefixed with how many runs there were
    and the range of their figures, and every run's figure in `extra["runs"]`, in the
    order they ran. A single run is returned as it is. Pure."""
    if not rows:
        raise ValueError("no run to take the median of")
    if len(rows) == 1:
        return rows[0]
    figures = [r.figure for r in rows]
    ordered = sorted(rows, key=lambda r: r.figure if math.isfinite(r.figure) else math.inf)
    middle = ordered[(len(rows) - 1) // 2]
    low, high = (format_figure(f, middle.kind, middle.unit) for f in (min(figures), max(figures)))
    spread = f"median of {len(rows)} runs ({low} to {high})"
    return replace(
        middle,
        note=f"{spread}; {middle.note}" if middle.note else spread,
        extra={**middle.extra, "runs": [_rounded(f) for f in figures]},
    )


def ratio(value: float, floor: float) -> float | None:
    """value / floor, or None when that says nothing (a zero, negative or NaN operand)."""
    if not (math.isfinite(value) and math.isfinite(floor)) or value < 0 or floor <= 0:
        return None
    return value / floor


def _rounded(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def format_figure(value: float, kind: Figure, unit: str = "") -> str:
    """`2.95 s`, `30.9 ms`, `0.25 ms`, or `1,234.5 batches/s` (`12.0/s` without a unit)."""
    if not math.isfinite(value):
        return "-"
    if kind is Figure.SECONDS:
        if value < 0.01:
            return f"{value * 1000:.2f} ms"
        return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value:.2f} s"
    digits = 1 if value < 10_000 else 0
    return f"{value:,.{digits}f} {unit}/s" if unit else f"{value:,.{digits}f}/s"


def _row(label: str, figure: str, floor: str, x: str, note: str = "") -> str:
    return f"{label:<{_LABEL_WIDTH}}{figure:>18}{floor:>18}{x:>8}   {note}".rstrip()


def render_table(report: Report) -> str:
    """The human summary: a title, one row per measure (figure, floor, ratio, note), what
    each floor is, then the notes."""
    lines = [report.title, _row("", "figure", "floor", "ratio")]
    floors: dict[str, str] = {}
    for m in report.measures:
        floor = format_figure(m.floor, m.kind, m.floor_unit)
        x = "-" if m.ratio is None else f"{m.ratio:.2f}x"
        lines.append(_row(m.label, format_figure(m.figure, m.kind, m.unit), floor, x, m.note))
        floors.setdefault(f"{floor} = {m.floor_phrase}", m.label)
    lines.append("floors, measured in this run:")
    lines.extend(f"  {text}" for text in floors)
    if report.notes:
        lines.append("")
        lines.extend(report.notes)
    return "\n".join(lines)


def bench_json(
    report: Report, settings: Mapping[str, Any], environment: Mapping[str, Any]
) -> dict[str, Any]:
    """Everything the run found, for `bench.json`."""
    return {
        "benchmark": report.benchmark,
        "settings": dict(settings),
        "environment": dict(environment),
        "measures": [m.as_dict() for m in report.measures],
        **report.details,
    }


def write_json(document: Mapping[str, Any], path: Path) -> None:
    """Write `document` to `path`, indented."""
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def result_lines(
    report: Report, machine: Mapping[str, Any], run: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One JSON line per measure: the row, the benchmark, `machine` (no host name) and
    what identifies the run (`run`: time, revision...)."""
    return [
        {**m.as_dict(), "benchmark": report.benchmark, "machine": dict(machine), **run}
        for m in report.measures
    ]


def read_results(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a results file (none if it does not exist)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_results(
    results_dir: Path, lines: Sequence[Mapping[str, Any]], stamp: str, run_id: str | None = None
) -> Path:
    """Write `lines` to `results_dir/<stamp>.jsonl` (a new file: `-2`, `-3`... if taken)
    and replace `results_dir/latest.jsonl` with a copy; returns the dated path. When
    `latest.jsonl` holds lines of the same `run_id` (several benchmarks of one
    `make bench`), the new lines are added to it instead."""
    results_dir.mkdir(parents=True, exist_ok=True)
    dated = results_dir / f"{stamp}.jsonl"
    n = 1
    while dated.exists():
        n += 1
        dated = results_dir / f"{stamp}-{n}.jsonl"
    writer = JsonLinesWriter(dated)
    try:
        for line in lines:
            writer.append(json.dumps(line, separators=(",", ":"), sort_keys=False))
    finally:
        writer.close()
    latest = results_dir / LATEST
    earlier = read_results(latest)
    same_run = run_id is not None and earlier and all(e.get("run_id") == run_id for e in earlier)
    partial = results_dir / f".{LATEST}.partial"
    if same_run:
        shutil.copyfile(latest, partial)
        with open(partial, "ab") as out, open(dated, "rb") as new_lines:
            shutil.copyfileobj(new_lines, out)
    else:
        shutil.copyfile(dated, partial)
    os.replace(partial, latest)
    return dated
