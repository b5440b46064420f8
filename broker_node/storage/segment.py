"""`LogSegment`: one `<base offset, 20 digits>.log` file of record batches and its index.

A segment holds the whole batches of the contiguous records from its base offset to
`next_offset` (exclusive); no batch spans two segments; index entries point at batches.
Only the last (active) segment of a log is appended to; it keeps its file open. Older
segments are opened for the length of each read. A new segment touches the disk only at
its first append, which creates its log file (and its index, at the first index entry),
and its paths are built when first used: a broker told to host thousands of new
partitions creates no file for them, and an empty segment on disk (no file) is what
recovery makes of a missing one anyway.

Threads: not thread-safe; only `PartitionLog`, holding its lock, calls it.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from broker_node.storage.errors import CorruptLogError, InvalidRecordError
from broker_node.storage.offset_index import (
    OffsetIndex,
    index_entry_due,
    parse_index,
)
from broker_node.storage.record import (
    BATCH_HEADER_BYTES,
    BatchHeader,
    Record,
    batch_header,
    decode_batch,
    encoded_size,
)
from broker_node.storage.segment_scan import index_matches, scan_batch_bytes, scan_headers

__all__ = ["INDEX_SUFFIX", "LOG_SUFFIX", "LogSegment", "segment_base_offset"]

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
_BASE_DIGITS = 20
#: Append boundaries (offset -> position) a segment remembers for reads that start there.
_BOUNDARIES_KEPT = 64


def segment_base_offset(name: str) -> int | None:
    """The base offset a segment's log file name encodes, None for any other file."""
    stem, dot, suffix = name.partition(".")
    if dot + suffix != LOG_SUFFIX or len(stem) != _BASE_DIGITS or not stem.isdigit():
        return None
    return int(stem)


