"""A log's segments, oldest first, as one sequence of record batches: appends that fill
the active segment and roll to new ones at the segment size, between batches
(`append_batches`), and reads that walk the segments from the one holding the start
offset, as decoded records (`read_records`) or as the whole batches the segments store
(`read_encoded_records`), each stopping at an end offset, a record count or a byte
budget, yet returning at least one record (one batch) when any is available. Called by
`PartitionLog` under its lock, on whatever thread holds it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from broker_node.storage.appends import split_for_segments
from broker_node.storage.checkpoints import fsync_directory
from broker_node.storage.errors import OffsetOutOfRangeError
from broker_node.storage.record import Record
from broker_node.storage.segment import LogSegment

_U32_MAX = (1 << 32) - 1


@dataclass(frozen=True, slots=True)
class SegmentSettings:
    """Where a log's segments live, how large one grows and how it is made durable;
    `ValueError` for a size out of range."""

    directory: Path
    segment_bytes: int
    index_interval_bytes: int
    fsync: bool

    def __post_init__(self) -> None:
        if not 0 < self.segment_bytes <= _U32_MAX:
            raise ValueError(f"segment_bytes must be in [1, {_U32_MAX}], not {self.segment_bytes}")
        if self.index_interval_bytes < 0:
            raise ValueError(f"index_interval_bytes must be >= 0, not {self.index_interval_bytes}")


def append_batches(
    segments: list[LogSegment],
    first_offset: int,
    data: bytes,
    sizes: Sequence[int],
    counts: Sequence[int],
    settings: SegmentSettings,
) -> None:
    """Append whole batches at `first_offset`... (`data`: one batch of `sizes[i]` bytes
    and `counts[i]` records for each i) to the active segment, rolling to new segments
    where `settings.segment_bytes` says; the log's directory exists."""
    per_segment = split_for_segments(sizes, segments[-1].size, settings.segment_bytes)
    if len(per_segment) == 1:
        segments[-1].append(first_offset, data, sizes, counts)
        return
    start = position = 0
    offset = first_offset
    for n, batches in enumerate(per_segment):
        if n:
            _roll(segments, settings)
        if batches:
            end = start + batches
            size = sum(sizes[start:end])
            segments[-1].append(
                offset, data[position : position + size], sizes[start:end], counts[start:end]
            )
            offset += sum(counts[start:end])
            start, position = end, position + size


def _roll(segments: list[LogSegment], settings: SegmentSettings) -> None:
    """Seal the active segment, fsynced whatever the flush policy (Kafka flushes a log up
    to a new segment when it rolls, so a lost page cache never leaves a hole in the
    middle of a log), and start the next one at its end."""
    active = segments[-1]
    active.sync()
    active.close()
    segments.append(
        LogSegment.create(settings.directory, active.next_offset, settings.index_interval_bytes)
    )
    if settings.fsync:
        fsync_directory(settings.directory)


def segment_index(segments: Sequence[LogSegment], offset: int) -> int:
    """Index of the segment holding `offset` (the last one for the log end)."""
    bases = [segment.base_offset for segment in segments]
    return max(bisect.bisect_right(bases, offset) - 1, 0)


def batch_start(segments: Sequence[LogSegment], offset: int) -> int:
    """The base offset of the batch holding `offset`, the log end when `offset` is at or
    past it; `OffsetOutOfRangeError` below the log start."""
    log_start, log_end = segments[0].base_offset, segments[-1].next_offset
    if offset < log_start:
        raise OffsetOutOfRangeError(offset, log_start, log_end)
    if offset >= log_end:
        return log_end
    return segments[segment_index(segments, offset)].batch_start(offset)


def read_records(
    segments: Sequence[LogSegment], start_offset: int, end: int, max_records: int, max_bytes: int
) -> list[Record]:
    """The records at `start_offset` up to `end` (exclusive) within the limits."""
    records: list[Record] = []
    used = 0
    for segment in segments[segment_index(segments, start_offset) :]:
        if start_offset >= end or len(records) >= max_records:
            break
        found, size = segment.read(
            start_offset, end, max_records - len(records), max_bytes - used, not records
        )
        records += found
        used += size
        if found:
            start_offset = found[-1].offset + 1
        if start_offset < segment.next_offset:
            break  # a limit stopped the read inside this segment
    return records


def read_encoded_records(
    segments: Sequence[LogSegment], start_offset: int, end: int, max_records: int, max_bytes: int
) -> tuple[bytes, int]:
    """The whole batches from the one holding `start_offset` that end by `end`, as
    stored (unchecked), within the limits yet at least one, and how many records they
    hold (`LogSegment.read_encoded`)."""
    chunks: list[bytes] = []
    count = used = 0
    for segment in segments[segment_index(segments, start_offset) :]:
        if start_offset >= end or count >= max_records:
            break
        data, found, start_offset = segment.read_encoded(
            start_offset, end, max_records - count, max_bytes - used, count == 0
        )
        chunks.append(data)
        count += found
        used += len(data)
        if start_offset < segment.next_offset:
            break  # a limit stopped the read inside this segment
    return b"".join(chunks), count
