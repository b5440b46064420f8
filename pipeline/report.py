"""`build_report`: the whole pipeline over a set of run directories. Discover and
version-check the runs, judge every run with the chaos engine's invariants and compute its
figures in one pass over every run (`pipeline.run_pass`, the one Spark job: its tasks
read the runs' files), build the tables across runs from those in pandas, write the tables as
Parquet, draw the pictures and render one HTML page (`templates/report.html.j2`), which
links the comparisons of two builds found beside the runs (`pipeline.comparison`); the
front page shows the blind bug hunts found among them too (`pipeline.hunt_summary`: a
directory of runs given, or one beside the runs). Runs on the driver's main thread.
Progress lines go to `say`.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession

from pipeline import plots, tables
from pipeline.comparison import ComparisonLink, find_comparisons
from pipeline.human import WALL_CLOCK_MS, iso
from pipeline.hunt_summary import find_hunts
from pipeline.index_page import write_index
from pipeline.pages import STATIC, render
from pipeline.run_page import RunPage, write_run_page
from pipeline.run_pass import PER_RUN_TABLES, PLOTTING_TABLES, collect_per_run
from pipeline.runs import PipelineInputError, RunConfig, discover

__all__ = [
    "WINDOW_MS",
    "Report",
    "Tables",
    "build_report",
    "compute_tables",
    "table_cell",
]

#: The time window of the latency quantiles and the operation rates.
WINDOW_MS = 1_000
#: The row order of the per-run tables.
SORT_KEYS = {
    "detection": ["run_id", "start_ms", "fault"],
    "failovers": ["run_id", "elected_ms", "node"],
    "elections": ["run_id", "elected_ms", "topic", "partition", "leader_epoch"],
    "unavailability": ["run_id", "topic", "partition", "start_ms"],
    "healed": ["run_id", "topic", "partition"],
    "latency": ["run_id", "window_start_ms"],
    "verdicts": ["run_id"],
}
#: Where missing keys sort, when not last (the tables Spark used to sort put them first).
SORT_NULLS = {"latency": "first", "verdicts": "first"}

#: name -> (title, note) of every table the report holds, in page order.
TABLE_TITLES: dict[str, tuple[str, str]] = {
    "runs": ("Runs", "per run: faults, controller and leader elections, the slowest recovery"),
    "verdicts": (
        "Verdicts",
        "each run judged by the chaos engine's invariants, and whether "
        "that equals the runner's verdict.json",
    ),
    "violations": ("Violations by scenario and fault kind", "violations per 100 runs"),
    "recovery": ("Recovery by scenario and fault kind", "milliseconds"),
    "detection": ("Failure detection", "fault start to the controller's broker_change"),
    "failovers": (
        "Controller failovers",
        "old controller gone to controller_failover_done (failover_ms), and to every live "
        "broker having applied an UpdateMetadata of the new epoch (metadata_failover_ms)",
    ),
    "elections": ("Leader elections", "after the run started; time since the fault's start"),
    "unavailability": ("Partition unavailability", "as the producer saw it"),
    "healed": ("Partitions healed", "after the final heal, from the cluster snapshots"),
    "latency": ("Produce latency per window", f"acknowledged sends, {WINDOW_MS} ms windows"),
}
#: The tables that are series over time: each run's page plots them; here they are links.
SERIES_TABLES = frozenset({"latency"})


@dataclass
class Report:
    """What `build_report` made: the HTML page, the tables (pandas) and the pictures."""

    html: Path
    tables: dict[str, pd.DataFrame]
    pictures: list[Path] = field(default_factory=list)
    #: The front page (`index.html`) and each run's page, by run id.
    index: Path | None = None
    run_pages: dict[str, Path] = field(default_factory=dict)


def table_cell(value: Any, column: str = "") -> dict[str, Any]:
    """One table cell for the template: the shown `value`, whether it is `text` (left
    aligned) and `bad` (a false flag, shown red). numpy values count as Python's; a
    wall-clock time in ms (a `..._ms` column) is shown as an ISO time."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if column.endswith("_ms") and isinstance(value, int | float) and value >= WALL_CLOCK_MS:
        return {"value": iso(value), "text": True, "bad": False}
    if isinstance(value, float):
        return {"value": "" if pd.isna(value) else f"{value:.1f}", "text": False}
    if isinstance(value, bool) or value is None:
        return {
            "value": "" if value is None else str(value).lower(),
            "text": True,
            "bad": value is False,
        }
    if isinstance(value, list | tuple):
        return {"value": ", ".join(map(str, value)), "text": True, "bad": False}
    return {"value": str(value), "text": not isinstance(value, int), "bad": False}


