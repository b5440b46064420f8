"""Replication in the log's stored format: `PartitionLog.read_encoded` answers exactly the
records `read` does (limits, segment boundaries, out of range), as the bytes a segment
holds; `append_encoded_as_follower` checks them (offsets, epochs, CRC) and writes them as
they came, so a follower's log is byte for byte the leader's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker_node.storage import LogError, OffsetOutOfRangeError, PartitionLog
from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import split_records

RECORD_BYTES = 100  # a null key and a 64-byte value


def batch(n: int, start: int = 0) -> list[tuple[bytes | None, bytes, int]]:
    return [(None, f"{i:064d}".encode(), 1000 + i) for i in range(start, start + n)]


@pytest.fixture
def leader(tmp_path: Path) -> PartitionLog:
    """35 records over four segments of ten, in epochs 0 (25 records) and 2."""
    log = PartitionLog(tmp_path / "leader", segment_bytes=10 * RECORD_BYTES)
    log.append_as_leader(batch(25), 0)
    log.append_as_leader(batch(10, start=25), 2)
    return log


@pytest.mark.parametrize(
    ("start", "kwargs"),
    [
        (0, {}),
        (8, {"max_records": 5}),
        (8, {"max_bytes": 15 * RECORD_BYTES}),
        (8, {"max_bytes": 15 * RECORD_BYTES - 1}),
        (18, {"max_offset": 31}),
        (30, {}),
        (2, {"max_bytes": 0}),
        (2, {"max_records": 0}),
        (4, {"max_offset": 2}),
        (35, {}),
    ],
)
def test_encoded_reads_hold_the_records_that_read_returns(
    leader: PartitionLog, start: int, kwargs: dict[str, Any]
) -> None:
    data, count = leader.read_encoded(start, **kwargs)
    records, _ = split_records(data)
    assert records == leader.read(start, **kwargs)
    assert count == len(records)


@pytest.mark.parametrize("start", [-1, 36])
def test_encoded_reads_outside_the_log_are_out_of_range(leader: PartitionLog, start: int) -> None:
    with pytest.raises(OffsetOutOfRangeError):
        leader.read_encoded(start)


def test_a_follower_copies_the_leaders_bytes_and_epochs(
    leader: PartitionLog, tmp_path: Path
) -> None:
    follower = PartitionLog(tmp_path / "follower", segment_bytes=10 * RECORD_BYTES)
    offset = 0
    while offset < leader.log_end_offset:  # as a fetcher would, 7 records at a time
        data, count = leader.read_encoded(offset, max_records=7)
        follower.append_encoded_as_follower(data)
        offset += count
    assert follower.read(0) == leader.read(0)
    assert follower.epoch_entries() == leader.epoch_entries()
    assert follower.read_encoded(0) == leader.read_encoded(0)


def test_a_corrupt_byte_is_refused_and_nothing_written(
    leader: PartitionLog, tmp_path: Path
) -> None:
    follower = PartitionLog(tmp_path / "follower")
    data, _ = leader.read_encoded(0, max_records=3)
    damaged = bytearray(data)
    damaged[-1] ^= 0xFF
    with pytest.raises(InvalidRecordError, match="CRC"):
        follower.append_encoded_as_follower(bytes(damaged))
    with pytest.raises(InvalidRecordError, match="torn"):
        follower.append_encoded_as_follower(data[:-1])
    assert follower.log_end_offset == 0


def test_encoded_records_must_continue_the_log(leader: PartitionLog, tmp_path: Path) -> None:
    follower = PartitionLog(tmp_path / "follower")
    data, _ = leader.read_encoded(5, max_records=3)  # a gap: the follower ends at 0
    with pytest.raises(LogError, match="gap"):
        follower.append_encoded_as_follower(data)
    assert follower.log_end_offset == 0


def test_reads_from_an_append_boundary_follow_truncation_and_new_appends(tmp_path: Path) -> None:
    """A read from where an append began or ended takes the segment's remembered position;
    after a truncation the records past it are new ones, of other sizes, and a read from
    a boundary the truncation removed must find them, not the old bytes."""
    log = PartitionLog(tmp_path / "log")
    log.append_as_leader(batch(3), 0)
    log.append_as_leader(batch(3, start=3), 0)  # boundaries at 0, 3 and 6
    log.truncate_to(4)
    log.append_as_leader([(b"key", b"a longer value than before", 7)] * 4, 1)
    for start in range(log.log_end_offset + 1):
        data, count = log.read_encoded(start)
        records, _ = split_records(data)
        assert records == log.read(start)
        assert count == log.log_end_offset - start
    data, count = log.read_encoded(6, max_records=1)
    assert count == 1
    assert split_records(data)[0] == log.read(6, max_records=1)


def test_a_follower_that_keeps_up_copies_every_append_exactly(tmp_path: Path) -> None:
    """Fetch, append, fetch again from the new end: every read starts at a boundary."""
    leader = PartitionLog(tmp_path / "leader", segment_bytes=10 * RECORD_BYTES)
    follower = PartitionLog(tmp_path / "follower", segment_bytes=10 * RECORD_BYTES)
    for size in (1, 4, 7, 2, 9, 1, 3):
        leader.append_as_leader(batch(size, start=leader.log_end_offset), 3)
        while follower.log_end_offset < leader.log_end_offset:
            data, _ = leader.read_encoded(follower.log_end_offset)
            follower.append_encoded_as_follower(data)
    assert follower.read_encoded(0) == leader.read_encoded(0)
    assert follower.epoch_entries() == leader.epoch_entries()
