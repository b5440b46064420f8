"""The across-run tables, as Spark DataFrames built on the driver's thread: recovery times
by scenario and fault kind (count, p50, p95, p99, max of each measure) and invariant
violations per 100 runs. A run without faults counts under the kind `none`.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipeline import figures
from pipeline.frames import RunFrames

__all__ = [
    "NO_FAULT",
    "measures",
    "recovery_table",
    "run_kinds",
    "run_summary",
    "violations_table",
]

NO_FAULT = "none"


def run_kinds(frames: RunFrames) -> DataFrame:
    """run_id, scenario, kind: each fault kind a run injected (`none` for no fault)."""
    kinds = figures.fault_windows(frames).select("run_id", "kind").distinct()
    runs = frames.runs.select("run_id", "scenario")
    return runs.join(kinds, "run_id", "left").withColumn(
        "kind", F.coalesce("kind", F.lit(NO_FAULT))
    )


def measures(frames: RunFrames, verdicts: DataFrame, per_run: dict[str, DataFrame]) -> DataFrame:
    """run_id, scenario, kind, measure, value_ms: every recovery measure of every run.
    `per_run` holds the figures already computed (`detection`, `failovers`, `elections`,
    `unavailability`, `healed`); those missing are computed here."""
    computed = {
        "detection": figures.detection,
        "failovers": figures.failovers,
        "elections": figures.elections,
        "unavailability": figures.unavailability,
        "healed": figures.healed,
    }
    got = {
        name: per_run[name] if name in per_run else make(frames) for name, make in computed.items()
    }
    scen = frames.runs.select("run_id", "scenario")

    def of(frame: DataFrame, column: str, name: str) -> DataFrame:
        return frame.where(F.col(column).isNotNull()).select(
            "run_id",
            F.coalesce("kind", F.lit(NO_FAULT)).alias("kind"),
            F.lit(name).alias("measure"),
            F.col(column).cast("double").alias("value_ms"),
        )

    kinds = run_kinds(frames).select("run_id", "kind")
    convergence = verdicts.where(F.col("recovery_ms").isNotNull()).join(kinds, "run_id")
    windows = got["unavailability"].join(kinds, "run_id")
    healed = got["healed"].join(kinds, "run_id")
    parts = [
        of(got["detection"], "detection_ms", "failure detection"),
        of(got["failovers"], "failover_ms", "controller failover"),
        of(got["failovers"], "metadata_failover_ms", "failover until metadata current"),
        of(got["elections"], "since_fault_ms", "leader election"),
        of(windows, "duration_ms", "partition unavailability"),
        of(healed, "healed_after_ms", "partition healed after heal"),
        of(convergence, "recovery_ms", "convergence after heal"),
    ]
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part)
    return union.join(scen, "run_id")


def recovery_table(measured: DataFrame) -> DataFrame:
    """measure, scenario, kind, n, p50_ms, p95_ms, p99_ms, max_ms."""
    q = F.percentile(F.col("value_ms"), F.array(F.lit(0.5), F.lit(0.95), F.lit(0.99)))
    return (
        measured.groupBy("measure", "scenario", "kind")
        .agg(F.count("*").alias("n"), q.alias("q"), F.max("value_ms").alias("max_ms"))
        .select(
            "measure",
            "scenario",
            "kind",
            "n",
            F.col("q")[0].alias("p50_ms"),
            F.col("q")[1].alias("p95_ms"),
            F.col("q")[2].alias("p99_ms"),
            "max_ms",
        )
        .orderBy("measure", "scenario", "kind")
    )


def violations_table(frames: RunFrames, verdicts: DataFrame) -> DataFrame:
    """scenario, kind, runs, runs_violated, violations, violations_per_100_runs,
    not_judged_runs (the judging failed), invariants (those violated)."""
    joined = run_kinds(frames).join(verdicts, "run_id")
    return (
        joined.groupBy("scenario", "kind")
        .agg(
            F.count("*").alias("runs"),
            F.sum(F.when(F.col("ok") == F.lit(False), 1).otherwise(0)).alias("runs_violated"),
            F.sum(F.coalesce("violations", F.lit(0))).alias("violations"),
            F.sum(F.when(F.col("error").isNotNull(), 1).otherwise(0)).alias("failed_runs"),
            F.array_join(
                F.array_sort(F.array_distinct(F.flatten(F.collect_list("violated")))), ", "
            ).alias("invariants"),
        )
        .withColumn("violations_per_100_runs", F.col("violations") * 100.0 / F.col("runs"))
        .orderBy("scenario", "kind")
    )


def run_summary(frames: RunFrames, verdicts: DataFrame, per_run: dict[str, DataFrame]) -> DataFrame:
    """run_id, scenario, bug_switches, ok, faults, controller_elections, leader_elections,
    max_detection_ms, max_failover_ms, max_metadata_failover_ms, median_election_ms,
    max_unavailable_ms,
    convergence_ms: one row per run, from the figures of `per_run`."""

    def per(name: str, *aggs: Column) -> DataFrame:
        return per_run[name].groupBy("run_id").agg(*aggs)

    parts = [
        per(
            "detection",
            F.count("*").alias("faults"),
            F.max("detection_ms").alias("max_detection_ms"),
        ),
        per(
            "failovers",
            F.count("*").alias("controller_elections"),
            F.max("failover_ms").alias("max_failover_ms"),
            F.max("metadata_failover_ms").alias("max_metadata_failover_ms"),
        ),
        per(
            "elections",
            F.count("*").alias("leader_elections"),
            F.percentile("since_fault_ms", F.lit(0.5)).alias("median_election_ms"),
        ),
        per("unavailability", F.max("duration_ms").alias("max_unavailable_ms")),
    ]
    summary = frames.runs.select("run_id", "scenario", "bug_switches").join(
        verdicts.select("run_id", "ok", F.col("recovery_ms").alias("convergence_ms")), "run_id"
    )
    for part in parts:
        summary = summary.join(part, "run_id", "left")
    counts = ["faults", "controller_elections", "leader_elections"]
    return summary.na.fill(0, counts).orderBy("run_id")
