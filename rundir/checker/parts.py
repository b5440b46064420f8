"""The history checker over a history too long to judge at once (`check_in_parts`): the
history files split by partition into buckets on disk (`rundir.checker.spill`), each
bucket judged by the streaming checker (`ChecksFold`, `QueueFold`) with its own share of
the final read, its per-record state dropped before the next bucket, and the buckets'
findings merged into the verdict the whole history gives. Reads and writes files in a
scratch directory, judges on the calling thread.

Every class and check is judged per partition, so a bucket of partitions judges them as
the whole history does; what spans partitions is merged: the final read's start (the
earliest invoke of its process, found while splitting), the findings (in partition
order, or for `lost_writes` in history order, by each operation's place in the history),
the counts, the worst lag (the first in history order of the longest) and the count of
acknowledged values no poll has read, whose changes each bucket writes to a file of its
own and which are replayed in history order at the end.

Resident memory follows one bucket's records (about `bucket_bytes` of history, or the
largest partition's when one partition holds more), the operations in flight and what
is found, not the history's length; the disk holds a copy of the history.
"""

from __future__ import annotations

import gc
import heapq
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from domain import TopicPartition
from rundir.checker.final_index import FinalIndex, final_index_of
from rundir.checker.history_fold import fold_history
from rundir.checker.queue import QueueParts, QueuePolicy, queue_parts
from rundir.checker.queue_fold import QueueFold, UnseenCount
from rundir.checker.spill import Spill, column_chunks, spill_history
from rundir.checker.stream_checks import ChecksFold, lost_writes_note
from rundir.errors import RunDirError
from rundir.history import history_path
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = ["OutsideItsFile", "check_in_parts"]

#: Unseen-count changes read back at a time: (time, file, line, delta), 8 bytes each.
_CHUNK = 4 * 512


class OutsideItsFile(RunDirError):
    """Lines of the final read's process were found outside its own file."""


def check_in_parts(
    paths: Sequence[Path],
    buckets: int,
    policy: QueuePolicy,
    final_process: str,
    scratch: Path | None = None,
) -> RunVerdict:
    """`rundir.checker.check` over the history files `paths` and the final read rebuilt
    from the polls of `final_process`, judged in `buckets` buckets of partitions split
    into a temporary directory under `scratch` ($TMPDIR when None)."""
    own = [i for i, p in enumerate(paths) if p == history_path(p.parent, final_process)]
    with tempfile.TemporaryDirectory(prefix="checker-", dir=scratch) as directory:
        spill = spill_history(paths, Path(directory), buckets, own, final_process)
        merged = _Merged()
        for bucket in range(buckets):
            merged.add(_judge(spill, bucket, policy, final_process))
            gc.collect()  # the bucket's state, cycles included, before the next one's
        return merged.verdict()


@dataclass(slots=True)
class _Part:
    """What one bucket found: the checks' results (and each lost write's place), the
    queue classes' parts, and what spans partitions."""

    results: tuple[InvariantResult, ...]
    lost_at: list[object]
    not_judged: tuple[int, int, int]
    unread: tuple[TopicPartition, ...]
    partitions: dict[str, TopicPartition]
    counts: Counter[tuple[str, str]]
    queue: QueueParts
    worst_lag: tuple[int, str, str, str, str] | None
    worst_lag_at: Any
    unseen: Path | None


def _judge(spill: Spill, bucket: int, policy: QueuePolicy, final_process: str) -> _Part:
    own = (op for i in spill.own for _, _, _, op in spill.file_ops(i, bucket))
    index, lines = final_index_of(own, final_process)
    index = FinalIndex(spill.final_started or 0, index.partitions)
    checks, queue = ChecksFold(index), QueueFold(index.partitions)
    unseen = _UnseenWriter(spill.directory / f"unseen-{bucket}.bin")
    queue.unseen_log = unseen.column
    counts: Counter[tuple[str, str]] = Counter()
    with unseen:
        # each operation with its own place, (time_ns, file, line, op)
        mine = fold_history(spill.ops(bucket), checks, queue, counts, final_process)
        if mine != lines:
            raise OutsideItsFile(f"{mine} lines of {final_process}, {lines} in its file")
        checks.end()
        parts = queue_parts(queue, index, policy)
    named = {str(tp): tp for tp in (*index.partitions, *_fed(queue))}
    return _Part(
        checks.results(),
        checks.lost_at,
        checks.not_judged(),
        checks.unread_partitions(),
        named,
        counts,
        parts,
        queue.worst_lag,
        queue.worst_lag_at,
        unseen.path if unseen.written else None,
    )


