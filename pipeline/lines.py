"""The rows the figures read, typed by the explicit schemas of `pipeline.schemas`, from the
lines of a run directory as the chaos engine's loader decodes them
(`rundir.reader.RunLines`): the report's per-run pass reads every file once,
and both the verdict and the figures come from that one reading. Pure functions on the
calling thread (an executor's Python worker).

A field is kept as its schema declares it, or missing, as Spark's JSON reader keeps it: an
integer column holds JSON integers (not booleans) in its range, a double column numbers, a
boolean column booleans, a string column strings (another JSON value as its JSON text), an
array column lists (with the same rules for each item). A line without its family's
required field (an event's `kind`, a history line's `type`, a fault's `phase`, a
snapshot's `after_heal_ms`) is left out.

`RunRows` holds one run's rows of each family as columns; `RunRows.frames` turns the rows
of many runs into one pandas frame per family, converted through Arrow with the schema's
types (an integer column with a missing value is float64, as Spark's `toPandas` makes it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from pipeline import figures, schemas
from pipeline.metadata import ACCEPTED, DONE, ELECTED, SENT, UPDATE_METADATA
from rundir.history import HistoryOp
from rundir.reader import RunLines

__all__ = [
    "EVENT_KINDS",
    "FAMILY_SCHEMAS",
    "RunRows",
    "column_converter",
    "converter",
    "run_rows",
]

#: The event kinds a figure reads (besides the UpdateMetadata requests sent and accepted).
EVENT_KINDS = frozenset((ELECTED, DONE, "leader_elected", "broker_change"))
_INT32 = (-(2**31), 2**31 - 1)


def _int_in(low: int, high: int) -> Callable[[object], int | None]:
    def convert(value: object) -> int | None:
        return value if type(value) is int and low <= value <= high else None

    return convert


def _long(value: object) -> int | None:
    return value if type(value) is int and -(2**63) <= value < 2**63 else None


def _double(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and type(value) is not bool else None


def _boolean(value: object) -> bool | None:
    return value if type(value) is bool else None


def _string(value: object) -> str | None:
    if value is None or type(value) is str:
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits, which no decoded line holds
        return json.dumps(value, separators=(",", ":"))


def converter(kind: DataType) -> Callable[[object], Any]:
    """The function that keeps a decoded JSON value as a column of type `kind` keeps it
    (None when it does not fit)."""
    if isinstance(kind, IntegerType):
        return _int_in(*_INT32)
    if isinstance(kind, LongType):
        return _long
    if isinstance(kind, DoubleType):
        return _double
    if isinstance(kind, BooleanType):
        return _boolean
    if isinstance(kind, StringType):
        return _string
    if isinstance(kind, ArrayType):
        item = converter(kind.elementType)

        def array(value: object) -> list[Any] | None:
            return [item(v) for v in value] if type(value) is list else None

        return array
    raise TypeError(f"no converter for {kind}")


_NONE = type(None)


def column_converter(kind: DataType) -> Callable[[list[Any]], list[Any]]:
    """`converter(kind)` over a whole column: the column itself when every value already
    fits (checked with C-level passes over it, the common case), else value by value."""
    each = converter(kind)
    fits: Callable[[set[type], list[Any]], bool]
    if isinstance(kind, IntegerType | LongType):
        low, high = _INT32 if isinstance(kind, IntegerType) else (-(2**63), 2**63 - 1)

        def fits(types: set[type], values: list[Any]) -> bool:
            if not types <= {int, _NONE}:
                return False
            numbers = values if _NONE not in types else [v for v in values if v is not None]
            return not numbers or (low <= min(numbers) and max(numbers) <= high)

    elif isinstance(kind, BooleanType | StringType):
        allowed = {bool if isinstance(kind, BooleanType) else str, _NONE}

        def fits(types: set[type], values: list[Any]) -> bool:
            return types <= allowed

    elif isinstance(kind, DoubleType):

        def fits(types: set[type], values: list[Any]) -> bool:
            return types <= {float, _NONE}

    else:

        def fits(types: set[type], values: list[Any]) -> bool:
            return False

    def convert_column(values: list[Any]) -> list[Any]:
        return values if fits(set(map(type, values)), values) else [each(v) for v in values]

    return convert_column


def _schema(pairs: Sequence[tuple[str, DataType]]) -> StructType:
    return StructType([StructField(name, kind, nullable=True) for name, kind in pairs])


def _declared(schema: StructType, names: Iterable[str]) -> list[tuple[str, DataType]]:
    types = {f.name: f.dataType for f in schema.fields}
    return [(name, types[name]) for name in names]


_EVENT_FIELDS = _declared(schemas.EVENTS, [c for c in figures.EVENT_COLUMNS if c != "noticed"])
_SEND_FIELDS = _declared(
    schemas.HISTORY, [c for c in figures.SEND_COLUMNS if c not in ("time_ns", "has_time_ns")]
)
_FAULT_FIELDS = _declared(schemas.FAULTS, ("ts", "fault", "kind", "phase"))
#: Each family's columns as the figures read them (`pipeline.figures`), with their types.
FAMILY_SCHEMAS: dict[str, StructType] = {
    "events": _schema([("run_id", StringType()), *_EVENT_FIELDS, ("noticed", BooleanType())]),
    "sends": _schema(
        [
            ("run_id", StringType()),
            *_SEND_FIELDS,
            ("time_ns", LongType()),
            ("has_time_ns", BooleanType()),
        ]
    ),
    "faults": _schema(
        [("run_id", StringType()), *_FAULT_FIELDS[:3], ("targets", StringType()), _FAULT_FIELDS[3]]
    ),
    "snapshots": _schema(
        [
            ("run_id", StringType()),
            ("after_heal_ms", LongType()),
            ("topic", StringType()),
            ("partition", IntegerType()),
            ("whole", BooleanType()),
        ]
    ),
}
_CONVERT = {
    name: [(column, column_converter(kind)) for column, kind in pairs]
    for name, pairs in (
        ("events", _EVENT_FIELDS),
        ("sends", _SEND_FIELDS),
        ("faults", _FAULT_FIELDS),
    )
}
_long_of, _int_of = converter(LongType()), converter(IntegerType())
_longs_of = column_converter(LongType())
_ints_of, _strings_of = converter(ArrayType(IntegerType())), converter(ArrayType(StringType()))


@dataclass
class RunRows:
    """Rows of every family (`FAMILY_SCHEMAS`), as one list per column; `extend` appends
    a run's, `frames` makes the pandas frames."""

    columns: dict[str, dict[str, list[Any]]] = field(
        default_factory=lambda: {
            name: {f.name: [] for f in schema.fields} for name, schema in FAMILY_SCHEMAS.items()
        }
    )

    def extend(self, family: str, run_id: str, values: Mapping[str, list[Any]]) -> None:
        """Rows of `family` as columns of equal length (every column but `run_id`)."""
        columns = self.columns[family]
        count = len(next(iter(values.values())))
        columns["run_id"].extend([run_id] * count)
        for name, column in values.items():
            columns[name].extend(column)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Each family's rows as one pandas frame, typed through Arrow by its schema."""
        return {
            name: pa.table(self.columns[name], schema=to_arrow_schema(schema)).to_pandas()
            for name, schema in FAMILY_SCHEMAS.items()
        }


