"""Test double for `PartitionLog`, shipped beside it (STYLE rule 13).

`InMemoryPartitionLog` has the public methods of `PartitionLog` and gives the same answers,
with no files: a list of records, where each batch starts, the epoch cache derived from
the records' epochs, and a high watermark. Use it in tests of code that drives a log
(replica fetchers, the request handler); the storage tests also use it as the model the
real log must equal.

Not modelled: segments, recovery, checkpoint timing. `close()` only forbids further calls;
`reopen()` stands for closing and opening the directory again (nothing is lost).

Threads: every method is safe from any thread (one lock), like `PartitionLog`'s.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence

from broker_node.storage.appends import follower_append_problem, leader_append_problem
from broker_node.storage.epoch_cache import UNDEFINED_EPOCH, EpochEntry, end_offset_for
from broker_node.storage.errors import LogError, OffsetOutOfRangeError
from broker_node.storage.record import (
    Record,
    encode_records,
    encoded_size,
    scan_batches,
    split_batches,
)

__all__ = ["InMemoryPartitionLog"]


class InMemoryPartitionLog:
    """A partition log in memory with `PartitionLog`'s behaviour."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._records: list[Record] = []
        #: the base offset of every batch, ascending
        self._batch_starts: list[int] = []
        self._high_watermark = 0
        self._closed = False
        #: How many times `sync` was called.
        self.syncs = 0

    @property
    def records(self) -> list[Record]:
        """Every record, in offset order (a copy)."""
        with self._lock:
            return list(self._records)

    @property
    def log_start_offset(self) -> int:
        """Always 0: nothing deletes the head of the log."""
        return 0

    @property
    def log_end_offset(self) -> int:
        """The offset the next record gets."""
        with self._lock:
            self._check_open()
            return len(self._records)

    def offsets(self) -> tuple[int, int, int]:
        """(log start offset, log end offset, high watermark), read together."""
        with self._lock:
            self._check_open()
            return 0, len(self._records), self._high_watermark

    def append_as_leader(
        self, records: Sequence[tuple[bytes | None, bytes, int]], leader_epoch: int
    ) -> tuple[int, int]:
        """As `PartitionLog.append_as_leader`."""
        with self._lock:
            self._check_open()
            problem = leader_append_problem(leader_epoch, self.latest_epoch())
            if problem is not None:
                raise LogError(problem)
            first = len(self._records)
            if records:
                self._batch_starts.append(first)
            for i, (key, value, timestamp_ms) in enumerate(records):
                self._records.append(Record(first + i, leader_epoch, timestamp_ms, key, value))
            return first, len(self._records) - 1

    def append_as_follower(self, records: Sequence[Record]) -> None:
        """As `PartitionLog.append_as_follower` (a batch for each run of one epoch)."""
        starts = [
            r.offset
            for before, r in zip([None, *records], records, strict=False)
            if before is None or before.leader_epoch != r.leader_epoch
        ]
        self._append_batches(records, starts)

    def append_encoded_as_follower(self, data: bytes) -> None:
        """As `PartitionLog.append_encoded_as_follower`."""
        headers = scan_batches(data)
        records = split_batches(data)[0]
        starts = [header.base_offset for header in headers]
        end = self.log_end_offset
        if headers and headers[0].base_offset < end < headers[0].next_offset:
            records = [r for r in records if r.offset >= end]  # the first batch's tail
            starts[0] = end
        self._append_batches(records, starts)

    def _append_batches(self, records: Sequence[Record], starts: list[int]) -> None:
        with self._lock:
            self._check_open()
            problem = follower_append_problem(records, len(self._records), self.latest_epoch())
            if problem is not None:
                raise LogError(problem)
            self._records.extend(records)
            self._batch_starts += starts

    def read_encoded(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> tuple[bytes, int]:
        """As `PartitionLog.read_encoded`: whole batches."""
        with self._lock:
            end = self._read_end(start_offset, max_offset)
            if max_records <= 0:
                return b"", 0
            chunks: list[bytes] = []
            count = used = 0
            starts = self._batch_starts
            i = max(bisect.bisect_right(starts, start_offset) - 1, 0)
            ends = [*starts[i + 1 :], len(self._records)]
            for base, after in zip(starts[i:], ends, strict=False):
                if after <= start_offset:
                    continue
                if base >= end or after > end:
                    break
                batch = encode_records(self._records[base:after])[0]
                over = count + after - base > max_records or used + len(batch) > max_bytes
                if over and chunks:
                    break
                chunks.append(batch)
                count += after - base
                used += len(batch)
            return b"".join(chunks), count

    def read(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> list[Record]:
        """As `PartitionLog.read` (sizes are the records' encoded sizes)."""
        with self._lock:
            end = max(self._read_end(start_offset, max_offset), start_offset)
            result: list[Record] = []
            used = 0
            for record in self._records[start_offset:end]:
                size = encoded_size(record.key, record.value)
                if len(result) >= max_records or (result and used + size > max_bytes):
                    break
                result.append(record)
                used += size
            return result

    def batch_start(self, offset: int) -> int:
        """As `PartitionLog.batch_start`."""
        with self._lock:
            self._check_open()
            if offset < 0:
                raise OffsetOutOfRangeError(offset, 0, len(self._records))
            if offset >= len(self._records):
                return len(self._records)
            return self._batch_starts[bisect.bisect_right(self._batch_starts, offset) - 1]

    def truncate_to(self, offset: int) -> None:
        """As `PartitionLog.truncate_to`: before the batch holding `offset`."""
        with self._lock:
            offset = self.batch_start(offset)
            del self._records[offset:]
            del self._batch_starts[bisect.bisect_left(self._batch_starts, offset) :]
            self._high_watermark = min(self._high_watermark, len(self._records))

    def latest_epoch(self) -> int:
        """As `PartitionLog.latest_epoch`."""
        with self._lock:
            entries = self.epoch_entries()
            return entries[-1].epoch if entries else UNDEFINED_EPOCH

    def epoch_entries(self) -> list[EpochEntry]:
        """Each epoch that wrote records and its first offset, derived from the records."""
        with self._lock:
            self._check_open()
            entries: list[EpochEntry] = []
            for record in self._records:
                if not entries or record.leader_epoch > entries[-1].epoch:
                    entries.append(EpochEntry(record.leader_epoch, record.offset))
            return entries

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """As `PartitionLog.end_offset_for_epoch`."""
        with self._lock:
            return end_offset_for(self.epoch_entries(), epoch, len(self._records))

    def epoch_start_offset(self, epoch: int) -> int | None:
        """As `PartitionLog.epoch_start_offset`."""
        with self._lock:
            starts = {entry.epoch: entry.start_offset for entry in self.epoch_entries()}
            return starts.get(epoch)

    @property
    def high_watermark(self) -> int:
        """As `PartitionLog.high_watermark`."""
        with self._lock:
            self._check_open()
            return self._high_watermark

    def set_high_watermark(self, hw: int) -> None:
        """As `PartitionLog.set_high_watermark`, clamped to [0, LEO]."""
        with self._lock:
            self._check_open()
            self._high_watermark = min(max(hw, 0), len(self._records))

    def flush(self) -> None:
        """Nothing to write."""
        with self._lock:
            self._check_open()

    def sync(self) -> None:
        """Nothing to write; counted in `syncs`."""
        with self._lock:
            self._check_open()
            self.syncs += 1

    def close(self) -> None:
        """Forbid further calls (idempotent)."""
        with self._lock:
            self._closed = True

    def reopen(self) -> None:
        """Allow calls again, as opening the directory again would."""
        with self._lock:
            self._closed = False

    def delete(self) -> None:
        """Close and forget every record."""
        with self._lock:
            self._records.clear()
            self._batch_starts.clear()
            self._high_watermark = 0
            self._closed = True

    def _read_end(self, start_offset: int, max_offset: int | None) -> int:
        """Where a read from `start_offset` stops; `OffsetOutOfRangeError` outside the log."""
        self._check_open()
        end = len(self._records)
        if not 0 <= start_offset <= end:
            raise OffsetOutOfRangeError(start_offset, 0, end)
        return end if max_offset is None else min(end, max_offset)

    def _check_open(self) -> None:
        if self._closed:
            raise LogError("the log is closed")
