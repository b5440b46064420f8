"""`HistoryWriter`: one workload process's history (`rundir.history`, docs/workload.md),
appended line by line, each line whole and flushed at once. Safe from any thread."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from eventlog.jsonlines import JsonLinesWriter
from rundir.history import PROCESS_NAME, Completion, HistoryOp, OpF, read_history

__all__ = ["HistoryWriter"]


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class HistoryWriter:
    """The history of one process, appended line by line. Any thread; lines from
    concurrent callers never interleave. `path` None keeps nothing (for tests and dry runs)."""

    def __init__(
        self,
        path: Path | None,
        process: str,
        *,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        wall_ms: Callable[[], int] = _wall_ms,
    ) -> None:
        if not PROCESS_NAME.fullmatch(process):
            raise ValueError(f"process name {process!r} must match [A-Za-z0-9._-]+")
        self.process = process
        self.path = path
        self._clock_ns = clock_ns
        self._wall_ms = wall_ms
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str]] = Counter()
        first_id = 0
        if path is not None and path.exists():
            previous = read_history([path])
            first_id = max((op.op_id for op in previous), default=-1) + 1
        self._lines = JsonLinesWriter(path)
        self._op_ids = itertools.count(first_id)

    def invoke(
        self,
        f: OpF,
        topic: str,
        partition: int,
        *,
        value: str | None = None,
        offset: int | None = None,
        acks: int | None = None,
    ) -> HistoryOp:
        """Write and return the `invoke` line of a new operation (allocates its op id)."""
        with self._lock:
            op_id = next(self._op_ids)
        op = HistoryOp(
            type="invoke",
            f=f,
            process=self.process,
            time_ns=self._clock_ns(),
            wall_ms=self._wall_ms(),
            topic=topic,
            partition=partition,
            offset=offset,
            value=value,
            error=None,
            op_id=op_id,
            acks=acks,
        )
        self.write(op)
        return op

    def complete(
        self,
        invoked: HistoryOp,
        type: Completion,
        *,
        offset: int | None = None,
        error: str | None = None,
        attempts: int = 0,
        attempts_unknown: int = 0,
        records: tuple[tuple[int, str], ...] | None = None,
    ) -> HistoryOp:
        """Write and return the completion of `invoked` (same process, op id, partition, value)."""
        op = invoked._replace(
            type=type,
            time_ns=self._clock_ns(),
            wall_ms=self._wall_ms(),
            offset=offset,
            error=error,
            attempts=attempts,
            attempts_unknown=attempts_unknown,
            records=records,
        )
        self.write(op)
        return op

    def write(self, op: HistoryOp) -> None:
        """Append one line and flush it."""
        with self._lock:
            self._counts[(op.f, op.type)] += 1
        self._lines.append(op.to_json())

    def now_ns(self) -> int:
        """The writer's clock: the `time_ns` a line made now would carry."""
        return self._clock_ns()

    def counts(self) -> dict[tuple[str, str], int]:
        """Lines written so far by `(f, type)`, e.g. `("send", "ok")`."""
        with self._lock:
            return dict(self._counts)

    def close(self) -> None:
        """Flush to disk and close; later writes are counted but not stored."""
        self._lines.close()

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