def _columns(
    records: Sequence[Mapping[str, Any]],
    convert: Sequence[tuple[str, Callable[[list[Any]], list[Any]]]],
) -> dict[str, list[Any]]:
    return {name: to([r.get(name) for r in records]) for name, to in convert}


def _events(rows: RunRows, run_id: str, lines: RunLines) -> None:
    picked = [
        record
        for records in lines.events.values()
        for _, record in records
        if record.get("kind") in EVENT_KINDS
        or (record.get("kind") in (SENT, ACCEPTED) and record.get("api") == UPDATE_METADATA)
    ]
    if not picked:
        return
    values = _columns(picked, _CONVERT["events"])
    values["noticed"] = [
        r["kind"] == ELECTED or (r["kind"] == "broker_change" and bool(_ints_of(r.get("dead"))))
        for r in picked
    ]
    rows.extend("events", run_id, values)


#: Where each column of the sends is in a `HistoryOp`.
_SEND_AT = [(name, HistoryOp._fields.index(name), to) for name, to in _CONVERT["sends"]]
_TIME_NS_AT = HistoryOp._fields.index("time_ns")


def _sends(
    rows: RunRows,
    run_id: str,
    lines: RunLines,
    decoded: Mapping[Path, Sequence[HistoryOp]] | None = None,
) -> None:
    if decoded is not None:
        _decoded_sends(rows, run_id, decoded)
        return
    picked = [
        record
        for history in lines.history.values()
        for _, record in history
        if type(record) is dict and record.get("f") == "send" and record.get("type") is not None
    ]
    if not picked:
        return
    values = _columns(picked, _CONVERT["sends"])
    nanos = _longs_of([r.get("time_ns") for r in picked])
    values["time_ns"] = [0 if n is None else n for n in nanos]
    values["has_time_ns"] = [n is not None for n in nanos]
    rows.extend("sends", run_id, values)


