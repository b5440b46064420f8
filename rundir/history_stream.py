"""The workload history (`rundir.history`) read as a stream: each process file decoded one
line at a time and the files merged by `time_ns` as they are read, so that a reader that
folds each operation as it comes holds one line per file, not the history. The order is
`read_history`'s (each file's order kept for ties, earlier files first) as long as every
file is in `time_ns` order, which its writer's monotonic clock makes it; a file that goes
back in time raises `HistoryOrderError`, for the caller to read the files whole instead.
Reads files on the calling thread.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from operator import attrgetter
from pathlib import Path

from eventlog.jsonlines import iter_json_lines
from rundir.errors import RunDirError
from rundir.history import HistoryFormatError, HistoryOp

__all__ = ["HistoryOrderError", "iter_history_file", "stream_history"]


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
