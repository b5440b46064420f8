"""The report's one Spark job, the per-run pass: every run's rows of every file family,
read once and shuffled once by run id into a few partitions of whole runs
(`partitions_for`), and one Python call per partition (`mapInArrow`) that judges each of
its runs with the chaos invariants (`pipeline.verdicts.verdict_row`) and computes all
their figures, by run, in pandas (`pipeline.figures`). Each table of a partition comes
back as one Arrow IPC stream, and the driver concatenates them into one pandas frame per
table, typed by its schema (`pipeline.schemas`) as Spark's `toPandas` types.

Why partitions of runs rather than one call per run: pandas' fixed cost per operation
(about a millisecond) times some two hundred operations per call made the figures cost
more than the data; a few calls per core pay it a few times. Why an explicit number of
partitions (`repartition(n, "run_id")`): adaptive execution would coalesce the small
shuffle of a plain `groupBy` into one partition, that is one Python task on one core.

`run_rows` and `collect_per_run` run on the driver's thread; `judge_and_measure` (built
by `per_run`) on the executors' Python workers, one partition of runs per call.

What goes to Python is cut down in Spark first, from the frames read with their explicit
schemas (`pipeline.frames`): the event kinds the figures read (with `noticed`, a
`broker_change` with a dead broker or a `controller_elected`), the history's sends, the
faults' phases (targets joined with commas) and the snapshot partitions after the heal
(with `whole`, the leader live and the ISR complete). Every run also has a row of its
own, so that a run with no readable line still gets its verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from pipeline import figures, schemas
from pipeline.frames import RunFrames
from pipeline.metadata import ACCEPTED, DONE, ELECTED, SENT, UPDATE_METADATA
from pipeline.runs import RunConfig
from pipeline.verdicts import verdict_row

__all__ = [
    "FAMILY",
    "PER_RUN_TABLES",
    "PLOTTING_TABLES",
    "collect_per_run",
    "partitions_for",
    "per_run",
    "run_rows",
    "typed",
]

#: The column naming each row's family in `run_rows`.
FAMILY = "family"
#: Partitions of runs per core (`partitions_for`).
PARTITIONS_PER_CORE = 2
#: The event kinds a figure reads.
EVENT_KINDS = (ELECTED, DONE, "leader_elected", "broker_change")
#: The tables `per_run` makes for every run, and their schemas.
PER_RUN_TABLES: dict[str, StructType] = {
    "verdicts": schemas.VERDICTS,
    "detection": schemas.DETECTION,
    "failovers": schemas.FAILOVERS,
    "elections": schemas.ELECTIONS,
    "unavailability": schemas.UNAVAILABILITY,
    "healed": schemas.HEALED,
    "latency": schemas.LATENCY,
}
#: What the pictures need besides, made when asked (`per_run(..., plotting=True)`).
PLOTTING_TABLES: dict[str, StructType] = {"rates": schemas.RATES, "sends": schemas.PLOTTED_SENDS}


def _events(frames: RunFrames) -> DataFrame:
    e = frames.events
    wanted = F.col("kind").isin(*EVENT_KINDS) | (
        F.col("kind").isin(SENT, ACCEPTED) & (F.col("api") == UPDATE_METADATA)
    )
    noticed = ((F.col("kind") == "broker_change") & (F.size("dead") > 0)) | (
        F.col("kind") == ELECTED
    )
    return e.where(wanted).select(
        "run_id",
        F.lit("events").alias(FAMILY),
        *[c for c in figures.EVENT_COLUMNS if c != "noticed"],
        F.coalesce(noticed, F.lit(False)).alias("noticed"),
    )


def _sends(frames: RunFrames) -> DataFrame:
    h = frames.history.where(F.col("f") == "send")
    return h.select(
        "run_id",
        F.lit("sends").alias(FAMILY),
        *[c for c in figures.SEND_COLUMNS if c not in ("time_ns", "has_time_ns")],
        F.coalesce("time_ns", F.lit(0)).alias("time_ns"),
        F.col("time_ns").isNotNull().alias("has_time_ns"),
    )


def _faults(frames: RunFrames) -> DataFrame:
    return frames.faults.select(
        "run_id",
        F.lit("faults").alias(FAMILY),
        "ts",
        "fault",
        "kind",
        F.array_join("targets", ",").alias("targets"),
        "phase",
    )


def _snapshots(frames: RunFrames) -> DataFrame:
    rows = frames.snapshots.where(F.col("after_heal_ms") >= 0).select(
        "run_id", "after_heal_ms", "live_brokers", F.explode("partitions").alias("p")
    )
    whole = F.array_contains(F.col("live_brokers"), F.col("p.leader")) & (
        F.size(F.array_except(F.col("p.replicas"), F.col("p.isr"))) == 0
    )
    return rows.select(
        "run_id",
        F.lit("snapshots").alias(FAMILY),
        "after_heal_ms",
        F.col("p.topic").alias("topic"),
        F.col("p.partition").alias("partition"),
        F.coalesce(whole, F.lit(False)).alias("whole"),
    )


def run_rows(frames: RunFrames) -> DataFrame:
    """One frame of every run's rows the figures read, each tagged with its `FAMILY`
    (`events`, `sends`, `faults`, `snapshots`, and one `run` row per run)."""
    parts = [
        frames.runs.select("run_id", F.lit("run").alias(FAMILY)),
        _events(frames),
        _sends(frames),
        _faults(frames),
        _snapshots(frames),
    ]
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part, allowMissingColumns=True)
    return union


def partitions_for(spark: SparkSession) -> int:
    """How many partitions of runs the pass makes: `PARTITIONS_PER_CORE` per core of the
    session's default parallelism (each is one Python call; a few per core even out the
    runs' unequal costs)."""
    return PARTITIONS_PER_CORE * spark.sparkContext.defaultParallelism


