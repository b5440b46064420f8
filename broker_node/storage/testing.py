"""Test double for `PartitionLog`, shipped beside it (STYLE rule 13).

`InMemoryPartitionLog` has the public methods of `PartitionLog` and gives the same answers,
with no files: a list of records, the epoch cache derived from the records' epochs, and a
high watermark. Use it in tests of code that drives a log (replica fetchers, the request
handler); the storage tests also use it as the model the real log must equal.

Not modelled: segments, recovery, checkpoint timing. `close()` only forbids further calls;
`reopen()` stands for closing and opening the directory again (nothing is lost).

Threads: every method is safe from any thread (one lock), like `PartitionLog`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from broker_node.storage.appends import follower_append_problem, leader_append_problem
from broker_node.storage.epoch_cache import UNDEFINED_EPOCH, EpochEntry, end_offset_for
from broker_node.storage.errors import LogError, OffsetOutOfRangeError
from broker_node.storage.record import Record, encode_record, encoded_size, split_records

__all__ = ["InMemoryPartitionLog"]


class InMemoryPartitionLog:
    """A partition log in memory with `PartitionLog`'s behaviour."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._records: list[Record] = []
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
            for i, (key, value, timestamp_ms) in enumerate(records):
                self._records.append(Record(first + i, leader_epoch, timestamp_ms, key, value))
            return first, len(self._records) - 1

    def append_as_follower(self, records: Sequence[Record]) -> None:
        """As `PartitionLog.append_as_follower`."""
        with self._lock:
            self._check_open()
            problem = follower_append_problem(records, len(self._records), self.latest_epoch())
            if problem is not None:
                raise LogError(problem)
            self._records.extend(records)

    def append_encoded_as_follower(self, data: bytes) -> None:
        """As `PartitionLog.append_encoded_as_follower`."""
        self.append_as_follower(split_records(data)[0])

    def read_encoded(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> tuple[bytes, int]:
        """As `PartitionLog.read_encoded`."""
        records = self.read(start_offset, max_offset, max_records, max_bytes)
        return b"".join(encode_record(r) for r in records), len(records)

    def read(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> list[Record]:
        """As `PartitionLog.read` (sizes are the records' encoded sizes)."""
        with self._lock:
            self._check_open()
            end = len(self._records)
            if not 0 <= start_offset <= end:
                raise OffsetOutOfRangeError(start_offset, 0, end)
            if max_offset is not None:
                end = max(min(end, max_offset), start_offset)
            result: list[Record] = []
            used = 0
            for record in self._records[start_offset:end]:
                size = encoded_size(record.key, record.value)
                if len(result) >= max_records or (result and used + size > max_bytes):
                    break
                result.append(record)
                used += size
            return result

    def truncate_to(self, offset: int) -> None:
        """As `PartitionLog.truncate_to`."""
        with self._lock:
            self._check_open()
            if offset < 0:
                raise OffsetOutOfRangeError(offset, 0, len(self._records))
            del self._records[offset:]
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
            self._high_watermark = 0
            self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise LogError("the log is closed")