class LogSegment:
    """The records [base_offset, next_offset) of a log, in one file."""

    def __init__(
        self, directory: Path, base_offset: int, index_interval_bytes: int, size: int
    ) -> None:
        self.base_offset = base_offset
        self._directory = directory
        self.size = size
        self.next_offset = base_offset
        self._index_interval_bytes = index_interval_bytes
        self._file: BinaryIO | None = None
        self._active = False
        #: offset -> position of recent append boundaries (`_remember_boundary`)
        self._boundaries: dict[int, int] = {}

    @functools.cached_property
    def log_path(self) -> Path:
        """The segment's log file."""
        return self._directory / f"{self.base_offset:0{_BASE_DIGITS}d}{LOG_SUFFIX}"

    @functools.cached_property
    def index(self) -> OffsetIndex:
        """The segment's offset index (replaced when rebuilt)."""
        path = self._directory / f"{self.base_offset:0{_BASE_DIGITS}d}{INDEX_SUFFIX}"
        return OffsetIndex(path, self.base_offset)

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, base_offset: int, index_interval_bytes: int) -> LogSegment:
        """A new, empty active segment; its files are created by its first append."""
        segment = cls(directory, base_offset, index_interval_bytes, 0)
        segment._active = True
        return segment

    @classmethod
    def open_sealed(
        cls, directory: Path, base_offset: int, index_interval_bytes: int, fsync: bool
    ) -> LogSegment:
        """An existing segment before the last: its batches are trusted; its index is
        checked against the log and rebuilt if missing or inconsistent. `next_offset` comes
        from the batch headers past the last index entry. `CorruptLogError` if a batch is
        bad."""
        segment = cls(directory, base_offset, index_interval_bytes, 0)
        segment.size = segment.log_path.stat().st_size
        try:
            entries = parse_index(segment.index.path.read_bytes(), base_offset)
        except FileNotFoundError:
            entries = None
        if entries is not None and segment._index_matches_log(entries):
            segment.index = OffsetIndex(segment.index.path, base_offset, entries)
            start_offset, start_position = entries[-1] if entries else (base_offset, 0)
            segment.next_offset = start_offset
            for _, header in segment._scan_headers(start_position):
                segment.next_offset = header.next_offset
        else:
            valid_end = segment._rebuild_index(fsync)
            if valid_end != segment.size:
                raise CorruptLogError(
                    f"{segment.log_path}: batches stop at byte {valid_end} of {segment.size}"
                )
        return segment

    @classmethod
    def recover(
        cls, directory: Path, base_offset: int, index_interval_bytes: int, fsync: bool
    ) -> tuple[LogSegment, int]:
        """The last segment, validated batch by batch: it is truncated before the first
        torn, corrupt or out-of-sequence batch (a batch goes whole), and its index is
        rebuilt. Returns the
        segment (open for appending) and the number of bytes truncated."""
        segment = cls(directory, base_offset, index_interval_bytes, 0)
        segment.size = segment.log_path.stat().st_size
        valid_end = segment._rebuild_index(fsync)
        truncated = segment.size - valid_end
        if truncated:
            with open(segment.log_path, "r+b") as file:
                file.truncate(valid_end)
            segment.size = valid_end
        segment.open_for_append()
        return segment, truncated

    def _rebuild_index(self, fsync: bool) -> int:
        """Rebuild the index from the batches, each checked whole (`decode_batch`); return
        where the valid batches end."""
        entries: list[tuple[int, int]] = []
        last_indexed = 0
        valid_end = 0
        self.next_offset = self.base_offset
        with contextlib.suppress(InvalidRecordError):
            for position, records, length in self._scan(0):
                if records[0].offset != self.next_offset:
                    break
                if index_entry_due(position, last_indexed, self._index_interval_bytes):
                    entries.append((self.next_offset, position))
                    last_indexed = position
                self.next_offset += len(records)
                valid_end = position + length
        self.index = OffsetIndex(self.index.path, self.base_offset, entries)
        self.index.rewrite(fsync)
        return valid_end

    def _index_matches_log(self, entries: Sequence[tuple[int, int]]) -> bool:
        """Whether every entry points at a batch with the entry's base offset."""
        with self._reader() as fd:
            return index_matches(fd, entries, self.size)

    # -- appending -----------------------------------------------------------------------

    def open_for_append(self) -> None:
        """Open the log file for appends (the segment becomes the active one)."""
        self._active = True
        if self._file is None:
            self._file = open(self.log_path, "a+b")  # noqa: SIM115 - closed by close()

    def append(
        self, first_offset: int, data: bytes, sizes: Sequence[int], counts: Sequence[int]
    ) -> None:
        """Write whole batches at `first_offset` (whose bytes are `data`: one batch of
        `counts[i]` records and `sizes[i]` bytes for each i) with one `write` and flush
        Python's buffer; then index them. `first_offset` must be `next_offset`. The first
        append of a new segment creates its log file."""
        if not self._active:
            raise RuntimeError(f"{self.log_path} is not open for appending")
        if first_offset != self.next_offset:
            raise ValueError(f"append at {first_offset}, the segment ends at {self.next_offset}")
        if self._file is None:
            self._file = open(self.log_path, "a+b")  # noqa: SIM115 - closed by close()
        new_entries: list[tuple[int, int]] = []
        last_indexed = self.index.last_position
        interval = self._index_interval_bytes
        position = start = self.size
        offset = first_offset
        for size, count in zip(sizes, counts, strict=True):
            if index_entry_due(position, last_indexed, interval):
                new_entries.append((offset, position))
                last_indexed = position
            position += size
            offset += count
        self._file.write(data)
        self._file.flush()
        self.size = position
        self.next_offset = offset
        self._remember_boundary(first_offset, start)
        self._remember_boundary(offset, position)
        self.index.append(new_entries)

    def _remember_boundary(self, offset: int, position: int) -> None:
        """Keep where the batch at `offset` starts: the last `_BOUNDARIES_KEPT` append
        boundaries, where a follower's next fetch starts."""
        boundaries = self._boundaries
        boundaries[offset] = position
        if len(boundaries) > _BOUNDARIES_KEPT:
            del boundaries[next(iter(boundaries))]

    # -- reading -------------------------------------------------------------------------

    def read(
        self, start_offset: int, end_offset: int, max_records: int, max_bytes: int, force: bool
    ) -> tuple[list[Record], int]:
        """Records from `start_offset` (in this segment) up to `end_offset` (exclusive),
        at most `max_records` of them and `max_bytes` of their sizes in their batches
        (`encoded_size`), but the first regardless of size when `force`. Only the batches
        holding them are decoded. Returns them and the bytes they take."""
        records: list[Record] = []
        used = 0
        if start_offset >= end_offset or max_records <= 0:
            return records, used
        _, position = self.index.lookup(start_offset)
        for batch_position, data in self._scan_bytes(position):
            header = batch_header(data[:BATCH_HEADER_BYTES], batch_position)
            if header.base_offset >= end_offset:
                break
            if header.next_offset <= start_offset:
                continue
            for record in decode_batch(data, batch_position):
                if record.offset < start_offset:
                    continue
                if record.offset >= end_offset:
                    return records, used
                length = encoded_size(record.key, record.value)
                if used + length > max_bytes and not (force and not records):
                    return records, used
                records.append(record)
                used += length
                if len(records) >= max_records:
                    return records, used
        return records, used

    def read_encoded(
        self, start_offset: int, end_offset: int, max_records: int, max_bytes: int, force: bool
    ) -> tuple[bytes, int, int]:
        """The whole batches from the one holding `start_offset` (in this segment) that end
        at or before `end_offset`, as the segment stores them (read with one `pread`,
        neither decoded nor checked: the reader checks them): as many as keep within
        `max_records` records and `max_bytes` bytes, but the first regardless of both when
        `force`. Returns the bytes, how many records they hold and the offset after them."""
        first = count = used = 0
        next_offset = start_offset
        if start_offset >= end_offset or max_records <= 0:
            return b"", 0, next_offset
        whole = self._read_to_end(start_offset, end_offset, max_records, max_bytes)
        if whole is not None:
            return whole
        _, position = self.index.lookup(start_offset)
        for batch_position, header in self._scan_headers(position):
            if header.next_offset <= start_offset:
                continue
            if header.next_offset > end_offset:
                break
            within = count + header.record_count <= max_records
            if not (within and used + header.size <= max_bytes) and not (force and count == 0):
                break
            if count == 0:
                first = batch_position
            used += header.size
            count += header.record_count
            next_offset = header.next_offset
        if count == 0:
            return b"", 0, next_offset
        with self._reader() as fd:
            data = os.pread(fd, used, first)
        if len(data) != used:
            raise InvalidRecordError(first, "file shorter than its size")
        return data, count, next_offset

    def _read_to_end(
        self, start_offset: int, end_offset: int, max_records: int, max_bytes: int
    ) -> tuple[bytes, int, int] | None:
        """`read_encoded` without a scan, when the read starts at a remembered append
        boundary and takes every batch to the segment's end within the limits (a follower
        that keeps up asks for exactly that): None when it does not."""
        position = self._boundaries.get(start_offset)
        if position is None or end_offset < self.next_offset:
            return None
        count = self.next_offset - start_offset
        used = self.size - position
        if count > max_records or used > max_bytes:
            return None
        with self._reader() as fd:
            data = os.pread(fd, used, position)
        if len(data) != used:
            raise InvalidRecordError(position, "file shorter than its size")
        return data, count, self.next_offset

    def _scan_headers(self, position: int) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each batch from `position` to the end of the segment,
        from the headers alone (`_scan` without decoding)."""
        if position >= self.size:  # nothing to read (a new segment may have no file yet)
            return
        with self._reader() as fd:
            yield from scan_headers(fd, position, self.size)

    def _scan_bytes(self, position: int) -> Iterator[tuple[int, bytes]]:
        """(position, bytes) of each whole batch from `position` to the end of the segment,
        unchecked past the header."""
        if position >= self.size:
            return
        with self._reader() as fd:
            yield from scan_batch_bytes(fd, position, self.size)

    def records(self) -> Iterator[Record]:
        """Every record of the segment, in order (`CorruptLogError` at a bad batch)."""
        for _, records, _ in self._scan(0):
            yield from records

    def _scan(self, position: int) -> Iterator[tuple[int, list[Record], int]]:
        """(position, records, length) of each batch from `position` to the end of the
        segment. Raises `InvalidRecordError` at the first torn or corrupt batch."""
        for batch_position, data in self._scan_bytes(position):
            yield batch_position, decode_batch(data, batch_position), len(data)

    @contextlib.contextmanager
    def _reader(self) -> Iterator[int]:
        """A file descriptor to `pread` from: the append handle, or a fresh one."""
        if self._file is not None:
            yield self._file.fileno()
            return
        fd = os.open(self.log_path, os.O_RDONLY)
        try:
            yield fd
        finally:
            os.close(fd)

    # -- truncation, durability, lifecycle -----------------------------------------------

    def batch_start(self, offset: int) -> int:
        """The base offset of the batch holding `offset` (`next_offset` at or past it)."""
        return self._batch_holding(offset)[0]

    def _batch_holding(self, offset: int) -> tuple[int, int]:
        """(base offset, position) of the batch holding `offset`, else the segment end."""
        if offset >= self.next_offset:
            return self.next_offset, self.size
        _, start = self.index.lookup(offset)
        for position, header in self._scan_headers(start):
            if header.next_offset > offset:
                return header.base_offset, position
        raise CorruptLogError(f"{self.log_path}: offset {offset} not found")

    def truncate_to(self, offset: int) -> None:
        """Remove the batch holding `offset` (which lies in this segment) and every later
        one: the segment then ends at `batch_start(offset)`."""
        if offset >= self.next_offset:
            return
        offset, position = self._batch_holding(offset)
        self.index.truncate_to(offset)
        self._boundaries = {o: p for o, p in self._boundaries.items() if o <= offset}
        self._boundaries[offset] = position
        if self._file is not None:
            self._file.flush()
            self._file.truncate(position)
        else:
            with open(self.log_path, "r+b") as file:
                file.truncate(position)
        self.size = position
        self.next_offset = offset

    def sync(self) -> None:
        """fsync the log and index files."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
        elif self.log_path.exists():
            with open(self.log_path, "rb") as file:
                os.fsync(file.fileno())
        self.index.sync()

    def close(self) -> None:
        """Close the file handles; reads still work (they open the file themselves). A
        closed segment takes no more appends."""
        self._active = False
        if self._file is not None:
            self._file.close()
            self._file = None
        self.index.close()

    def delete(self) -> None:
        """Close and remove both files."""
        self.close()
        self.log_path.unlink(missing_ok=True)
        self.index.path.unlink(missing_ok=True)
