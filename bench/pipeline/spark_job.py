"""The PySpark report's Spark job over a million synthetic records, against a plain Spark read of
the same files in the same session.

    python -m bench.pipeline [--events 1000000] [--quick] [--seed 0] [--master local[2]]
                             [--out DIR] [--results DIR] [--keep-runs]

Runbook (no ZooKeeper, no broker):

1. Generate chaos run directories under DIR/runs until they hold `--events` records
   (`bench.pipeline.synthetic.write_runs`: event-log lines of brokers and controllers,
   producer histories and final reads, fault phases, snapshots; each run's `verdict.json`
   judged by the chaos engine), with progress. Not measured.
2. Start the pipeline's Spark session (`pipeline.session`, local[2] by default), read
   every file once with the floor's job to warm the JVM, and run the per-run pass over a
   few of the smallest runs to start the Python workers, as the floor's read warmed the
   JVM's. Not measured; the warm-up's seconds are shown (the cost of a session's first
   Python job: starting the workers and importing the pipeline in them).
3. Floor: every file family read with its explicit schema (`pipeline.frames.FAMILIES`),
   grouped by run and kind (events: `kind`, history: `type`, faults: `phase`, snapshots:
   `after_heal_ms`) and counted, collected to the driver; timed before and after the
   pipeline, the mean is the floor (other work on a shared box moves both).
4. Pipeline: what `python -m pipeline report` computes, minus the pictures and the files
   (`pipeline.report.compute_tables`): one Spark job, the per-run pass, whose tasks each
   read a group of runs' files once, judge every run by the chaos invariants and compute
   every figure per run in pandas on the executors, collected; then every table across
   runs in pandas on the driver.
5. Report: seconds against the floor and their ratio (the target is 1.5x), the time of
   each step, `bench.json` in DIR, the JSON line in `bench/results` (`measure`
   `pipeline`). The generated runs are deleted unless `--keep-runs`.

Main thread; Spark runs its own threads and Python workers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.pipeline.options import PIPELINE, PipelineSettings, parse_pipeline_settings
from bench.pipeline.synthetic import Generated, write_runs
from bench.shared import console
from bench.shared.report import Measure, Report
from bench.shared.standalone import run_standalone
from pipeline.frames import FAMILIES, run_files, run_id_column
from pipeline.report import WINDOW_MS, compute_tables
from pipeline.run_pass import collect_per_run, partitions_for, run_bytes
from pipeline.runs import RunConfig, discover
from pipeline.session import spark_session

#: The ratio of the pipeline's time to the floor that the pipeline is held to.
TARGET_RATIO = 1.5
#: Runs per task of the warm-up's pass.
WARM_UP_RUNS_PER_TASK = 1
FLOOR_PHRASE = (
    "a plain Spark read of the same files (explicit schemas) and one count per run and "
    "kind, collected (mean of a run before and one after the pipeline)"
)


def floor_job(spark: Any, files: Mapping[str, Sequence[Path]]) -> int:
    """Read every file family with its schema, count per run and kind; the rows counted."""
    total = 0
    for family, (schema, depth, key) in FAMILIES.items():
        frame = spark.read.schema(schema).json([p.as_uri() for p in files[family]])
        counts = frame.groupBy(run_id_column(depth).alias("run_id"), key).count().collect()
        total += sum(int(row["count"]) for row in counts)
    return total


def _floor(spark: Any, files: Mapping[str, Sequence[Path]], records: int, when: str) -> float:
    """One timed floor job; its seconds."""
    console.phase(f"floor {when}: plain read with explicit schemas, count per run and kind")
    begun = time.monotonic()
    counted = floor_job(spark, files)
    seconds = time.monotonic() - begun
    console.detail(f"{counted:,} rows in {seconds:.2f} s")
    if counted != records:
        console.warn(f"the floor counted {counted:,} rows of {records:,} written")
    return seconds


def _warm_up(spark: Any, runs: Sequence[RunConfig]) -> tuple[float, int]:
    """Run the per-run pass over the smallest runs, enough for every task to start its
    Python worker and import the pipeline; the seconds it took and the runs it read."""
    smallest = sorted(runs, key=run_bytes)[: WARM_UP_RUNS_PER_TASK * partitions_for(spark)]
    begun = time.monotonic()
    collect_per_run(spark, smallest, WINDOW_MS)
    return time.monotonic() - begun, len(smallest)


def _generate(settings: PipelineSettings) -> tuple[Generated, float]:
    runs_dir = settings.out / "runs"
    console.phase(f"generating {settings.events:,} records of chaos runs under {runs_dir}")
    started = time.monotonic()
    shown = [0]

    def progress(made: Generated) -> None:
        step = max(1, settings.events // 10)
        if made.total // step > shown[0] or made.total >= settings.events:
            shown[0] = made.total // step
            console.detail(
                f"{made.total:>10,} records ({made.total / settings.events:4.0%}) in "
                f"{made.runs} runs, {time.monotonic() - started:5.1f} s"
            )

    made = write_runs(runs_dir, settings.events, seed=settings.seed, progress=progress)
    return made, time.monotonic() - started


def measure(settings: PipelineSettings) -> Report:
    """Generate, warm up, time the floor and the pipeline; the report and the details."""
    made, generation_s = _generate(settings)
    console.detail(
        ", ".join(f"{family} {n:,}" for family, n in made.records.items())
        + f"; {generation_s:.1f} s (not measured)"
    )
    console.phase(f"starting Spark ({settings.master})")
    begun = time.monotonic()
    spark = spark_session(settings.master, app_name="bench-pipeline")
    try:
        found = discover([made.root])
        files = run_files(found.runs)
        console.detail(
            f"session up after {time.monotonic() - begun:.1f} s; "
            f"{sum(len(f) for f in files.values()):,} files of {len(found.runs)} runs"
        )
        console.phase("warm-up: the floor's read of every file once (not measured)")
        floor_job(spark, files)
        console.phase("warm-up: the per-run pass over the smallest runs (not measured)")
        warm_up_s, warm_up_runs = _warm_up(spark, found.runs)
        console.detail(f"Python workers started and the pass run in {warm_up_s:.1f} s")
        floors = [_floor(spark, files, made.total, "before the pipeline")]
        console.phase("pipeline: the report's Spark job (verdicts, figures) and tables")
        steps: dict[str, float] = {}
        begun = time.monotonic()

        def step(text: str) -> None:
            steps[text] = round(time.monotonic() - begun, 3)
            console.detail(f"[{time.monotonic() - begun:6.1f} s] {text}")

        tables = compute_tables(spark, found.runs, console.detail, step)
        pipeline_s = time.monotonic() - begun
        step("done")
        floors.append(_floor(spark, files, made.total, "after the pipeline"))
    finally:
        spark.stop()
    violated = int((tables.tables["verdicts"]["ok"] == False).sum())  # noqa: E712
    partitions = len(tables.tables["healed"])  # one row per partition of every run
    row = Measure(
        measure=PIPELINE,
        label=f"report job, {made.total:,} records in {made.runs} runs",
        partitions=partitions,
        figure=pipeline_s,
        floor=sum(floors) / len(floors),
        floor_phrase=FLOOR_PHRASE,
        note=f"target {TARGET_RATIO}x",
        extra={
            "events": settings.events,
            "records": made.total,
            "runs": made.runs,
            **{f"{family}_records": n for family, n in made.records.items()},
            "master": settings.master,
            "plotting": False,
            "floor_runs_seconds": [round(f, 3) for f in floors],
        },
    )
    notes = (
        f"pictures and files are not part of the figure; {violated} of {made.runs} runs "
        "violate an invariant (a lost write every 50 runs)",
        f"generation took {generation_s:.1f} s and is not measured",
        f"the warm-up (the Python workers started and the pass run over the "
        f"{warm_up_runs} smallest runs) took {warm_up_s:.1f} s and is not measured: a "
        "session's first Python job pays it once",
    )
    details: dict[str, Any] = {
        "steps_seconds": steps,
        "generation_seconds": round(generation_s, 3),
        "warm_up_seconds": round(warm_up_s, 3),
    }
    title = f"PySpark report pipeline vs. a plain read ({settings.master})"
    details["files"] = sum(len(f) for f in files.values())
    return Report(PIPELINE, title, (row,), notes, details)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.pipeline`: settings from `argv`, the run, the results; exit code."""
    settings = parse_pipeline_settings(argv)
    return run_standalone(
        PIPELINE,
        settings,
        lambda: measure(settings),
        out=settings.out,
        results_dir=settings.results_dir,
        generated=settings.out / "runs",
        keep_generated=settings.keep_runs,
    )