def _family(table: pa.Table, name: str, columns: Sequence[str]) -> pd.DataFrame:
    rows = table.filter(pc.equal(table[FAMILY], name))
    return rows.select(["run_id", *columns]).to_pandas()


def _ipc(frame: pd.DataFrame, schema: StructType) -> bytes:
    table = pa.Table.from_pandas(frame, schema=to_arrow_schema(schema), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def per_run(
    configs: Mapping[str, RunConfig], window_ms: int, plotting: bool = False
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The body of the per-run pass: from the `run_rows` of one partition of whole runs,
    their verdicts (one run at a time) and their figures (by run), each table as a row of
    `schemas.PER_RUN` (an Arrow IPC stream of the table's schema). The rates and the sends
    as the pictures draw them too, when `plotting`."""

    def judge_and_measure(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches))
        if not table.num_rows:
            return
        run_ids = sorted(set(table["run_id"].to_pylist()))
        started = {r: configs[r].started_ms for r in run_ids}
        events = _family(table, "events", figures.EVENT_COLUMNS)
        faults = _family(table, "faults", figures.FAULT_COLUMNS)
        history = _family(table, "sends", figures.SEND_COLUMNS)
        snapshots = _family(table, "snapshots", figures.SNAPSHOT_COLUMNS)
        verdicts = [
            {k: v for k, v in verdict_row(configs[r]).items() if k != "verdict_json"}
            for r in run_ids
        ]
        sent = figures.sends(history)
        made = {
            "verdicts": pd.DataFrame(verdicts, columns=schemas.VERDICTS.names),
            "detection": figures.detection(events, faults),
            "failovers": figures.failovers(events, faults, started),
            "elections": figures.elections(events, faults, started),
            "unavailability": figures.unavailability(sent),
            "healed": figures.healed(snapshots),
            "latency": figures.latency(sent, window_ms),
        }
        if plotting:
            made["rates"] = figures.rates(sent, window_ms)
            made["sends"] = sent
        names = {**PER_RUN_TABLES, **PLOTTING_TABLES}
        data = [_ipc(frame[names[n].names], names[n]) for n, frame in made.items()]
        out = pa.table({"table": list(made), "data": data}, schema=to_arrow_schema(schemas.PER_RUN))
        yield from out.to_batches()

    return judge_and_measure


def typed(tables: Sequence[pa.Table], schema: StructType) -> pd.DataFrame:
    """`tables` (of `schema`) as one pandas frame, converted as Spark's `toPandas` converts
    (an integer column with a null is float64, a boolean one object)."""
    arrow = to_arrow_schema(schema)
    return pa.concat_tables([t.cast(arrow) for t in tables] or [arrow.empty_table()]).to_pandas()


def collect_per_run(
    frames: RunFrames, runs: Sequence[RunConfig], window_ms: int, plotting: bool = False
) -> dict[str, pd.DataFrame]:
    """The per-run pass over `frames`, collected: each table of `PER_RUN_TABLES` (and of
    `PLOTTING_TABLES` when `plotting`) of every run, as one pandas frame each, unsorted."""
    configs = {r.run_id: r for r in runs}
    partitions = max(1, min(len(runs), partitions_for(frames.runs.sparkSession)))
    rows = run_rows(frames).repartition(partitions, "run_id")
    passed = rows.mapInArrow(per_run(configs, window_ms, plotting), schema=schemas.PER_RUN)
    collected: Any = passed.toArrow()
    wanted = {**PER_RUN_TABLES, **(PLOTTING_TABLES if plotting else {})}
    parts: dict[str, list[pa.Table]] = {name: [] for name in wanted}
    for name, data in zip(
        collected["table"].to_pylist(), collected["data"].to_pylist(), strict=True
    ):
        parts[name].append(pa.ipc.open_stream(data).read_all())
    return {name: typed(parts[name], schema) for name, schema in wanted.items()}
