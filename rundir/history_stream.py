"""The workload history (`rundir.history`) read as a stream: each process file decoded one
line at a time and the files merged by `time_ns` as they are read, so that a reader that
folds each operation as it comes holds one line per file, not the history. The order is
`read_history`'s (each file's order kept for ties, earlier files first) as long as every
file is in `time_ns` order, which its writer's monotonic clock makes it; a file that goes
back in time raises `HistoryOrderError`, for the caller to read the files whole instead.
`scan_history_file` reads a file through once for what a re-judging needs to know of it
(torn lines, order, schema errors) and `HistoryFiles` is a history kept as its files,
read again on each iteration. Reads files on the calling thread.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

import orjson

from eventlog.jsonlines import iter_json_lines
from rundir.errors import RunDirError
from rundir.history import HistoryFormatError, HistoryOp, read_history

__all__ = [
    "FileScan",
    "HistoryFiles",
    "HistoryOrderError",
    "iter_history_file",
    "scan_history_file",
    "stream_history",
]


class HistoryOrderError(RunDirError):
    """A history file has a line earlier (`time_ns`) than the line before it: merging the
    files as they are read would not give `read_history`'s order."""


def iter_history_file(path: Path) -> Iterator[HistoryOp]:
    """The operations of one history file in file order, one line decoded at a time
    (torn lines skipped, a missing file empty); `HistoryFormatError` naming `path` and
    the line when one breaks the schema, `HistoryOrderError` when one goes back in time."""
    decode = HistoryOp.from_json
    last = None
    for raw, record in iter_json_lines(path):
        if type(record) is not dict:
            line = raw.decode("utf-8", errors="replace")
            raise HistoryFormatError(f"{path}: a line is not a JSON object: {line!r}")
        try:
            op = decode(record)
        except HistoryFormatError as exc:
            line = raw.decode("utf-8", errors="replace").strip()
            raise HistoryFormatError(f"{path}: {exc}: {line!r}") from None
        if last is not None and op.time_ns < last:
            raise HistoryOrderError(f"{path}: time_ns {op.time_ns} after {last}")
        last = op.time_ns
        yield op


def stream_history(paths: Iterable[Path]) -> Iterator[HistoryOp]:
    """Every complete line of the given files merged by `time_ns`, as `read_history`
    orders them, decoded as the merge reaches it."""
    return heapq.merge(*(iter_history_file(path) for path in paths), key=_time_ns)


_time_ns = attrgetter("time_ns")


@dataclass(frozen=True, slots=True)
class FileScan:
    """One history file read through once: its operations (`ops`), the numbers of the
    lines skipped as torn (not JSON), whether its `time_ns` never goes back (`ordered`),
    the latest `wall_ms`, and the processes with a completed (`ok`) operation."""

    ops: int
    torn: tuple[int, ...]
    ordered: bool
    last_wall_ms: int
    completed: frozenset[str]


def scan_history_file(path: Path) -> FileScan:
    """Read `path` one line at a time, keeping no operation; `HistoryFormatError` naming
    `path` and the line when one breaks the schema (a missing file is empty)."""
    torn: list[int] = []
    ops, ordered, last, wall = 0, True, None, 0
    completed: set[str] = set()
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return FileScan(0, (), True, 0, frozenset())
    with file:
        for number, raw in enumerate(file, start=1):
            values = _decoded(raw)
            if not values:
                torn.append(number)
                continue
            record = values[0]
            if type(record) is not dict:
                line = raw.decode("utf-8", errors="replace")
                raise HistoryFormatError(f"{path}: a line is not a JSON object: {line!r}")
            try:
                op = HistoryOp.from_json(record)
            except HistoryFormatError as exc:
                line = raw.decode("utf-8", errors="replace").strip()
                raise HistoryFormatError(f"{path}: {exc}: {line!r}") from None
            ops += 1
            ordered = ordered and (last is None or op.time_ns >= last)
            last, wall = op.time_ns, max(wall, op.wall_ms)
            if op.type == "ok":
                completed.add(op.process)
    return FileScan(ops, tuple(torn), ordered, wall, frozenset(completed))


def _decoded(raw: bytes) -> tuple[object, ...]:
    """The value of one line as a tuple of one; none when it is not JSON (torn)."""
    try:
        return (orjson.loads(raw),)
    except orjson.JSONDecodeError:
        try:
            return (json.loads(raw.decode("utf-8", errors="replace")),)
        except ValueError:
            return ()


@dataclass(frozen=True, slots=True)
class HistoryFiles(Collection[HistoryOp]):
    """A history kept as its files (`paths`) and read again on each iteration, in
    `read_history`'s order (streamed while each file is `ordered`, else read whole), for
    readers that fold it without holding it: `len` is its number of operations."""

    paths: tuple[Path, ...]
    ops: int
    ordered: bool = True

    def __iter__(self) -> Iterator[HistoryOp]:
        if self.ordered:
            return stream_history(self.paths)
        return iter(read_history(self.paths))

    def __len__(self) -> int:
        return self.ops

    def __contains__(self, op: object) -> bool:
        return any(op == mine for mine in self)
