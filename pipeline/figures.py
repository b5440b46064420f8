"""The per-run figures as Spark DataFrames, built on the driver's thread and computed on the
executors: failure detection, controller failover, leader elections, per-partition
unavailability windows, produce latency quantiles per time window and operation rates.

Definitions (docs/pipeline.md):

- detection: a fault's `start` (faults.jsonl) to the first `broker_change` with a dead
  broker logged at or after it, or the first `controller_elected` when that came first
  (a failed controller is noticed by the election of the next one).
- failover: the start of the last fault before a `controller_elected` (the old controller
  gone) to that epoch's `controller_failover_done`; and to the moment the last broker the
  new controller found live applied an UpdateMetadata of its epoch (`pipeline.metadata`).
- election: a partition's `leader_elected` after the run started (not `initial`), and
  the time since the last fault's start.
- unavailability: per partition, from the invoke of the first send that did not succeed
  after an acknowledged one, to the acknowledgement of the next one that did (as the
  producer saw it; open windows end at the last failed completion).
- healed: per partition, from the cluster snapshots after the final heal, the first
  snapshot at or after the heal in which ZooKeeper's leader is a live broker and the ISR
  holds every replica.
- latency: each acknowledged send's invoke-to-ok time; quantiles per `window_ms`.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipeline.frames import RunFrames
from pipeline.metadata import metadata_frame

__all__ = [
    "QUANTILES",
    "detection",
    "elections",
    "failovers",
    "fault_windows",
    "healed",
    "latency",
    "rates",
    "sends",
    "unavailability",
]

QUANTILES = (0.5, 0.95, 0.99)


def fault_windows(frames: RunFrames) -> DataFrame:
    """One row per fault: run_id, fault, kind, targets, start_ms, stop_ms (null: never
    stopped)."""
    f = frames.faults
    starts = f.where(F.col("phase") == "start").select(
        "run_id",
        "fault",
        "kind",
        F.array_join("targets", ",").alias("targets"),
        F.col("ts").alias("start_ms"),
    )
    stops = (
        f.where(F.col("phase") == "stop")
        .groupBy("run_id", "fault")
        .agg(F.min("ts").alias("stop_ms"))
    )
    return starts.join(stops, ["run_id", "fault"], "left")


def _last_fault_before(frame: DataFrame, faults: DataFrame, ts: str) -> DataFrame:
    """`frame` with the kind and start of the last fault that started at or before `ts`."""
    keyed = frame.withColumn("_row", F.monotonically_increasing_id())
    joined = keyed.join(
        faults.select("run_id", "kind", "start_ms"),
        (keyed["run_id"] == faults["run_id"]) & (faults["start_ms"] <= keyed[ts]),
        "left",
    ).drop(faults["run_id"])
    latest = Window.partitionBy("_row").orderBy(F.col("start_ms").desc_nulls_last())
    return (
        joined.withColumn("_n", F.row_number().over(latest))
        .where(F.col("_n") == 1)
        .drop("_n", "_row")
    )


def detection(frames: RunFrames) -> DataFrame:
    """run_id, fault, kind, targets, start_ms, stop_ms, detected_ms, detection_ms (null:
    not detected), detected_by (`broker_change` or `controller_elected`)."""
    faults = fault_windows(frames)
    noticed = ((F.col("kind") == "broker_change") & (F.size("dead") > 0)) | (
        F.col("kind") == "controller_elected"
    )
    changes = frames.events.where(noticed).select(
        "run_id", F.col("ts").alias("change_ms"), F.col("kind").alias("detected_by")
    )
    joined = faults.join(
        changes,
        (faults["run_id"] == changes["run_id"]) & (changes["change_ms"] >= faults["start_ms"]),
        "left",
    ).drop(changes["run_id"])
    return joined.groupBy("run_id", "fault", "kind", "targets", "start_ms", "stop_ms").agg(
        F.min("change_ms").alias("detected_ms"),
        (F.min("change_ms") - F.col("start_ms")).alias("detection_ms"),
        F.min_by("detected_by", "change_ms").alias("detected_by"),
    )


def _since_start(frames: RunFrames) -> DataFrame:
    return frames.events.join(frames.runs.select("run_id", "started_ms"), "run_id").where(
        F.col("ts") >= F.col("started_ms")
    )


def failovers(frames: RunFrames) -> DataFrame:
    """run_id, controller_epoch, node, elected_ms, done_ms, kind, start_ms, failover_ms,
    duration_ms (the new controller's own `on_failover` time), live_brokers,
    brokers_updated, metadata_ms (the last live broker applied an UpdateMetadata of the
    epoch; null: not all did), metadata_failover_ms (from start_ms to metadata_ms)."""
    events = _since_start(frames)
    elected = events.where(F.col("kind") == "controller_elected").select(
        "run_id", "node", "controller_epoch", F.col("ts").alias("elected_ms")
    )
    done = (
        events.where(F.col("kind") == "controller_failover_done")
        .groupBy("run_id", "node", "controller_epoch")
        .agg(F.min("ts").alias("done_ms"), F.min("duration_ms").alias("duration_ms"))
    )
    keys = ["run_id", "node", "controller_epoch"]
    current = metadata_frame(frames.events)
    pairs = elected.join(done, keys, "left").join(current, keys, "left")
    with_fault = _last_fault_before(pairs, fault_windows(frames), "elected_ms")
    return with_fault.withColumn("failover_ms", F.col("done_ms") - F.col("start_ms")).withColumn(
        "metadata_failover_ms", F.col("metadata_ms") - F.col("start_ms")
    )


def elections(frames: RunFrames) -> DataFrame:
    """run_id, topic, partition, leader, leader_epoch, strategy, elected_ms, kind,
    start_ms, since_fault_ms: every leader election after the run started, but the
    initial ones."""
    chosen = (
        _since_start(frames)
        .where((F.col("kind") == "leader_elected") & (F.col("strategy") != "initial"))
        .select(
            "run_id",
            "topic",
            "partition",
            "leader",
            "leader_epoch",
            "strategy",
            F.col("ts").alias("elected_ms"),
        )
    )
    with_fault = _last_fault_before(chosen, fault_windows(frames), "elected_ms")
    return with_fault.withColumn("since_fault_ms", F.col("elected_ms") - F.col("start_ms"))


def _times(prefix: str) -> list[Column]:
    return [F.col("wall_ms").alias(f"{prefix}_ms"), F.col("time_ns").alias(f"{prefix}_ns")]


def sends(frames: RunFrames) -> DataFrame:
    """Every send paired with its completion: run_id, process, op_id, topic, partition,
    invoke_ms, done_ms, type (ok/fail/info; info when it never completed), latency_ms.
    `frames.sends` when it was set (cached)."""
    if frames.sends is not None:
        return frames.sends
    h = frames.history.where(F.col("f") == "send")
    keys = ["run_id", "process", "op_id"]
    invokes = h.where(F.col("type") == "invoke").select(
        *keys, "topic", "partition", *_times("invoke")
    )
    done = h.where(F.col("type") != "invoke").select(*keys, "type", *_times("done"))
    return (
        invokes.join(done, ["run_id", "process", "op_id"], "left")
        .withColumn("type", F.coalesce("type", F.lit("info")))
        .withColumn("latency_ms", (F.col("done_ns") - F.col("invoke_ns")) / 1e6)
        .drop("invoke_ns", "done_ns")
    )


def unavailability(frames: RunFrames) -> DataFrame:
    """run_id, topic, partition, start_ms, end_ms, duration_ms, closed (an acknowledged
    send ended the window), failed (sends in it)."""
    s = sends(frames)
    order = Window.partitionBy("run_id", "topic", "partition").orderBy("invoke_ms", "op_id")
    island = s.withColumn(
        "island", F.sum(F.when(F.col("type") == "ok", 1).otherwise(0)).over(order)
    )
    bad = island.where(F.col("type") != "ok").groupBy("run_id", "topic", "partition", "island")
    windows = bad.agg(
        F.min("invoke_ms").alias("start_ms"),
        F.max("done_ms").alias("last_failed_ms"),
        F.count("*").alias("failed"),
    )
    closing = island.where(F.col("type") == "ok").select(
        "run_id",
        "topic",
        "partition",
        (F.col("island") - 1).alias("island"),
        F.col("done_ms").alias("ok_ms"),
    )
    return (
        windows.join(closing, ["run_id", "topic", "partition", "island"], "left")
        .withColumn("closed", F.col("ok_ms").isNotNull())
        .withColumn("end_ms", F.coalesce("ok_ms", "last_failed_ms"))
        .withColumn("duration_ms", F.col("end_ms") - F.col("start_ms"))
        .select(
            "run_id", "topic", "partition", "start_ms", "end_ms", "duration_ms", "closed", "failed"
        )
    )


def latency(frames: RunFrames, window_ms: int) -> DataFrame:
    """run_id, window_start_ms, sends, p50_ms, p95_ms, p99_ms, max_ms: acknowledged sends
    by the window their invoke fell in."""
    ok = sends(frames).where(F.col("type") == "ok")
    bucket = (F.floor(F.col("invoke_ms") / window_ms) * window_ms).cast("long")
    q = F.percentile(F.col("latency_ms"), F.array(*[F.lit(x) for x in QUANTILES]))
    return (
        ok.withColumn("window_start_ms", bucket)
        .groupBy("run_id", "window_start_ms")
        .agg(F.count("*").alias("sends"), q.alias("q"), F.max("latency_ms").alias("max_ms"))
        .select(
            "run_id",
            "window_start_ms",
            "sends",
            *[F.col("q")[i].alias(f"p{round(x * 100)}_ms") for i, x in enumerate(QUANTILES)],
            "max_ms",
        )
    )


def rates(frames: RunFrames, window_ms: int) -> DataFrame:
    """run_id, window_start_ms, ok, fail, info: send completions per window."""
    s = sends(frames).withColumn("at", F.coalesce("done_ms", "invoke_ms"))
    bucket = (F.floor(F.col("at") / window_ms) * window_ms).cast("long")
    return (
        s.withColumn("window_start_ms", bucket)
        .groupBy("run_id", "window_start_ms")
        .pivot("type", ["ok", "fail", "info"])
        .count()
        .na.fill(0)
    )


def healed(frames: RunFrames) -> DataFrame:
    """run_id, topic, partition, snapshots, healed_after_ms (null: never within the
    snapshots): when each partition was whole again after the final heal."""
    part = F.explode("partitions").alias("p")
    rows = frames.snapshots.where(F.col("after_heal_ms") >= 0).select(
        "run_id", "after_heal_ms", "live_brokers", part
    )
    whole = F.array_contains(F.col("live_brokers"), F.col("p.leader")) & (
        F.size(F.array_except(F.col("p.replicas"), F.col("p.isr"))) == 0
    )
    return rows.groupBy(
        "run_id", F.col("p.topic").alias("topic"), F.col("p.partition").alias("partition")
    ).agg(
        F.count("*").alias("snapshots"),
        F.min(F.when(whole, F.col("after_heal_ms"))).alias("healed_after_ms"),
    )
