"""The report's front page, `index.html`: when and over what it was made; the scenario by
seed grid of verdicts (colour and symbol, failing scenarios first, each cell a link to its
run's page whose hover text names the run's earliest witness and its time); the
invariants and anomaly classes that failed, with counts and links to each failing run's
witnesses and verdict's JSON; the recovery figures by scenario and fault kind (a small
distribution plot where there are several values, the number where one); the runs with
bug switches, the blind bug hunts (`pipeline.hunt_summary`) and the comparisons of two
builds, when there are any. Pure apart from `write_index`; the driver's thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from pipeline.human import iso
from pipeline.hunt_summary import Hunt
from pipeline.pages import render
from pipeline.run_page import RunPage, witness_id
from pipeline.runs import RunConfig
from rundir.checker.queue import QUEUE_CLASSES

__all__ = ["Cell", "distribution_svg", "failing", "grid", "recovery_cells", "write_index"]

#: A verdict's symbol and class: passed, failed, not judged (read or judged in error).
SYMBOLS = {True: ("\u2713", "pass"), False: ("\u2717", "fail"), None: ("?", "unknown")}


@dataclass(frozen=True, slots=True)
class Cell:
    """One run in the grid: its link, symbol, class and hover text."""

    href: str
    symbol: str
    css: str
    title: str


def _ok(value: Any) -> bool | None:
    return None if value is None or pd.isna(value) else bool(value)


def grid(
    runs: Sequence[RunConfig], verdicts: pd.DataFrame, pages: Mapping[str, RunPage] | None = None
) -> dict[str, Any]:
    """The scenario by seed grid: `seeds` (the columns) and `rows`, each a scenario with
    one list of cells per seed; scenarios with the most failing runs first. A failing
    run's hover text names its earliest witness and when (from its written page in
    `pages`)."""
    by_id = verdicts.set_index("run_id")
    seeds = sorted({r.seed for r in runs}, key=lambda s: (s is None, s or 0))
    cells: dict[str, dict[int | None, list[Cell]]] = {}
    failed: dict[str, int] = {}
    for run in runs:
        row = by_id.loc[run.run_id]
        ok = _ok(row["ok"])
        symbol, css = SYMBOLS[ok]
        said = "ok" if ok else "error" if ok is None else "violated " + ", ".join(row["violated"])
        if run.bug_switches:  # a buggy build's run beside the fixed one of the same seed
            css, said = f"{css} switched", f"bug switches {run.bug_switches}, {said}"
        page = (pages or {}).get(run.run_id)
        if ok is False and page is not None and page.first_witness:
            said = f"{said}; {page.first_witness}"
        cells.setdefault(run.scenario, {}).setdefault(run.seed, []).append(
            Cell(f"runs/{run.run_id}/index.html", symbol, css, f"{run.run_id}: {said}")
        )
        failed[run.scenario] = failed.get(run.scenario, 0) + (ok is not True)
    order = sorted(cells, key=lambda s: (-failed[s], s))
    return {
        "seeds": seeds,
        "rows": [
            {
                "scenario": s,
                "failed": failed[s],
                "cells": [cells[s].get(seed, []) for seed in seeds],
            }
            for s in order
        ],
    }


def failing(
    runs: Sequence[RunConfig], verdicts: pd.DataFrame, pages: Mapping[str, RunPage] | None = None
) -> list[dict[str, Any]]:
    """Each invariant or anomaly class that failed a run: how many runs, and links to
    their first witness of it and to their verdict's JSON (from their written page in `pages`;
    None when not written); most runs first."""
    found: dict[str, list[str]] = {}
    for row in verdicts.itertuples(index=False):
        for name in row.violated if isinstance(row.violated, list | tuple) else list(row.violated):
            found.setdefault(str(name), []).append(str(row.run_id))
    total = len(runs)
    return [
        {
            "name": name,
            "anomaly": name in QUEUE_CLASSES,
            "runs": len(ids),
            "of": total,
            "links": [
                {
                    "run_id": r,
                    "href": f"runs/{r}/index.html#{witness_id(name, 0)}",
                    "json": _verdict_href(pages, r),
                }
                for r in ids
            ],
        }
        for name, ids in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def _verdict_href(pages: Mapping[str, RunPage] | None, run_id: str) -> str | None:
    page = (pages or {}).get(run_id)
    return None if page is None else page.verdict_href


def distribution_svg(
    values: Sequence[float],
    scale: tuple[float, float] | None = None,
    width: int = 160,
    height: int = 22,
) -> Markup:
    """A small strip plot of `values` (ms) with its quartile box and median, on `scale`
    (low, high; the values' own range when not given): an inline SVG with a title that
    gives the numbers."""
    low, high = min(values), max(values)
    left, right = scale or (low, high)
    span = (right - left) or 1.0

    def x(v: float) -> float:
        return round(4 + (v - left) / span * (width - 8), 1)

    q1, q2, q3 = (float(pd.Series(values).quantile(q)) for q in (0.25, 0.5, 0.75))
    dots = "".join(
        f'<circle cx="{x(v)}" cy="{height / 2}" r="2" fill="#1f77b4" fill-opacity="0.6"/>'
        for v in values
    )
    title = f"n {len(values)}, min {low:.0f}, median {q2:.0f}, max {high:.0f} ms"
    return Markup(
        f'<svg class="dist" width="{width}" height="{height}" role="img">'
        f"<title>{title}</title>"
        f'<rect x="{x(q1)}" y="3" width="{max(1.0, x(q3) - x(q1))}" height="{height - 6}" '
        f'fill="#ddd" stroke="#888"/>'
        f'<line x1="{x(q2)}" x2="{x(q2)}" y1="2" y2="{height - 2}" stroke="#000"/>{dots}</svg>'
    )


def _switched_apart(measured: pd.DataFrame, runs: Sequence[RunConfig]) -> pd.DataFrame:
    """`measured` with the scenario of a run with bug switches on named with them
    (`deposed-controller + kafka-1188`), so that a buggy build's recovery is not pooled
    with the fixed build's."""
    switched = {r.run_id: f"{r.scenario} + {r.bug_switches}" for r in runs if r.bug_switches}
    if not switched or "run_id" not in measured:
        return measured
    named = measured["run_id"].map(switched)
    return measured.assign(scenario=named.fillna(measured["scenario"]))


def recovery_cells(measured: pd.DataFrame, runs: Sequence[RunConfig] = ()) -> list[dict[str, Any]]:
    """One row per recovery measure, scenario and fault kind: the value where one, a
    distribution where several (with its median and range in words), on one scale per
    measure so that the scenarios' plots compare. The `runs` with bug switches on count
    apart, under their scenario named with the switches."""
    rows = []
    kept = _switched_apart(measured, runs).dropna(subset=["value_ms"])
    scales = {m: (float(g.min()), float(g.max())) for m, g in kept.groupby("measure")["value_ms"]}
    for (measure, scenario, kind), group in kept.groupby(["measure", "scenario", "kind"]):
        values = [float(v) for v in group["value_ms"]]
        one = len(values) == 1
        rows.append(
            {
                "measure": measure,
                "scenario": scenario,
                "kind": kind,
                "n": len(values),
                "value": f"{values[0]:.0f} ms"
                if one
                else f"median {pd.Series(values).median():.0f} ms "
                f"({min(values):.0f} to {max(values):.0f})",
                "plot": None if one else distribution_svg(values, scales[measure]),
            }
        )
    return rows


def _bug_hunt(runs: Sequence[RunConfig], verdicts: pd.DataFrame) -> list[dict[str, Any]]:
    by_id = verdicts.set_index("run_id")
    switches: dict[str, list[tuple[str, bool | None]]] = {}
    for run in runs:
        for switch in filter(None, run.bug_switches.split(",")):
            switches.setdefault(switch, []).append((run.run_id, _ok(by_id.loc[run.run_id, "ok"])))
    return [
        {
            "switch": s,
            "runs": len(found),
            "caught": sum(ok is False for _, ok in found),
            "links": [{"run_id": r, "href": f"runs/{r}/index.html"} for r, _ in found],
        }
        for s, found in sorted(switches.items())
    ]


def write_index(
    out: Path,
    runs: Sequence[RunConfig],
    tables: dict[str, pd.DataFrame],
    measured: pd.DataFrame,
    sources: Sequence[Path],
    comparisons: Sequence[dict[str, Any]],
    generated_ms: int,
    pages: Mapping[str, RunPage] | None = None,
    hunts: Sequence[Hunt] = (),
) -> Path:
    """Write `out/index.html`; its path. `pages`: the runs' written pages, by run id."""
    verdicts = tables["verdicts"]
    starts = [r.started_ms for r in runs]
    return render(
        "index.html.j2",
        out / "index.html",
        generated=iso(generated_ms),
        sources=[str(s) for s in sources],
        runs=len(runs),
        first=iso(min(starts)),
        last=iso(max(starts)),
        passed=sum(_ok(v) is True for v in verdicts["ok"]),
        failed=sum(_ok(v) is False for v in verdicts["ok"]),
        grid=grid(runs, verdicts, pages),
        failing=failing(runs, verdicts, pages),
        recovery=recovery_cells(measured, runs),
        bug_hunt=_bug_hunt(runs, verdicts),
        hunts=hunts,
        comparisons=comparisons,
    )
