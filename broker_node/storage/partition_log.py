"""`PartitionLog`: the on-disk log of one partition replica (Kafka's `Log`, simplified).

The directory holds `<base offset>.log` segments of record batches (`record`) with their
`<base offset>.index` sparse offset indexes, a `leader-epoch-checkpoint` and an
`hw-checkpoint`. Opening the directory recovers it (`log_loader`); appends and reads walk
its segments (`segment_list`), and the checkpoints are rewritten only when what they hold
changed (`checkpoint_files`). An append (one batch or more) is one `write` per segment and
a flush of Python's buffer, so a killed process loses nothing already appended; the files
are fsynced by `sync()` (a broker's flush policy), and by `flush()` and a segment roll
when opened with `fsync=True`.

Order of writes, so that any crash leaves a log that recovery accepts:
- append: epoch checkpoint (new epoch) -> batches -> offset index;
- truncate: delete whole segments from the last one back -> truncate the segment holding
  the offset, before the batch holding it -> epoch checkpoint -> high-watermark checkpoint;
- checkpoints are replaced atomically (temporary file + `os.replace`).

A rising high watermark is checkpointed at most once an interval, a falling one at once,
and on `flush()`/`close()`: a crash may lose a rise, never keep one above the log.

Threads: any thread; one `threading.RLock` serialises the public methods, so each call sees
and leaves a consistent log. After `close()` or `delete()` every method but those two
raises `LogError`; so does every method after a read or write failed with `OSError` (only
recovery, i.e. opening the directory again, can repair a partial write).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from broker_node.storage.appends import follower_batches_problem, leader_append_problem
from broker_node.storage.checkpoint_files import CheckpointFiles
from broker_node.storage.epoch_cache import EpochEntry
from broker_node.storage.errors import LogError, OffsetOutOfRangeError
from broker_node.storage.log_loader import load_log
from broker_node.storage.record import (
    Record,
    cut_batches,
    encode_batch,
    encode_records,
    scan_batches,
)
from broker_node.storage.segment_list import (
    SegmentSettings,
    append_batches,
    batch_start,
    read_encoded_records,
    read_records,
)

__all__ = ["PartitionLog"]


class PartitionLog:
    """The replicated log of one partition on this broker (thread-safe)."""

    def __init__(
        self,
        directory: Path,
        segment_bytes: int = 1 << 20,
        index_interval_bytes: int = 4096,
        fsync: bool = False,
        absent: bool = False,
        on_io_error: Callable[[OSError], None] | None = None,
        hw_checkpoint_interval_ms: int = 5_000,
    ) -> None:
        """Open or create the log in `directory` and recover it (see `log_loader`);
        `absent`: the caller knows the directory does not exist (a broker lists its data
        directory once, at start), so it is not looked for.

        `on_io_error` hears every `OSError` a later read or write meets, before it is
        raised (on the failing thread, under the log's lock, so it must only hand it on):
        a broker takes the whole log directory offline (`broker_node.log_dir_failure`).

        `hw_checkpoint_interval_ms`: Kafka's `replica.high.watermark.checkpoint.interval.ms`.

        `CorruptLogError` if the damage is beyond repair.
        """
        self._settings = SegmentSettings(directory, segment_bytes, index_interval_bytes, fsync)
        self._lock = threading.RLock()
        self._directory = directory
        self._fsync = fsync
        self._closed = False
        self._failure: str | None = None
        self._on_io_error = on_io_error
        loaded = load_log(directory, index_interval_bytes, fsync, absent)
        self._segments = loaded.segments
        self._epochs = loaded.epochs
        self._high_watermark = loaded.high_watermark
        #: Whether the directory exists; a new log makes it at its first write, so that
        #: thousands of partitions created at once and never written cost no directory.
        self._directory_made = not loaded.fresh
        self._checkpoints = CheckpointFiles(
            directory, fsync, self._make_directory, hw_checkpoint_interval_ms / 1000
        )
        self._checkpoints.after_recovery(loaded)

    # -- offsets -------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The log's directory."""
        return self._directory

    @property
    def log_start_offset(self) -> int:
        """The first offset the log holds (the base offset of its first segment)."""
        with self._lock:
            self._check_open()
            return self._segments[0].base_offset

    @property
    def log_end_offset(self) -> int:
        """The log end offset (LEO): the offset the next appended record gets."""
        with self._lock:
            self._check_open()
            return self._segments[-1].next_offset

    def offsets(self) -> tuple[int, int, int]:
        """(log start offset, log end offset, high watermark), read together under one
        acquisition of the lock (a leader checks all three for every partition of every
        follower's fetch)."""
        with self._lock:
            self._check_open()
            return (
                self._segments[0].base_offset,
                self._segments[-1].next_offset,
                self._high_watermark,
            )

    # -- appends -------------------------------------------------------------------------

    def append_as_leader(
        self, records: Sequence[tuple[bytes | None, bytes, int]], leader_epoch: int
    ) -> tuple[int, int]:
        """Append (key, value, timestamp_ms) records at consecutive offsets from the LEO,
        in `leader_epoch`, as one batch; return (first offset, last offset).

        A new epoch is cached as starting at the first offset; an epoch older than the
        latest cached one raises `LogError`. No records: nothing written, (LEO, LEO - 1).
        """
        with self._using_files():
            problem = leader_append_problem(leader_epoch, self._epochs.latest_epoch)
            if problem is not None:
                raise LogError(problem)
            first = self._segments[-1].next_offset
            if records:
                batch = encode_batch(first, leader_epoch, records)
                if self._epochs.assign(leader_epoch, first):
                    self._write_epoch_checkpoint()
                self._make_directory()
                sizes, counts = [len(batch)], [len(records)]
                append_batches(self._segments, first, batch, sizes, counts, self._settings)
            return first, first + len(records) - 1

    def append_as_follower(self, records: Sequence[Record]) -> None:
        """Append records copied from the leader, keeping their offsets and epochs.

        The first offset must be the LEO and the offsets contiguous; epochs must not go
        backwards. Otherwise `LogError`, and nothing is written. Each run of one epoch is
        one batch; every newer epoch met is cached as starting at its first record.
        """
        try:
            data = b"".join(encode_records(records))
        except ValueError as exc:
            raise LogError(str(exc)) from exc
        self._append_as_follower(data, cut=False)

    def append_encoded_as_follower(self, data: bytes) -> None:
        """`append_as_follower` of whole batches as the leader's `read_encoded` gives them:
        each CRC is checked (`InvalidRecordError`), none decoded, the bytes written as they
        came. A log ending inside the first batch (after a truncation the leader's epochs
        did not steer: bug switches `kip-101`, `kafka-6361`) takes its records from the log
        end as a batch (`cut_batches`), as the per-record Kafka those switches model did."""
        self._append_as_follower(data, cut=True)

    def _append_as_follower(self, data: bytes, cut: bool) -> None:
        with self._using_files():
            log_end = self._segments[-1].next_offset
            data = cut_batches(data, log_end) if cut else data
            batches = scan_batches(data)
            problem = follower_batches_problem(batches, log_end, self._epochs.latest_epoch)
            if problem is not None:
                raise LogError(problem)
            if not batches:
                return
            changed = False
            for batch in batches:
                changed |= self._epochs.assign(batch.leader_epoch, batch.base_offset)
            if changed:
                self._write_epoch_checkpoint()
            self._make_directory()
            sizes = [batch.size for batch in batches]
            counts = [batch.record_count for batch in batches]
            append_batches(self._segments, log_end, data, sizes, counts, self._settings)

    def _make_directory(self) -> None:
        """Create the log's directory before its first file."""
        if not self._directory_made:
            self._directory.mkdir(parents=True, exist_ok=True)
            self._directory_made = True

    # -- reads ---------------------------------------------------------------------------

    def read(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> list[Record]:
        """Records with start_offset <= offset < min(max_offset, LEO), at most
        `max_records` of them and `max_bytes` of their encoded size, yet at least one when
        any is available. `OffsetOutOfRangeError` if `start_offset` is below the log start
        or above the LEO; reading at the LEO returns [].
        """
        with self._using_files():
            end = self._read_end(start_offset, max_offset)
            return read_records(self._segments, start_offset, end, max_records, max_bytes)

    def read_encoded(
        self,
        start_offset: int,
        max_offset: int | None = None,
        max_records: int = 1000,
        max_bytes: int = 1 << 20,
    ) -> tuple[bytes, int]:
        """Whole batches as stored, unchecked (for `append_encoded_as_follower`): from the
        one holding `start_offset`, those ending by min(`max_offset`, LEO) within
        `max_records` records and `max_bytes` bytes, yet at least one, however large (as
        Kafka). Returns the bytes and how many records they hold (all the batches')."""
        with self._using_files():
            end = self._read_end(start_offset, max_offset)
            return read_encoded_records(self._segments, start_offset, end, max_records, max_bytes)

    def _read_end(self, start_offset: int, max_offset: int | None) -> int:
        """Where a read from `start_offset` stops (under the lock), checked in the log."""
        self._check_open()
        log_end = self._segments[-1].next_offset
        if not self._segments[0].base_offset <= start_offset <= log_end:
            raise OffsetOutOfRangeError(start_offset, self._segments[0].base_offset, log_end)
        return log_end if max_offset is None else min(max_offset, log_end)

    # -- truncation ----------------------------------------------------------------------

    def batch_start(self, offset: int) -> int:
        """Where `truncate_to(offset)` cuts the log (`segment_list.batch_start`)."""
        with self._using_files():
            return batch_start(self._segments, offset)

    def truncate_to(self, offset: int) -> None:
        """Remove the batch holding `offset` and all after it (whole segments past it are
        deleted): the LEO becomes `batch_start(offset)`, as Kafka truncates whole batches.
        Drop epoch entries from the new LEO on; clamp the high watermark to it. A no-op
        when `offset` >= LEO; `OffsetOutOfRangeError` below the log start."""
        with self._using_files():
            offset = batch_start(self._segments, offset)
            if offset >= self._segments[-1].next_offset:
                return
            while len(self._segments) > 1 and self._segments[-1].base_offset > offset:
                self._segments.pop().delete()
            active = self._segments[-1]
            active.truncate_to(offset)
            active.open_for_append()
            if self._epochs.truncate_from_end(offset):
                self._write_epoch_checkpoint()
            if self._high_watermark > offset:
                self._high_watermark = offset
                self._write_hw_checkpoint()

    # -- leader epochs -------------------------------------------------------------------

    def latest_epoch(self) -> int:
        """The newest leader epoch in the cache, UNDEFINED_EPOCH if none."""
        with self._lock:
            self._check_open()
            return self._epochs.latest_epoch

    def epoch_entries(self) -> list[EpochEntry]:
        """The epoch cache: each epoch and its start offset, ascending."""
        with self._lock:
            self._check_open()
            return self._epochs.entries

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetsForLeaderEpoch, as Kafka 2.8 answers it
        (`epoch_cache.end_offset_for` lists the cases)."""
        with self._lock:
            self._check_open()
            return self._epochs.end_offset_for(epoch, self._segments[-1].next_offset)

    def epoch_start_offset(self, epoch: int) -> int | None:
        """The start offset of `epoch` in the cache, None if it is not cached."""
        with self._lock:
            self._check_open()
            return self._epochs.start_offset_of(epoch)

    # -- high watermark ------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        """The high watermark: offsets below it are committed."""
        with self._lock:
            self._check_open()
            return self._high_watermark

    def set_high_watermark(self, hw: int) -> None:
        """Set the high watermark, clamped to [log start, LEO]. A rise is checkpointed at
        most once an interval (else at the next `flush()`), a fall at once."""
        with self._using_files():
            clamped = min(max(hw, self._segments[0].base_offset), self._segments[-1].next_offset)
            fell = clamped < self._high_watermark
            self._high_watermark = clamped
            if fell or self._checkpoints.hw_due():
                self._write_hw_checkpoint()

    # -- durability and lifecycle --------------------------------------------------------

    def flush(self) -> None:
        """Flush buffers (fsync the active segment when opened with `fsync=True`) and
        write both checkpoints. Without fsync, a log whose checkpoints hold what it knows
        returns at once, without the lock: a change missed here is one made just after
        the flush (a broker flushes every hosted log every few seconds)."""
        checkpoints = self._checkpoints
        if (
            not self._fsync
            and not self._closed
            and checkpoints.current(self._epochs, self._high_watermark)
        ):
            return
        with self._lock:
            self._check_open()
            if not self._fsync and checkpoints.current(self._epochs, self._high_watermark):
                return
        with self._using_files():
            if self._fsync:
                self._segments[-1].sync()
            self._write_epoch_checkpoint()
            self._write_hw_checkpoint()

    def sync(self) -> None:
        """fsync the active segment and its index (Kafka's flush after `flush.messages`)."""
        with self._using_files():
            self._segments[-1].sync()

    def close(self) -> None:
        """Flush and close the files. Idempotent."""
        with self._lock:
            if self._closed:
                return
            if self._failure is None:
                self.flush()
            for segment in self._segments:
                segment.close()
            self._closed = True

    def delete(self) -> None:
        """Close the log and remove its directory (StopReplica with delete)."""
        with self._lock:
            if not self._closed:
                for segment in self._segments:
                    segment.close()
                self._closed = True
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(self._directory)

    def _check_open(self) -> None:
        if self._failure is not None:
            raise LogError(f"{self._directory}: {self._failure}; open it again to recover")
        if self._closed:
            raise LogError(f"{self._directory}: the log is closed")

    @contextlib.contextmanager
    def _using_files(self) -> Iterator[None]:
        """Hold the lock for a call that reads or writes the files. An `OSError` fails the
        log (as Kafka takes the log directory offline): `on_io_error` hears it, it is
        re-raised, and later calls raise `LogError`."""
        with self._lock:
            self._check_open()
            try:
                yield
            except OSError as exc:
                self._failure = f"a read or write failed ({exc})"
                for segment in self._segments:
                    with contextlib.suppress(OSError):
                        segment.close()
                if self._on_io_error is not None:
                    self._on_io_error(exc)
                raise

    def _write_epoch_checkpoint(self) -> None:
        self._checkpoints.write_epochs(self._epochs)

    def _write_hw_checkpoint(self) -> None:
        self._checkpoints.write_hw(self._high_watermark)
