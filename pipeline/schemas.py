"""Explicit Spark schemas of the run-directory files the pipeline reads (docs/runs.md,
docs/events.md, docs/workload.md); nothing is inferred. Only the fields the jobs use are
declared: Spark's JSON reader leaves the others out. Pure values; any thread.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

__all__ = ["EVENTS", "FAULTS", "HISTORY", "METADATA_CURRENT", "RUN_VERDICT", "SNAPSHOTS"]


def _fields(*pairs: tuple[str, object]) -> StructType:
    return StructType([StructField(name, kind, nullable=True) for name, kind in pairs])  # type: ignore[arg-type]


#: One line of faults.jsonl: a phase of one fault.
FAULTS = _fields(
    ("ts", LongType()),
    ("fault", StringType()),
    ("kind", StringType()),
    ("targets", ArrayType(StringType())),
    ("phase", StringType()),
    ("ok", BooleanType()),
    ("detail", StringType()),
    ("elapsed_ms", LongType()),
)

#: One line of events/<node>.jsonl: the envelope and the fields of the kinds used.
EVENTS = _fields(
    ("v", IntegerType()),
    ("ts", LongType()),
    ("node", StringType()),
    ("kind", StringType()),
    ("api", StringType()),
    ("broker_id", IntegerType()),
    ("controller_id", IntegerType()),
    ("controller_epoch", IntegerType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("leader", IntegerType()),
    ("leader_epoch", IntegerType()),
    ("strategy", StringType()),
    ("unclean", BooleanType()),
    ("new", ArrayType(IntegerType())),
    ("dead", ArrayType(IntegerType())),
    ("live", ArrayType(IntegerType())),
    ("target", StringType()),
    ("duration_ms", DoubleType()),
)

#: One line of history/<process>.jsonl (`records` of polls is left out).
HISTORY = _fields(
    ("v", IntegerType()),
    ("type", StringType()),
    ("f", StringType()),
    ("process", StringType()),
    ("op_id", LongType()),
    ("time_ns", LongType()),
    ("wall_ms", LongType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("offset", LongType()),
    ("value", StringType()),
    ("error", StringType()),
    ("acks", IntegerType()),
    ("attempts", IntegerType()),
)

_SNAPSHOT_PARTITION = _fields(
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("leader", IntegerType()),
    ("isr", ArrayType(IntegerType())),
    ("replicas", ArrayType(IntegerType())),
)

#: One line of snapshots.jsonl (`metadata`, each broker's view, is left out).
SNAPSHOTS = _fields(
    ("after_heal_ms", LongType()),
    ("controller_id", IntegerType()),
    ("controller_epoch", IntegerType()),
    ("live_brokers", ArrayType(IntegerType())),
    ("active_controllers", ArrayType(IntegerType())),
    ("partitions", ArrayType(_SNAPSHOT_PARTITION)),
)

#: What the verdict job returns per run.
RUN_VERDICT = _fields(
    ("run_id", StringType()),
    ("ok", BooleanType()),
    ("violations", IntegerType()),
    ("violated", ArrayType(StringType())),
    ("not_judged", ArrayType(StringType())),
    ("recovery_ms", LongType()),
    ("verdict_json", StringType()),
    ("runner_ok", BooleanType()),
    ("matches_runner", BooleanType()),
    ("error", StringType()),
)

#: What the metadata job returns per controller election (`pipeline.metadata`).
METADATA_CURRENT = _fields(
    ("run_id", StringType()),
    ("node", StringType()),
    ("controller_epoch", IntegerType()),
    ("live_brokers", IntegerType()),
    ("brokers_updated", IntegerType()),
    ("metadata_ms", LongType()),
)
