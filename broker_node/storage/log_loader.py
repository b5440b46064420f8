"""Opening a partition log directory: load the segments and recover what a crash left.

`load_log` runs Kafka's recovery, simplified:

1. delete leftover `*.tmp` files (half-written checkpoints or indexes) and indexes whose
   log file is gone; refuse a directory whose segments are in the earlier per-record
   format (`LegacyLogFormatError`, before anything is truncated);
2. open every segment but the last as sealed (batches trusted, index checked against the
   log and rebuilt if missing or inconsistent);
3. validate each batch of the last segment (length, CRC, record structure, offset
   sequence) and truncate the file before the first bad one, so a torn or corrupt last
   batch goes whole; rebuild its index;
4. check that the segments' offsets are contiguous;
5. load the leader-epoch checkpoint and drop entries at or past the recovered log end;
   a checkpoint that is missing, malformed, or misses an epoch of the last segment's
   records is rebuilt from every record (each record carries its epoch);
6. load the high-watermark checkpoint (missing or empty, as a power loss leaves one
   written without fsync: the log start offset) and clamp it to the log. A malformed one
   cannot be rebuilt: `CorruptLogError`.

Threads: runs on the thread constructing the `PartitionLog`, before the log is shared.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from broker_node.storage.checkpoints import (
    HW_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT,
    TMP_SUFFIX,
    decode_epoch_checkpoint,
    decode_hw_checkpoint,
)
from broker_node.storage.epoch_cache import LeaderEpochCache
from broker_node.storage.errors import CorruptLogError, LegacyLogFormatError
from broker_node.storage.record import BATCH_HEADER_BYTES, Record, legacy_head
from broker_node.storage.segment import INDEX_SUFFIX, LOG_SUFFIX, LogSegment, segment_base_offset

__all__ = ["LoadedLog", "load_log"]

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class LoadedLog:
    """What `load_log` found; `epochs_changed` says the epoch checkpoint needs rewriting."""

    segments: list[LogSegment]
    epochs: LeaderEpochCache
    epochs_changed: bool
    high_watermark: int
    truncated_bytes: int
    #: The directory did not exist: nothing was loaded, and nothing is on disk yet.
    fresh: bool = False


def load_log(
    directory: Path, index_interval_bytes: int, fsync: bool, absent: bool = False
) -> LoadedLog:
    """Open and recover the log in `directory`. A missing directory (or one the caller
    knows is `absent`, sparing the look) holds nothing to recover: one empty segment, no
    epochs, the high watermark at 0 (`fresh`: the directory is created by the log's first
    write, and its checkpoints when they change)."""
    if absent or not directory.exists():
        segment = LogSegment.create(directory, 0, index_interval_bytes)
        return LoadedLog([segment], LeaderEpochCache(), False, 0, 0, fresh=True)
    _remove_debris(directory)
    bases = sorted(
        base
        for base in (segment_base_offset(path.name) for path in directory.iterdir())
        if base is not None
    )
    _refuse_legacy(directory, bases)
    truncated = 0
    if not bases:
        segments = [LogSegment.create(directory, 0, index_interval_bytes)]
    else:
        segments = [
            LogSegment.open_sealed(directory, base, index_interval_bytes, fsync)
            for base in bases[:-1]
        ]
        last, truncated = LogSegment.recover(directory, bases[-1], index_interval_bytes, fsync)
        segments.append(last)
        if truncated:
            _log.warning(
                "%s: truncated %d bytes of torn or corrupt batches", last.log_path, truncated
            )
    for before, after in itertools.pairwise(segments):
        if before.next_offset != after.base_offset:
            raise CorruptLogError(
                f"{directory}: segment {before.base_offset} ends at {before.next_offset} "
                f"but the next segment starts at {after.base_offset}"
            )
    log_end_offset = segments[-1].next_offset
    epochs, epochs_changed = _load_epochs(directory, segments, log_end_offset)
    log_start_offset = segments[0].base_offset
    high_watermark = _load_high_watermark(directory, log_start_offset)
    high_watermark = min(max(high_watermark, log_start_offset), log_end_offset)
    return LoadedLog(segments, epochs, epochs_changed, high_watermark, truncated)


def _refuse_legacy(directory: Path, bases: list[int]) -> None:
    """`LegacyLogFormatError` if a segment starts with a record of the per-record format
    (recovery would take it for a torn batch and truncate the log to nothing)."""
    for base in bases:
        path = directory / f"{base:020d}{LOG_SUFFIX}"
        with open(path, "rb") as file:
            head = file.read(BATCH_HEADER_BYTES)
        if legacy_head(head, base):
            raise LegacyLogFormatError(
                f"{directory}: {path.name} is in the per-record log format this broker no "
                "longer reads (one CRC per record, before record batches); move the "
                "directory away (the replica then copies the log from its leader) or run "
                "the broker version that wrote it"
            )


def _remove_debris(directory: Path) -> None:
    logs = {path.stem for path in directory.glob(f"*{LOG_SUFFIX}")}
    for path in directory.iterdir():
        orphan_index = path.suffix == INDEX_SUFFIX and path.stem not in logs
        if path.is_file() and (path.name.endswith(TMP_SUFFIX) or orphan_index):
            path.unlink()


def _load_epochs(
    directory: Path, segments: list[LogSegment], log_end_offset: int
) -> tuple[LeaderEpochCache, bool]:
    path = directory / LEADER_EPOCH_CHECKPOINT
    try:
        cache = LeaderEpochCache(decode_epoch_checkpoint(path.read_bytes(), path))
        changed = cache.truncate_from_end(log_end_offset)
        if not _learn_epochs(cache, segments[-1].records()):
            return cache, changed
        _log.warning("%s misses epochs of the last segment; rebuilding it from the log", path)
    except FileNotFoundError:
        pass
    except (CorruptLogError, ValueError) as exc:
        # ValueError: the checkpoint contradicts the epochs of the last segment's records.
        _log.warning("%s: %s; rebuilding the leader epoch cache from the log", path, exc)
    cache = LeaderEpochCache()
    _learn_epochs(cache, (record for segment in segments for record in segment.records()))
    return cache, True


def _learn_epochs(cache: LeaderEpochCache, records: Iterable[Record]) -> bool:
    """Assign every newer epoch met in `records` (as appends do); return whether any."""
    changed = False
    for record in records:
        if record.leader_epoch > cache.latest_epoch:
            changed |= cache.assign(record.leader_epoch, record.offset)
    return changed


def _load_high_watermark(directory: Path, log_start_offset: int) -> int:
    path = directory / HW_CHECKPOINT
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return log_start_offset
    if not data.strip():
        # a checkpoint renamed into place whose data a power loss took (written without
        # fsync): no entry, as Kafka reads an empty checkpoint file
        _log.warning("%s is empty; the high watermark starts at the log start", path)
        return log_start_offset
    return decode_hw_checkpoint(data, path)