def _fed(queue: QueueFold) -> Iterator[TopicPartition]:
    return (TopicPartition(*key) for key in queue.partitions)


class _UnseenWriter:
    """One bucket's changes of the unseen count, `(time, file, line, delta)`, kept in a
    column while the bucket is judged (they follow its records), then written out."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written = False
        #: the changes, four integers each (`QueueFold.unseen_log`)
        self.column = array("q")

    def __enter__(self) -> _UnseenWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.column:
            with open(self.path, "wb") as file:
                self.column.tofile(file)
            self.written = True
        del self.column[:]


def _unseen_changes(path: Path) -> Iterator[tuple[int, int, int, int]]:
    """The changes a bucket wrote, in its order (its history order), a chunk at a time."""
    for chunk in column_chunks(path, _CHUNK):
        quads = iter(chunk)
        yield from zip(quads, quads, quads, quads, strict=True)


@dataclass(slots=True)
class _Merged:
    """The buckets' findings so far, merged as each bucket ends (so that what is held
    follows the findings, not the number of buckets): each check's violations with where
    the whole history's result puts them, the queue classes' parts, the counts, the
    worst lag and the files of the unseen count's changes."""

    found: dict[str, list[tuple[Any, Violation]]] = field(default_factory=dict)
    checked: Counter[str] = field(default_factory=Counter)
    not_judged: list[int] = field(default_factory=lambda: [0, 0, 0])
    unread: set[TopicPartition] = field(default_factory=set)
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    queue: QueueParts = field(default_factory=QueueParts.empty)
    worst: tuple[tuple[int, str, str, str, str], Any] | None = None
    unseen: list[Path] = field(default_factory=list)

    def add(self, part: _Part) -> None:
        """One more bucket."""
        for result in part.results:
            found = self.found.setdefault(result.name, [])
            self.checked[result.name] += result.checked
            if result.name == "lost_writes":
                found.extend(zip(part.lost_at, result.violations, strict=True))
            else:
                found.extend((_key(result.name, v, part.partitions), v) for v in result.violations)
        self.not_judged = [a + b for a, b in zip(self.not_judged, part.not_judged, strict=True)]
        self.unread.update(part.unread)
        self.counts.update(part.counts)
        self.queue.merge(part.queue)
        lag = part.worst_lag
        if lag is not None and (
            self.worst is None or (-lag[0], part.worst_lag_at) < (-self.worst[0][0], self.worst[1])
        ):
            self.worst = (lag, part.worst_lag_at)
        if part.unseen is not None:
            self.unseen.append(part.unseen)

    def verdict(self) -> RunVerdict:
        """The verdict of the whole history."""
        unseen = UnseenCount()
        for time_ns, _, _, delta in heapq.merge(*map(_unseen_changes, self.unseen)):
            unseen.change(delta, time_ns)
        verdict = self.queue.verdict(unseen, self.worst[0] if self.worst else None)
        return RunVerdict(
            self._checks() + verdict.results,
            tuple(sorted(self.unread)),
            {f"{f} {t}": n for (f, t), n in self.counts.items()},
            verdict.stats,
        )

    def _checks(self) -> tuple[InvariantResult, ...]:
        """`ChecksFold.results` of the whole history, in `CHECKS` order."""
        results = []
        for name, found in self.found.items():
            found.sort(key=itemgetter(0))
            note = lost_writes_note(*self.not_judged) if name == "lost_writes" else ""
            violations = tuple(v for _, v in found)
            results.append(InvariantResult(name, violations, self.checked[name], note))
        return tuple(results)


def _key(name: str, v: Violation, named: dict[str, TopicPartition]) -> tuple[Any, ...]:
    """Where `ChecksFold.results` puts the violation `v` of check `name`."""
    tp = named[v.subject]
    if name in ("reordering", "offsets_monotonic"):
        return (v.process, tp)
    if name == "vanished_reads":
        return (tp, v.offsets[0])
    if name in ("failed_writes_read", "unexpected_values"):
        return (tp, v.value)
    return (tp,)
