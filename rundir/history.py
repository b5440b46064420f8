"""The workload's operation history: what each client asked for and what it learned.

One JSON-lines file per workload process: `runs/<run-id>/history/<process>.jsonl`. A
*process* is one logical client (a producer or consumer thread); its name is the file name
and must match `[A-Za-z0-9._-]+`.

Semantics (Jepsen's): every operation writes an `invoke` line before its first request and
then exactly one completion line with the same `(process, op_id)`:

- `ok`: acknowledged. For a send, the record was given `offset` (acks as in `acks`).
- `fail`: definitely not applied (every attempt was rejected before any append: e.g.
  NOT_LEADER_OR_FOLLOWER or NOT_ENOUGH_REPLICAS without an offset, INVALID_REQUIRED_ACKS).
- `info`: the outcome is unknown (timeouts, transport errors, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  REQUEST_TIMED_OUT, an error returned with an offset): the value may or may not be in the log.

An `invoke` with no completion (the process died) counts as `info`. Polls have no side effect,
so a poll that cannot complete is `fail`, never `info`.

Retries happen inside one operation and are summarised on its completion line: `attempts` is
the number of requests sent, `attempts_unknown` how many of them (the final one included)
ended with an unknown outcome. A value may therefore legitimately appear in the log up to
`attempts_unknown + (1 if type == "ok" else 0)` times; the checker holds it to that.

A batch send writes one invoke and one completion per value, each with its own `op_id`; the
completions of an acknowledged batch carry offsets base..last in order.

A poll writes a single completion line: `records` lists every record read, in offset order,
as `[offset, value]` pairs, and `offset` is the high watermark the broker reported. (One line
per poll, rather than one per record, keeps "exactly one completion" true for empty polls.)

Fields of every line (all always present; `null` where not applicable):

| field | type | meaning |
| --- | --- | --- |
| `v` | int | schema version, currently 1 |
| `type` | str | `invoke`, `ok`, `fail` or `info` |
| `f` | str | `send` or `poll` |
| `process` | str | the client process that ran the operation |
| `op_id` | int | unique within the process; pairs an invoke with its completion |
| `time_ns` | int | `time.monotonic_ns()` when the line was made (comparable on one host) |
| `wall_ms` | int | wall-clock ms since the Unix epoch, to line up with the event logs |
| `topic`, `partition` | str, int | the partition written or read |
| `offset` | int / null | send ok/info: offset given (if known); poll: see below |
| `value` | str / null | send: the (unique) value; poll: null |
| `error` | str / null | fail/info: why (a Kafka error name or a transport error) |
| `acks` | int / null | send: the acks asked for (-1 = all); poll: null |
| `attempts` | int | completions: requests sent; invoke: 0 |
| `attempts_unknown` | int | completions: attempts with an unknown outcome; invoke: 0 |
| `records` | list / null | poll ok: `[[offset, value], ...]`; otherwise null |

A poll's `offset` is the fetch offset on its invoke and the high watermark on its `ok`.

Writing: each line is written whole and flushed at once, so a killed process loses at most
the line it was writing; `read_history` skips such torn lines (lines that are not JSON) but
rejects a JSON line that breaks the schema. A writer reopening an existing file continues
its op ids. The writer is `rundir.history_writer.HistoryWriter`, safe from any thread; this
module is pure or reads files on the calling thread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast, get_args

from eventlog.jsonlines import read_json_lines
from rundir.errors import RunDirError

SCHEMA_VERSION = 1
#: The process that makes a run's final read (`chaos.client.consumer.Consumer.final_read`).
FINAL_READ_PROCESS = "final-read"

OpType = Literal["invoke", "ok", "fail", "info"]
OpF = Literal["send", "poll"]
Completion = Literal["ok", "fail", "info"]

_OP_TYPES: frozenset[str] = frozenset(get_args(OpType))
_OP_FS: frozenset[str] = frozenset(get_args(OpF))
#: What a process name (its history file's name) must match.
PROCESS_NAME = re.compile(r"[A-Za-z0-9._-]+")


class HistoryFormatError(RunDirError):
    """A history line is JSON but does not follow the schema."""


class HistoryOp(NamedTuple):
    """One line of the history (see the module docstring for each field).

    A named tuple: a report decodes a million of them, and a tuple is made and compared
    in C where a frozen dataclass runs Python code for each field."""

    type: OpType
    f: OpF
    process: str
    time_ns: int
    wall_ms: int
    topic: str
    partition: int
    offset: int | None
    value: str | None
    error: str | None
    op_id: int
    acks: int | None = None
    attempts: int = 0
    attempts_unknown: int = 0
    records: tuple[tuple[int, str], ...] | None = None

    def to_json(self) -> str:
        """The line as written (compact JSON, no newline)."""
        record: dict[str, Any] = {
            "v": SCHEMA_VERSION,
            "type": self.type,
            "f": self.f,
            "process": self.process,
            "op_id": self.op_id,
            "time_ns": self.time_ns,
            "wall_ms": self.wall_ms,
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "value": self.value,
            "error": self.error,
            "acks": self.acks,
            "attempts": self.attempts,
            "attempts_unknown": self.attempts_unknown,
            "records": None if self.records is None else [list(r) for r in self.records],
        }
        return json.dumps(record, separators=(",", ":"))

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> HistoryOp:
        """Decode one parsed line; raises `HistoryFormatError` if it breaks the schema."""
        try:
            (v, op_type, f, process, time_ns, wall_ms, topic, partition) = _HEAD(record)
            (offset, value, error, op_id, acks, attempts, unknown, raw_records) = _TAIL(record)
        except KeyError:
            return _checked(cls, record)  # an older line without a field that has a default
        # the common case, every field of its type, tested in one expression; anything
        # else is decided, with its error, field by field
        records = None if raw_records is None else _records(raw_records)
        if (
            v == SCHEMA_VERSION
            and (records is not None or raw_records is None)
            and type(op_type) is str
            and op_type in _OP_TYPES
            and type(f) is str
            and f in _OP_FS
            and type(process) is str
            and type(time_ns) is int
            and type(wall_ms) is int
            and type(topic) is str
            and type(partition) is int
            and (offset is None or type(offset) is int)
            and (value is None or type(value) is str)
            and (error is None or type(error) is str)
            and type(op_id) is int
            and (acks is None or type(acks) is int)
            and type(attempts) is int
            and type(unknown) is int
        ):
            return _new_tuple(
                cls,
                (
                    op_type,
                    f,
                    process,
                    time_ns,
                    wall_ms,
                    topic,
                    partition,
                    offset,
                    value,
                    error,
                    op_id,
                    acks,
                    attempts,
                    unknown,
                    records,
                ),
            )
        return _checked(cls, record)


_HEAD = itemgetter("v", "type", "f", "process", "time_ns", "wall_ms", "topic", "partition")
_TAIL = itemgetter(
    "offset", "value", "error", "op_id", "acks", "attempts", "attempts_unknown", "records"
)
_new_tuple = tuple.__new__


def _checked(cls: type[HistoryOp], record: dict[str, Any]) -> HistoryOp:
    """`HistoryOp.from_json`, field by field: a poll's records, missing fields with
    defaults, and the error naming the field that breaks the schema."""
    get = record.get
    if get("v") != SCHEMA_VERSION:
        raise HistoryFormatError(f"unsupported history version {get('v')!r}")
    op_type, f = get("type"), get("f")
    if not (type(op_type) is str and op_type in _OP_TYPES and type(f) is str and f in _OP_FS):
        raise HistoryFormatError(f"bad type/f: {op_type!r}/{f!r}")
    raw_records = get("records")
    records = None
    if raw_records is not None:
        if not isinstance(raw_records, list):
            raise HistoryFormatError(f"records must be a list, got {raw_records!r}")
        records = tuple(_record(r) for r in raw_records)
    return cls(
        type=cast(OpType, op_type),
        f=cast(OpF, f),
        process=_str(get("process"), "process"),
        time_ns=_int(get("time_ns"), "time_ns"),
        wall_ms=_int(get("wall_ms"), "wall_ms"),
        topic=_str(get("topic"), "topic"),
        partition=_int(get("partition"), "partition"),
        offset=_opt_int(get("offset"), "offset"),
        value=_opt_str(get("value"), "value"),
        error=_opt_str(get("error"), "error"),
        op_id=_int(get("op_id"), "op_id"),
        acks=_opt_int(get("acks"), "acks"),
        attempts=_int(get("attempts", 0), "attempts"),
        attempts_unknown=_int(get("attempts_unknown", 0), "attempts_unknown"),
        records=records,
    )


def _records(raw: object) -> tuple[tuple[int, str], ...] | None:
    """A poll's records when each is an `[offset, value]` list of an int and a string;
    None when any is not (`_checked` then says which)."""
    if type(raw) is list and all(
        type(r) is list and len(r) == 2 and type(r[0]) is int and type(r[1]) is str for r in raw
    ):
        return tuple(map(tuple, raw))
    return None


def _record(raw: object) -> tuple[int, str]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise HistoryFormatError(f"a record must be [offset, value], got {raw!r}")
    return _int(raw[0], "record offset"), _str(raw[1], "record value")


def _int(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise HistoryFormatError(f"{name} must be an int, got {value!r}")
    return value


def _str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise HistoryFormatError(f"{name} must be a string, got {value!r}")
    return value


def _opt_int(value: object, name: str) -> int | None:
    return None if value is None else _int(value, name)


def _opt_str(value: object, name: str) -> str | None:
    return None if value is None else _str(value, name)


def history_path(history_dir: Path, process: str) -> Path:
    """Where `process` writes its history inside a history directory."""
    if not PROCESS_NAME.fullmatch(process):
        raise ValueError(f"process name {process!r} must match [A-Za-z0-9._-]+")
    return history_dir / f"{process}.jsonl"


def read_history(paths: Iterable[Path]) -> list[HistoryOp]:
    """Every complete line of the given files, merged by `time_ns` (each file's order kept
    for ties). Lines that are not JSON (torn writes) are skipped; missing files are empty."""
    return history_of((path, list(read_json_lines(path))) for path in paths)


def history_of(files: Iterable[tuple[Path, Sequence[tuple[str, object]]]]) -> list[HistoryOp]:
    """As `read_history`, from lines already read: each file's path (for errors) and its
    complete lines with their decoded values (`eventlog.jsonlines.read_json_lines`)."""
    return merged_history(decode_history_file(path, lines) for path, lines in files)


def decode_history_file(path: Path, lines: Sequence[tuple[str, object]]) -> list[HistoryOp]:
    """The operations of one history file in file order, from its complete lines with
    their decoded values; `HistoryFormatError` naming `path` and the line when one breaks
    the schema."""
    ops: list[HistoryOp] = []
    append, decode = ops.append, HistoryOp.from_json
    for line, record in lines:
        if not isinstance(record, dict):
            raise HistoryFormatError(f"{path}: a line is not a JSON object: {line!r}")
        try:
            append(decode(record))
        except HistoryFormatError as exc:
            raise HistoryFormatError(f"{path}: {exc}: {line.strip()!r}") from None
    return ops


def merged_history(files: Iterable[Sequence[HistoryOp]]) -> list[HistoryOp]:
    """The operations of several files merged by `time_ns` (each file's order kept for
    ties, earlier files first)."""
    ops = [op for ops in files for op in ops]
    ops.sort(key=_time_ns)
    return ops


_time_ns = attrgetter("time_ns")


def history_files(history_dir: Path) -> list[Path]:
    """The history files of a directory, sorted by name."""
    return sorted(history_dir.glob("*.jsonl"))