def _decoded_sends(rows: RunRows, run_id: str, decoded: Mapping[Path, Sequence[HistoryOp]]) -> None:
    """`_sends` from the history's operations (each field already of its type, so a
    column only needs its range checked), in the same order as from the lines."""
    picked = [op for ops in decoded.values() for op in ops if op.f == "send"]
    if not picked:
        return
    fields = list(zip(*picked, strict=True))
    values = {name: to(list(fields[at])) for name, at, to in _SEND_AT}
    nanos = _longs_of(list(fields[_TIME_NS_AT]))
    values["time_ns"] = [0 if n is None else n for n in nanos]
    values["has_time_ns"] = [n is not None for n in nanos]
    rows.extend("sends", run_id, values)


def _faults(rows: RunRows, run_id: str, faults: Iterable[object]) -> None:
    convert = _CONVERT["faults"]
    for record in faults:
        if type(record) is not dict or _string(record.get("phase")) is None:
            continue
        values = {name: to([record.get(name)]) for name, to in convert}
        targets = _strings_of(record.get("targets"))
        values["targets"] = [
            None if targets is None else ",".join(t for t in targets if t is not None)
        ]
        rows.extend("faults", run_id, values)


def _snapshots(rows: RunRows, run_id: str, lines: RunLines) -> None:
    for _, _, record in lines.snapshots:
        if type(record) is not dict:
            continue
        after_heal_ms = _long_of(record.get("after_heal_ms"))
        partitions = record.get("partitions")
        if after_heal_ms is None or after_heal_ms < 0 or type(partitions) is not list:
            continue
        live = _ints_of(record.get("live_brokers"))
        for p in partitions:
            p = p if type(p) is dict else {}
            leader = _int_of(p.get("leader"))
            isr, replicas = _ints_of(p.get("isr")), _ints_of(p.get("replicas"))
            whole = (
                live is not None
                and leader is not None
                and leader in live
                and isr is not None
                and replicas is not None
                and not set(replicas) - set(isr)
            )
            rows.extend(
                "snapshots",
                run_id,
                {
                    "after_heal_ms": [after_heal_ms],
                    "topic": [_string(p.get("topic"))],
                    "partition": [_int_of(p.get("partition"))],
                    "whole": [whole],
                },
            )


def run_rows(
    rows: RunRows,
    run_id: str,
    lines: RunLines,
    faults: Iterable[object],
    decoded: Mapping[Path, Sequence[HistoryOp]] | None = None,
) -> None:
    """Append the rows of one run (its lines, and the decoded lines of its faults.jsonl);
    the sends from `decoded` when its history's operations were decoded already (see
    `rundir.reader.history_by_file`)."""
    _events(rows, run_id, lines)
    _sends(rows, run_id, lines, decoded)
    _faults(rows, run_id, faults)
    _snapshots(rows, run_id, lines)
