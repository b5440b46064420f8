"""Reading the run directories' JSON-lines files into Spark DataFrames with explicit
schemas (`pipeline.schemas`), one `run_id` column added from the file's path. Driver
thread; the reading itself runs on the executors.

Nothing is cached: the report reads every file once, in its one per-run pass
(`pipeline.run_pass`). Lines that do not parse (a torn last line of a killed writer) come
out as rows of nulls and are dropped here; the invariants judge the raw files themselves
(`pipeline.verdicts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from pipeline import schemas
from pipeline.runs import RunConfig

__all__ = ["FAMILIES", "RunFrames", "read_runs", "run_files", "run_id_column"]

#: Each file family: its schema, how deep its files sit below the run directory, and the
#: column without which a line did not parse.
FAMILIES: dict[str, tuple[StructType, int, str]] = {
    "faults": (schemas.FAULTS, 1, "phase"),
    "events": (schemas.EVENTS, 2, "kind"),
    "history": (schemas.HISTORY, 2, "type"),
    "snapshots": (schemas.SNAPSHOTS, 1, "after_heal_ms"),
}


@dataclass(frozen=True)
class RunFrames:
    """Every file family of the runs as one DataFrame each, plus one row per run."""

    runs: DataFrame
    faults: DataFrame
    events: DataFrame
    history: DataFrame
    snapshots: DataFrame


def run_id_column(depth: int) -> Column:
    """The run id from a file's path: the directory `depth` levels above the file."""
    parts = F.split(F.col("_metadata.file_path"), "/")
    return F.element_at(parts, -1 - depth)


def _read(
    spark: SparkSession,
    paths: Sequence[Path],
    schema: StructType,
    depth: int,
    required: str,
) -> DataFrame:
    if not paths:
        return spark.createDataFrame([], schema).withColumn("run_id", F.lit(None).cast("string"))
    frame = (
        spark.read.schema(schema)
        .option("mode", "PERMISSIVE")
        .json([p.as_uri() for p in paths])
        .withColumn("run_id", run_id_column(depth))
    )
    return frame.where(F.col(required).isNotNull()).coalesce(2)


def read_runs(spark: SparkSession, runs: Sequence[RunConfig]) -> RunFrames:
    """The DataFrames of `runs` (already discovered and version-checked)."""
    run_rows = [
        (
            r.run_id,
            r.path,
            r.scenario,
            r.seed,
            r.started_ms,
            r.topic,
            list(r.invariants),
            r.convergence_bound_s,
            r.unclean_leader_election,
            r.bug_switches,
        )
        for r in runs
    ]
    run_frame = spark.createDataFrame(
        run_rows,
        "run_id string, path string, scenario string, seed int, started_ms long, topic string, "
        "invariants array<string>, convergence_bound_s double, unclean_leader_election boolean, "
        "bug_switches string",
    )
    files = run_files(runs)
    return RunFrames(
        runs=run_frame,
        **{
            family: _read(spark, files[family], schema, depth, required)
            for family, (schema, depth, required) in FAMILIES.items()
        },
    )


def run_files(runs: Sequence[RunConfig]) -> dict[str, list[Path]]:
    """The files of each family (`FAMILIES`) of `runs`."""
    roots = [Path(r.path) for r in runs]
    return {
        "faults": [root / "faults.jsonl" for root in roots if (root / "faults.jsonl").exists()],
        "events": sorted(p for root in roots for p in (root / "events").glob("*.jsonl")),
        "history": sorted(p for root in roots for p in (root / "history").glob("*.jsonl")),
        "snapshots": [
            root / "snapshots.jsonl" for root in roots if (root / "snapshots.jsonl").exists()
        ],
    }
