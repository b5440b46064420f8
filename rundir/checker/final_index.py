"""The final read (`rundir.checker.index.FinalRead`) as the streaming checker looks it up:
per partition the values in offset order (`FinalRecords`, a sequence of `(offset, value)`
as `FinalRead` holds them) with where each value is, and its construction from the polls
of the process that made it, read apart before the rest of the history
(`final_index_of`). Pure; any thread.

Per record it keeps the value once (a list slot), its offset in an `array` (unless the
offsets are 0, 1, 2, ...) and one dict entry from the value to its position; a value at
several offsets also keeps the list of them.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from domain import TopicPartition
from rundir.checker.index import FinalRead
from rundir.history import HistoryOp

__all__ = ["FinalIndex", "FinalRecords", "final_index", "final_index_of"]


class FinalRecords(Sequence[tuple[int, str]]):
    """One partition's records of the final read, in offset order, with lookups."""

    __slots__ = ("_at", "_dense", "_offsets", "_values", "more", "where")

    def __init__(self, records: Iterable[tuple[int, str]]) -> None:
        self._offsets = array("q")
        self._values: list[str] = []
        #: each value's first position in the records
        self.where: dict[str, int] = {}
        #: the offsets of each value held at more than one
        self.more: dict[str, list[int]] = {}
        for offset, value in records:
            self._add(offset, value)
        n = len(self._values)
        self._dense = n == 0 or (self._offsets[0] == 0 and self._offsets[-1] == n - 1)
        #: offset -> value when the offsets are not increasing (a final read given by hand)
        self._at: dict[int, str] | None = None
        if any(a >= b for a, b in itertools.pairwise(self._offsets)):
            self._dense = False
            self._at = dict(zip(self._offsets, self._values, strict=True))
        if self._dense:
            self._offsets = array("q")

    def _add(self, offset: int, value: str) -> None:
        position = len(self._values)
        self._offsets.append(offset)
        self._values.append(value)
        first = self.where.setdefault(value, position)
        if first != position:
            self.more.setdefault(value, [self._offsets[first]]).append(offset)

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, i: int) -> tuple[int, str]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[int, str]]: ...
    def __getitem__(self, i: int | slice) -> tuple[int, str] | Sequence[tuple[int, str]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return (self.offset_at(i), self._values[i])

    def __iter__(self) -> Iterator[tuple[int, str]]:
        if self._dense:
            return enumerate(self._values)
        return zip(self._offsets, self._values, strict=True)

    def offset_at(self, position: int) -> int:
        """The offset of the record at `position`."""
        if position < 0:
            position += len(self._values)
        return position if self._dense else self._offsets[position]

    def value_of(self, position: int) -> str:
        """The value of the record at `position`."""
        return self._values[position]

    def dense_values(self) -> list[str] | None:
        """The values by offset when the offsets are 0, 1, 2, ... (else None): the value
        at offset `o` is `dense_values()[o]`."""
        return self._values if self._dense else None

    def value_at(self, offset: int) -> str | None:
        """The value the final read holds at `offset`, None when it holds none there."""
        if self._dense:
            return self._values[offset] if 0 <= offset < len(self._values) else None
        if self._at is not None:
            return self._at.get(offset)
        i = bisect_left(self._offsets, offset)
        if i < len(self._offsets) and self._offsets[i] == offset:
            return self._values[i]
        return None

    def offsets_of(self, value: str) -> list[int] | None:
        """The offsets at which the final read holds `value` (in offset order), or None."""
        position = self.where.get(value)
        if position is None:
            return None
        return self.more.get(value) or [self.offset_at(position)]


@dataclass(frozen=True, slots=True)
class FinalIndex:
    """The final read begun at `started_ns`, each partition's records as `FinalRecords`."""

    started_ns: int
    partitions: Mapping[TopicPartition, FinalRecords]


def final_index(final: FinalRead | FinalIndex) -> FinalIndex:
    """`final` as a `FinalIndex` (itself when it is one)."""
    if isinstance(final, FinalIndex):
        return final
    return FinalIndex(
        final.started_ns, {tp: FinalRecords(records) for tp, records in final.partitions.items()}
    )


def final_index_of(ops: Iterable[HistoryOp], process: str) -> tuple[FinalIndex, int]:
    """The final read rebuilt from the polls of `process` among `ops` (in history order),
    as `rundir.checker.final_read_from_history` rebuilds it (`final_from_polls`), and how
    many of `ops` were that process's (so a caller can tell that no other file held
    any). Keeps each partition's records once, as an offset -> value dict, not the polls."""
    fetches: dict[int, int | None] = {}
    parts: dict[TopicPartition, _Partial] = {}
    started: int | None = None
    seen = 0
    for op in ops:
        if op.process != process:
            continue
        seen += 1
        if op.type == "invoke":
            fetches[op.op_id] = op.offset
            started = op.time_ns if started is None else min(started, op.time_ns)
        elif op.f == "poll" and op.type == "ok":
            tp = TopicPartition(op.topic, op.partition)
            part = parts.get(tp)
            if part is None:
                part = parts[tp] = _Partial(op.offset or 0)
            records = op.records or ()
            part.records.update(records)
            fetch = fetches.get(op.op_id)
            after = records[-1][0] + 1 if records else (fetch or 0)
            part.reached = max(part.reached, after)
    partitions = {
        tp: FinalRecords((o, part.records[o]) for o in sorted(part.records) if o < part.target)
        for tp, part in parts.items()
        if part.reached >= part.target
    }
    return FinalIndex(started or 0, partitions), seen


@dataclass(slots=True)
class _Partial:
    """One partition's polls so far: the high watermark the first reported, the records
    read (the later poll's value where two read one offset) and how far they reached."""

    target: int
    records: dict[int, str] = field(default_factory=dict)
    reached: int = 0
