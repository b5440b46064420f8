"""Explicit Spark schemas of the run-directory files the pipeline reads (docs/runs.md,
docs/events.md, docs/workload.md); nothing is inferred. Only the fields the jobs use are
declared: Spark's JSON reader leaves the others out. Then the schema of every table the
report computes: the per-run pass (`pipeline.run_pass`) and the tables across runs
(`pipeline.tables`) hand their pandas frames through Arrow with these types, so that each
table's pandas types are those Spark's `toPandas` gives (an integer column with a null
is float64). Pure values; any thread.
"""

from __future__ import annotations

from types import UnionType
from typing import Union, get_args, get_origin, get_type_hints

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from eventlog import EVENT_TYPES, ControllerFailoverDone, Event, PartitionStateChange

__all__ = [
    "DETECTION",
    "ELECTIONS",
    "EVENTS",
    "FAILOVERS",
    "FAULTS",
    "HEALED",
    "HISTORY",
    "LATENCY",
    "MEASURED",
    "METADATA_CURRENT",
    "PAGES",
    "PER_RUN",
    "PLOTTED_SENDS",
    "RATES",
    "RECOVERY",
    "RUN_SUMMARY",
    "RUN_VERDICT",
    "SNAPSHOTS",
    "UNAVAILABILITY",
    "VERDICTS",
    "VIOLATIONS",
]


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

#: Spark's type of each Python type an event field holds (`int` as Spark's 32-bit integer:
#: ids, epochs, counts and partition numbers; a time in ms is the envelope's `ts`).
_SPARK_TYPES: dict[object, DataType] = {
    int: IntegerType(),
    float: DoubleType(),
    str: StringType(),
    bool: BooleanType(),
    list[int]: ArrayType(IntegerType()),
    list[str]: ArrayType(StringType()),
}


def _event_field(name: str, of: type[Event] | None = None) -> tuple[str, DataType]:
    """`name` with the Spark type of its field in `of` (by default the event types that have
    it, which must agree), `null` and `ABSENT` left aside: Spark reads either as null."""
    declaring = [of] if of is not None else [t for t in EVENT_TYPES.values() if name in _hints(t)]
    found = set()
    for event_type in declaring:
        hint = _hints(event_type)[name]
        options = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
        found |= {_SPARK_TYPES[o] for o in options if o in _SPARK_TYPES}
    if len(found) != 1:
        raise TypeError(f"event field {name}: Spark types {found}; name the kind to read it as")
    return name, found.pop()


def _hints(event_type: type[Event]) -> dict[str, object]:
    return get_type_hints(event_type)


