"""What a power loss leaves of a log written without fsync, and that opening it recovers
as Kafka does, never failing: segment files cut back to an earlier write (or empty), and
checkpoint files renamed into place but empty. Also the flush policy's `sync`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker_node.storage import LogError, PartitionLog
from broker_node.storage.checkpoints import HW_CHECKPOINT, LEADER_EPOCH_CHECKPOINT
from broker_node.storage.epoch_cache import EpochEntry
from broker_node.storage.segment import INDEX_SUFFIX, LOG_SUFFIX


def batch(n: int, start: int = 0) -> list[tuple[bytes | None, bytes, int]]:
    return [(None, f"{i:032d}".encode(), 1000 + i) for i in range(start, start + n)]


@pytest.fixture
def closed(tmp_path: Path) -> Path:
    """A log of 10 records in epoch 2 and 10 in epoch 5, HW 20, closed (checkpoints
    written)."""
    log = PartitionLog(tmp_path / "t-0", index_interval_bytes=64)
    log.append_as_leader(batch(10), 2)
    log.append_as_leader(batch(10, start=10), 5)
    log.set_high_watermark(20)
    log.close()
    return log.directory


def only(directory: Path, suffix: str) -> Path:
    (found,) = directory.glob(f"*{suffix}")
    return found


def test_empty_checkpoints_read_as_missing(closed: Path) -> None:
    (closed / HW_CHECKPOINT).write_bytes(b"")
    (closed / LEADER_EPOCH_CHECKPOINT).write_bytes(b"")
    log = PartitionLog(closed)
    assert log.high_watermark == 0
    assert log.epoch_entries() == [EpochEntry(2, 0), EpochEntry(5, 10)]
    assert log.log_end_offset == 20


def test_a_segment_cut_back_to_an_earlier_write_ends_the_log_there(closed: Path) -> None:
    segment = only(closed, LOG_SUFFIX)
    size = segment.stat().st_size
    os.truncate(segment, size // 2)
    log = PartitionLog(closed)
    assert 0 < log.log_end_offset < 20
    assert log.high_watermark <= log.log_end_offset
    assert [r.offset for r in log.read(0)] == list(range(log.log_end_offset))
    assert log.append_as_leader(batch(1), 6)[0] == log.log_end_offset - 1


def test_empty_segment_index_and_checkpoints_leave_an_empty_log(closed: Path) -> None:
    for path in (only(closed, LOG_SUFFIX), only(closed, INDEX_SUFFIX)):
        path.write_bytes(b"")
    (closed / HW_CHECKPOINT).write_bytes(b"")
    (closed / LEADER_EPOCH_CHECKPOINT).write_bytes(b"")
    log = PartitionLog(closed)
    assert (log.log_end_offset, log.high_watermark, log.epoch_entries()) == (0, 0, [])
    assert log.append_as_leader(batch(2), 7) == (0, 1)


def test_an_index_longer_than_its_cut_segment_is_rebuilt(closed: Path) -> None:
    os.truncate(only(closed, LOG_SUFFIX), 0)
    log = PartitionLog(closed)
    assert log.log_end_offset == 0
    assert log.read(0) == []


def test_sync_fsyncs_the_active_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = PartitionLog(tmp_path / "t-0")
    log.append_as_leader(batch(3), 1)
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    log.sync()
    assert synced, "sync did not fsync"
    log.close()
    with pytest.raises(LogError, match="closed"):
        log.sync()