@dataclass
class Tables:
    """What `compute_tables` made: every table of the page, the recovery measures behind
    `recovery.png`, and (when asked) the rates and sends the pictures draw."""

    tables: dict[str, pd.DataFrame]
    measured: pd.DataFrame
    plotting: dict[str, pd.DataFrame] = field(default_factory=dict)


def _sorted(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    keys = SORT_KEYS.get(name)
    if keys is None:
        return frame
    return frame.sort_values(keys, ignore_index=True, na_position=SORT_NULLS.get(name, "last"))


def compute_tables(
    spark: SparkSession,
    runs: Sequence[RunConfig],
    say: Callable[[str], None],
    step: Callable[[str], None],
    plotting: bool = False,
) -> Tables:
    """The report's Spark job and what follows from it: every run judged and measured in
    one per-run pass (`pipeline.run_pass`), collected, then the tables across runs in
    pandas on the driver (no file is written, no picture drawn). The rates and sends the
    pictures draw too, when `plotting`."""
    step("judging and measuring every run in one pass")
    collected = collect_per_run(spark, runs, WINDOW_MS, plotting)
    step("verdicts and figures per run collected")
    result = {name: _sorted(name, collected[name]) for name in PER_RUN_TABLES}
    mismatched = result["verdicts"][result["verdicts"]["matches_runner"] == False]  # noqa: E712
    if len(mismatched):
        say(f"!!  the pipeline's verdict differs from verdict.json: {list(mismatched.run_id)}")
    step("tables across runs")
    measured = tables.measures(runs, result["verdicts"], result)
    result["recovery"] = tables.recovery_table(measured)
    result["violations"] = tables.violations_table(runs, result["verdicts"], result["detection"])
    result["runs"] = tables.run_summary(runs, result["verdicts"], result)
    plotted = {name: collected[name] for name in PLOTTING_TABLES if name in collected}
    return Tables(result, measured, plotted)


def build_report(
    spark: SparkSession, sources: Sequence[Path], out: Path, say: Callable[[str], None] = print
) -> Report:
    """Build the report of every run under `sources` into `out` (created)."""
    begun = time.monotonic()

    def step(text: str) -> None:
        say(f"==> [{time.monotonic() - begun:5.1f} s] {text}")

    found = discover(sources)
    if not found.runs:
        raise PipelineInputError(f"no run directories under {', '.join(map(str, sources))}")
    # the report's own directory may sit among the runs (runs/report)
    others = [Path(s) for s in found.skipped if Path(s).resolve() != out.resolve()]
    comparisons, not_runs = find_comparisons(others, out)
    given, _ = find_hunts([Path(s) for s in sources if not (Path(s) / "config.json").exists()], out)
    hunts, not_runs = find_hunts(not_runs, out)
    hunts = given + hunts
    skipped = [str(s) for s in not_runs]
    step(
        f"{len(found.runs)} run(s), {len(comparisons)} comparison(s), {len(hunts)} hunt(s), "
        f"{len(skipped)} other directories skipped"
    )
    tables_of = compute_tables(spark, found.runs, say, step, plotting=True)
    result, measured_pd = tables_of.tables, tables_of.measured
    rates, sends = tables_of.plotting["rates"], tables_of.plotting["sends"]
    faults = result["detection"]
    step("writing Parquet tables and pictures")
    (out / "tables").mkdir(parents=True, exist_ok=True)
    for name, frame in result.items():
        frame.to_parquet(out / "tables" / f"{name}.parquet", index=False)
        frame.to_csv(out / "tables" / f"{name}.csv", index=False)
    report = Report(out / "report.html", result)
    pages = tables_of.plotting["pages"].set_index("run_id")
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    report.pictures.append(plots.recovery_plot(out / "img" / "recovery.png", measured_pd))
    runs_page = []
    written: dict[str, RunPage] = {}
    by_id = result["verdicts"].set_index("run_id")
    for run in found.runs:

        def pick(frame: pd.DataFrame, run_id: str = run.run_id) -> pd.DataFrame:
            return frame[frame["run_id"] == run_id]

        timeline = plots.timeline_plot(
            out / "img" / f"{run.run_id}-timeline.png",
            run.run_id,
            run.started_ms,
            pick(faults),
            pick(rates).sort_values("window_start_ms"),
            pick(result["failovers"]),
            pick(result["elections"]),
            WINDOW_MS,
        )
        lat = plots.latency_plot(
            out / "img" / f"{run.run_id}-latency.png",
            run.run_id,
            run.started_ms,
            pick(faults),
            pick(sends),
        )
        report.pictures += [timeline, lat]
        row = by_id.loc[run.run_id]
        verdict_words = (
            row["error"]
            if isinstance(row["error"], str)
            else ("ok" if row["ok"] else "violated: " + ", ".join(row["violated"]))
        )
        page = write_run_page(
            out,
            run,
            pages.loc[run.run_id],
            {
                "rates": pick(rates),
                "latency": pick(result["latency"]),
                "failovers": pick(result["failovers"]),
                "elections": pick(result["elections"]),
            },
            WINDOW_MS,
            verdict_words,
        )
        report.run_pages[run.run_id] = out / page.href
        written[run.run_id] = page
        runs_page.append(
            {
                "run_id": run.run_id,
                "scenario": run.scenario,
                "bug_switches": run.bug_switches,
                "ok": None if pd.isna(row["ok"]) else bool(row["ok"]),
                "verdict": verdict_words,
                "page": page.href,
                "verdict_json": page.verdict_href,
                "matches": {True: "agrees", False: "DIFFERS", None: "missing"}[
                    None if pd.isna(row["matches_runner"]) else bool(row["matches_runner"])
                ],
                "timeline": timeline.relative_to(out).as_posix(),
                "latency": lat.relative_to(out).as_posix(),
            }
        )
    links = _render(report, skipped, sources, runs_page, comparisons)
    report.index = write_index(
        out,
        found.runs,
        result,
        measured_pd,
        sources,
        links,
        int(time.time() * 1000),
        pages=written,
        hunts=hunts,
    )
    step(f"report: {report.index}")
    return report


def _render(
    report: Report,
    skipped: Sequence[str],
    sources: Sequence[Path],
    runs_page: list[dict[str, Any]],
    comparisons: Sequence[ComparisonLink],
) -> list[dict[str, Any]]:
    """Render `report.html`: every table, the pictures; the comparisons' links, which the
    front page shows too."""
    table_views = [
        {
            "name": name,
            "title": title,
            "note": note,
            "parquet": f"tables/{name}.parquet",
            "csv": f"tables/{name}.csv",
            "columns": list(report.tables[name].columns),
            "rows": [
                [table_cell(v, c) for v, c in zip(row, report.tables[name].columns, strict=True)]
                for row in report.tables[name].astype(object).itertuples(index=False)
            ],
        }
        for name, (title, note) in TABLE_TITLES.items()
        if name not in SERIES_TABLES
    ]
    page_dir = report.html.parent
    links = [
        {
            "name": c.name,
            "head": c.head,
            "base": c.base,
            "outcome": c.outcome,
            "regressions": c.regressions,
            "href": Path(os.path.relpath(c.page, page_dir)).as_posix(),
        }
        for c in comparisons
    ]
    render(
        "report.html.j2",
        report.html,
        runs=runs_page,
        tables=table_views,
        series=[
            {
                "title": TABLE_TITLES[n][0],
                "parquet": f"tables/{n}.parquet",
                "csv": f"tables/{n}.csv",
            }
            for n in sorted(SERIES_TABLES)
        ],
        skipped=list(skipped),
        sources=[str(s) for s in sources],
        comparisons=links,
        recovery_png="img/recovery.png",
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    return links