#: One line of events/<node>.jsonl: the envelope and the fields of the kinds used, typed as
#: the event types declare them (a name two kinds use with two types is read as one kind's).
EVENTS = _fields(
    ("v", IntegerType()),
    ("ts", LongType()),
    ("node", StringType()),
    ("kind", StringType()),
    *(
        _event_field(name)
        for name in (
            "api",
            "broker_id",
            "controller_id",
            "controller_epoch",
            "topic",
            "partition",
            "leader",
            "leader_epoch",
            "strategy",
            "unclean",
            "new",
            "dead",
            "live",
        )
    ),
    _event_field("target", PartitionStateChange),
    _event_field("duration_ms", ControllerFailoverDone),
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

_S, _I, _L, _D, _B = StringType(), IntegerType(), LongType(), DoubleType(), BooleanType()

#: The verdicts table: `RUN_VERDICT` without the pipeline's verdict document.
VERDICTS = StructType([f for f in RUN_VERDICT.fields if f.name != "verdict_json"])

#: Per fault (`pipeline.figures.detection`).
DETECTION = _fields(
    ("run_id", _S),
    ("fault", _S),
    ("kind", _S),
    ("targets", _S),
    ("start_ms", _L),
    ("stop_ms", _L),
    ("detected_ms", _L),
    ("detection_ms", _L),
    ("detected_by", _S),
)

#: Per controller election (`pipeline.figures.failovers`).
FAILOVERS = _fields(
    ("run_id", _S),
    ("node", _S),
    ("controller_epoch", _I),
    ("elected_ms", _L),
    ("done_ms", _L),
    ("duration_ms", _D),
    ("live_brokers", _I),
    ("brokers_updated", _I),
    ("metadata_ms", _L),
    ("kind", _S),
    ("start_ms", _L),
    ("failover_ms", _L),
    ("metadata_failover_ms", _L),
)

#: Per leader election (`pipeline.figures.elections`).
ELECTIONS = _fields(
    ("run_id", _S),
    ("topic", _S),
    ("partition", _I),
    ("leader", _I),
    ("leader_epoch", _I),
    ("strategy", _S),
    ("elected_ms", _L),
    ("kind", _S),
    ("start_ms", _L),
    ("since_fault_ms", _L),
)

#: Per unavailability window (`pipeline.figures.unavailability`).
UNAVAILABILITY = _fields(
    ("run_id", _S),
    ("topic", _S),
    ("partition", _I),
    ("start_ms", _L),
    ("end_ms", _L),
    ("duration_ms", _L),
    ("closed", _B),
    ("failed", _L),
)

#: Per partition after the final heal (`pipeline.figures.healed`).
HEALED = _fields(
    ("run_id", _S),
    ("topic", _S),
    ("partition", _I),
    ("snapshots", _L),
    ("healed_after_ms", _L),
)

#: Per run and window (`pipeline.figures.latency`).
LATENCY = _fields(
    ("run_id", _S),
    ("window_start_ms", _L),
    ("sends", _L),
    ("p50_ms", _D),
    ("p95_ms", _D),
    ("p99_ms", _D),
    ("max_ms", _D),
)

#: Send completions per run and window, by outcome (`pipeline.figures.rates`).
RATES = _fields(("run_id", _S), ("window_start_ms", _L), ("ok", _L), ("fail", _L), ("info", _L))

#: Per run, what its page shows besides the tables (`pipeline.run_pass`): the verdict
#: document, the events as `[node, line, ts, kind, fields]` (bounded: `events_total`
#: counts them all), the fault phases and the history operations its witnesses name
#: (JSON; `pipeline.page_rows`).
PAGES = _fields(
    ("run_id", _S),
    ("verdict_json", _S),
    ("events_json", _S),
    ("events_total", _L),
    ("faults_json", _S),
    ("ops_json", _S),
)

#: Every send, as the latency picture draws it (`pipeline.figures.sends`).
PLOTTED_SENDS = _fields(("run_id", _S), ("invoke_ms", _L), ("type", _S), ("latency_ms", _D))

#: Every recovery measure of every run (`pipeline.tables.measures`).
MEASURED = _fields(
    ("run_id", _S), ("kind", _S), ("measure", _S), ("value_ms", _D), ("scenario", _S)
)

#: Per measure, scenario and fault kind (`pipeline.tables.recovery_table`).
RECOVERY = _fields(
    ("measure", _S),
    ("scenario", _S),
    ("kind", _S),
    ("n", _L),
    ("p50_ms", _D),
    ("p95_ms", _D),
    ("p99_ms", _D),
    ("max_ms", _D),
)

#: Per scenario and fault kind (`pipeline.tables.violations_table`).
VIOLATIONS = _fields(
    ("scenario", _S),
    ("kind", _S),
    ("runs", _L),
    ("runs_violated", _L),
    ("violations", _L),
    ("failed_runs", _L),
    ("invariants", _S),
    ("violations_per_100_runs", _D),
)

#: Per run (`pipeline.tables.run_summary`).
RUN_SUMMARY = _fields(
    ("run_id", _S),
    ("scenario", _S),
    ("bug_switches", _S),
    ("ok", _B),
    ("convergence_ms", _L),
    ("faults", _L),
    ("max_detection_ms", _L),
    ("controller_elections", _L),
    ("max_failover_ms", _L),
    ("max_metadata_failover_ms", _L),
    ("leader_elections", _L),
    ("median_election_ms", _D),
    ("max_unavailable_ms", _L),
)

#: What the per-run pass returns: each table of one partition of runs as an Arrow IPC stream.
PER_RUN = _fields(("table", _S), ("data", BinaryType()))
