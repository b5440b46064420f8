"""A workload history's files split by partition into buckets on disk (`spill_history`),
so that a checker can judge a long history one bucket of partitions at a time, holding
only that bucket's records (`rundir.checker.parts`). Reads and writes files on the
calling thread.

Each history file is copied a block of lines at a time, each line undecoded and
unchanged (a last line without its newline gets one), into one spill file per bucket
(`<file>-<bucket>.jsonl` in a scratch directory), and each line's number in its file
into a column beside it (`<file>-<bucket>.lines`, 8 bytes a line): the line's place in
the history, without a step per line to wrap it, and torn exactly when the original line
is. The bucket of a line is its `partition` modulo the number of buckets, found in the
raw bytes (a JSON string cannot hold `"partition":` unescaped) and decoded only when the
line names it other than once. The file of the final read's process is also read for
the time its first invoke began (`Spill.final_started`; only its lines that can be
invokes, found in the raw bytes, are decoded), which every bucket judges by.

`Spill.ops(bucket)` gives a bucket's operations as `rundir.history_stream.stream_history`
would give them (merged by `time_ns`, each file's order for ties, earlier files first),
each with its place in the whole history, `(time_ns, file, line)`: sorting the parts'
findings by it gives them in the order of the whole history.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import BinaryIO

import orjson

from eventlog.jsonlines import json_line_value
from rundir.history import HistoryFormatError, HistoryOp
from rundir.history_stream import HistoryOrderError

__all__ = ["MAX_BUCKETS", "Placed", "Spill", "bucket_count", "column_chunks", "spill_history"]

#: The most buckets a history is split into (each file is copied into as many files).
MAX_BUCKETS = 256
#: How much of a history file is split at a time (whole lines, so a little more).
_BLOCK = 64 << 10
#: Line numbers read back at a time.
_NUMBERS = 1 << 12

#: An operation with its place in the history: `(time_ns, file, line, op)`.
Placed = tuple[int, int, int, HistoryOp]

_PARTITION = re.compile(rb'"partition":\s*(-?\d+)')
#: What an invoke's line holds (and a line that only quotes it cannot, escaped).
_INVOKE = re.compile(rb'"type":\s*"invoke"')


def bucket_count(paths: Sequence[Path], bucket_bytes: int) -> int:
    """How many buckets hold `paths` at about `bucket_bytes` of history each (at least 1,
    at most `MAX_BUCKETS`)."""
    total = 0
    for path in paths:
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            continue
    return min(MAX_BUCKETS, max(1, math.ceil(total / max(1, bucket_bytes))))


@dataclass(frozen=True, slots=True)
class Spill:
    """The history files `paths` split into `buckets` under `directory`; the earliest
    invoke of `process` in its own files (`own`, indices into `paths`) at
    `final_started` (None: it made none)."""

    directory: Path
    paths: tuple[Path, ...]
    buckets: int
    own: tuple[int, ...]
    final_started: int | None

    def file(self, index: int, bucket: int) -> Path:
        """Where the lines of `paths[index]` in `bucket` are."""
        return self.directory / f"{index}-{bucket}.jsonl"

    def lines(self, index: int, bucket: int) -> Path:
        """Where the numbers of those lines in `paths[index]` are."""
        return self.directory / f"{index}-{bucket}.lines"

    def file_ops(self, index: int, bucket: int) -> Iterator[Placed]:
        """The operations of `paths[index]` in `bucket`, in file order, one line decoded
        at a time (torn lines skipped); `HistoryFormatError` naming the original file and
        line when one breaks the schema, `HistoryOrderError` when one goes back in time."""
        path, decode, last = self.paths[index], HistoryOp.from_json, None
        loads, failure = orjson.loads, orjson.JSONDecodeError
        try:
            file = open(self.file(index, bucket), "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            numbers = chain.from_iterable(column_chunks(self.lines(index, bucket), _NUMBERS))
            for raw, line in zip(file, numbers, strict=True):
                try:
                    value = loads(raw)
                except failure:
                    values = json_line_value(raw)
                    if not values:
                        continue  # torn
                    value = values[0]
                if type(value) is not dict:
                    text = raw.decode("utf-8", errors="replace").strip()
                    raise HistoryFormatError(f"{path}: a line is not a JSON object: {text!r}")
                try:
                    op = decode(value)
                except HistoryFormatError as exc:
                    text = raw.decode("utf-8", errors="replace").strip()
                    raise HistoryFormatError(f"{path}: {exc}: {text!r}") from None
                if last is not None and op.time_ns < last:
                    raise HistoryOrderError(f"{path}: time_ns {op.time_ns} after {last}")
                last = op.time_ns
                yield op.time_ns, index, line, op

    def ops(self, bucket: int) -> Iterator[Placed]:
        """Every operation of `bucket` in history order, with its place."""
        return heapq.merge(*(self.file_ops(i, bucket) for i in range(len(self.paths))))


def spill_history(
    paths: Sequence[Path], directory: Path, buckets: int, own: Sequence[int], process: str
) -> Spill:
    """Split the history files `paths` into `buckets` under `directory` (which exists);
    the files `own` (indices) are also decoded, for the earliest invoke of `process`
    there."""
    started: int | None = None
    for index, path in enumerate(paths):
        invokes: list[bytes] | None = [] if index in own else None
        _copy(path, [directory / f"{index}-{b}" for b in range(buckets)], invokes)
        for raw in invokes or ():
            started = _min(started, _started(path, raw, process))
    return Spill(directory, tuple(paths), buckets, tuple(own), started)


def _bucket(raw: bytes, buckets: int) -> int:
    """The bucket of a line that does not name its partition once in its bytes: its
    decoded partition modulo `buckets` (0 for a line that has none, which is torn or
    breaks the schema and is judged as such later)."""
    try:
        record = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return 0
    partition = record.get("partition") if type(record) is dict else None
    return partition % buckets if type(partition) is int else 0


def _copy(path: Path, spills: list[Path], invokes: list[bytes] | None) -> None:
    """Copy the lines of `path` into the spill files `spills` (their names without the
    suffix), one per bucket, and their numbers beside them; the lines that may be invokes
    to `invokes` when given. Read and written a block of lines at a time: one write per
    bucket and block, not one per line."""
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    buckets, find, invoke = len(spills), _PARTITION.findall, _INVOKE.search
    with contextlib.ExitStack() as stack:
        stack.enter_context(file)
        writes = [stack.enter_context(open(f"{s}.jsonl", "wb")).write for s in spills]
        columns = [stack.enter_context(open(f"{s}.lines", "wb")) for s in spills]
        first = 0  # the number of the block's first line
        for block in _blocks(file):
            lines = block.split(b"\n")
            if not lines[-1]:
                lines.pop()  # the block ends with its last line's newline
            held: list[list[int]] = [[] for _ in spills]  # each bucket's lines, in order
            adds = [numbers.append for numbers in held]
            for number, raw in enumerate(lines):
                found = find(raw)
                adds[int(found[0]) % buckets if len(found) == 1 else _bucket(raw, buckets)](number)
                if invokes is not None and invoke(raw):
                    invokes.append(raw)
            for bucket, numbers in enumerate(held):
                if numbers:
                    writes[bucket](b"\n".join(map(lines.__getitem__, numbers)) + b"\n")
                    array("q", map(first.__add__, numbers)).tofile(columns[bucket])
            first += len(lines)


def _blocks(file: BinaryIO) -> Iterator[bytes]:
    """The bytes of `file`, `_BLOCK` or so at a time, each ending at a line's end (but
    the last, when the file does not end with a newline)."""
    while block := file.read(_BLOCK):
        yield block + file.readline() if block[-1:] != b"\n" else block


def column_chunks(path: Path, size: int) -> Iterator[array[int]]:
    """The 8-byte integers written to `path` (by `array.tofile`), `size` at a time
    (unbuffered: the chunk is the buffer)."""
    with open(path, "rb", buffering=0) as file:
        while True:
            chunk = array("q")
            with contextlib.suppress(EOFError):  # the last chunk, shorter
                chunk.fromfile(file, size)
            if not chunk:
                return
            yield chunk


def _started(path: Path, raw: bytes, process: str) -> int | None:
    """The time of the line `raw` of `path` when it is an invoke of `process` (a line that
    does not decode, or breaks the schema, is judged where the bucket reads it)."""
    try:
        record = orjson.loads(raw)
        op = HistoryOp.from_json(record) if type(record) is dict else None
    except (orjson.JSONDecodeError, HistoryFormatError):
        return None
    if op is not None and op.process == process and op.type == "invoke":
        return op.time_ns
    return None


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)
