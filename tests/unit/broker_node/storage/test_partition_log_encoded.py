"""Replication in the log's stored format: `PartitionLog.read_encoded` answers whole
batches, from the one holding the start offset, within its limits yet at least one batch
(across segment boundaries, out of range); `append_encoded_as_follower` checks each batch
(offsets, epochs, CRC) and writes it as it came, so a follower's log is byte for byte the
leader's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker_node.storage import LogError, OffsetOutOfRangeError, PartitionLog, Record
from broker_node.storage.errors import InvalidRecordError
from broker_node.storage.record import BATCH_HEADER_BYTES, encode_batch, split_batches

RECORD_BYTES = 84  # a null key and a 64-byte value, inside a batch
BATCH_BYTES = BATCH_HEADER_BYTES + 3 * RECORD_BYTES  # the fixture's batches


def batch(n: int, start: int = 0) -> list[tuple[bytes | None, bytes, int]]:
    return [(None, f"{i:064d}".encode(), 1000 + i) for i in range(start, start + n)]


@pytest.fixture
def leader(tmp_path: Path) -> PartitionLog:
    """36 records in batches of three, three batches a segment, in epochs 0 (24 records)
    and 2."""
    log = PartitionLog(tmp_path / "leader", segment_bytes=3 * BATCH_BYTES)
    for start in range(0, 36, 3):
        log.append_as_leader(batch(3, start=start), 0 if start < 24 else 2)
    return log


@pytest.mark.parametrize(
    ("start", "kwargs", "first", "count"),
    [
        pytest.param(0, {}, 0, 36, id="all"),
        pytest.param(7, {}, 6, 30, id="from-inside-a-batch"),
        pytest.param(0, {"max_records": 12}, 0, 12, id="across-a-segment"),
        pytest.param(7, {"max_records": 5}, 6, 3, id="max-records-short"),
        pytest.param(7, {"max_records": 6}, 6, 6, id="max-records-exact"),
        pytest.param(7, {"max_bytes": 2 * BATCH_BYTES}, 6, 6, id="max-bytes-exact"),
        pytest.param(7, {"max_bytes": 2 * BATCH_BYTES - 1}, 6, 3, id="max-bytes-short"),
        pytest.param(7, {"max_bytes": 0}, 6, 3, id="one-batch-whatever-its-size"),
        pytest.param(7, {"max_records": 0}, 7, 0, id="no-records"),
        pytest.param(7, {"max_offset": 12}, 6, 6, id="up-to-a-batch-end"),
        pytest.param(7, {"max_offset": 11}, 6, 3, id="no-batch-past-the-end"),
        pytest.param(7, {"max_offset": 8}, 7, 0, id="the-first-batch-passes-the-end"),
        pytest.param(35, {}, 33, 3, id="last-batch"),
        pytest.param(36, {}, 36, 0, id="at-the-end"),
    ],
)
def test_encoded_reads_answer_whole_batches(
    leader: PartitionLog, start: int, kwargs: dict[str, Any], first: int, count: int
) -> None:
    data, found = leader.read_encoded(start, **kwargs)
    records, batches = split_batches(data)
    assert found == count == len(records)
    assert records == leader.read(first, max_records=count) if count else data == b""
    assert all(len(one) == BATCH_BYTES for one in batches)


@pytest.mark.parametrize("start", [-1, 37])
def test_encoded_reads_outside_the_log_are_out_of_range(leader: PartitionLog, start: int) -> None:
    with pytest.raises(OffsetOutOfRangeError):
        leader.read_encoded(start)


def test_a_follower_copies_the_leaders_bytes_and_epochs(
    leader: PartitionLog, tmp_path: Path
) -> None:
    follower = PartitionLog(tmp_path / "follower", segment_bytes=3 * BATCH_BYTES)
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
    data, _ = leader.read_encoded(6, max_records=3)  # a gap: the follower ends at 0
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
    log.truncate_to(4)  # removes the whole batch 3..5
    assert log.log_end_offset == 3
    log.append_as_leader([(b"key", b"a longer value than before", 7)] * 4, 1)
    for start in range(log.log_end_offset + 1):
        data, count = log.read_encoded(start)
        records, _ = split_batches(data)
        first = log.batch_start(start)
        assert records == log.read(first)
        assert count == log.log_end_offset - first
    data, count = log.read_encoded(6, max_records=1)
    assert count == 4  # the whole batch 3..6
    assert split_batches(data)[0] == log.read(3)


def test_a_follower_that_keeps_up_copies_every_append_exactly(tmp_path: Path) -> None:
    """Fetch, append, fetch again from the new end: every read starts at a boundary."""
    leader = PartitionLog(tmp_path / "leader", segment_bytes=3 * BATCH_BYTES)
    follower = PartitionLog(tmp_path / "follower", segment_bytes=3 * BATCH_BYTES)
    for size in (1, 4, 7, 2, 9, 1, 3):
        leader.append_as_leader(batch(size, start=leader.log_end_offset), 3)
        while follower.log_end_offset < leader.log_end_offset:
            data, _ = leader.read_encoded(follower.log_end_offset)
            follower.append_encoded_as_follower(data)
    assert follower.read_encoded(0) == leader.read_encoded(0)
    assert follower.epoch_entries() == leader.epoch_entries()


def test_a_batch_below_the_log_end_is_refused_whole(tmp_path: Path) -> None:
    follower = PartitionLog(tmp_path / "follower")
    follower.append_encoded_as_follower(encode_batch(0, 1, batch(3)))
    with pytest.raises(LogError, match="overlap"):
        follower.append_encoded_as_follower(encode_batch(1, 1, batch(2, start=1)))
    with pytest.raises(LogError, match="older than 1"):
        follower.append_encoded_as_follower(encode_batch(3, 0, batch(3, start=3)))
    assert follower.log_end_offset == 3


def test_a_log_ending_inside_the_first_batch_takes_its_tail_as_a_batch(tmp_path: Path) -> None:
    """Only a truncation the leader's epochs did not steer (bug switches) leaves a log
    there: it continues with the records from its end, as per-record Kafka did."""
    follower = PartitionLog(tmp_path / "follower")
    follower.append_encoded_as_follower(encode_batch(0, 1, batch(3)))
    leader_batches = encode_batch(2, 4, batch(3, start=20)) + encode_batch(5, 4, batch(1, 50))
    follower.append_encoded_as_follower(leader_batches)
    assert numbers_of(follower.read(0)) == [0, 1, 2, 21, 22, 50]
    assert follower.read_encoded(3)[0] == encode_batch(3, 4, batch(2, start=21)) + (
        encode_batch(5, 4, batch(1, 50))
    )
    assert [(e.epoch, e.start_offset) for e in follower.epoch_entries()] == [(1, 0), (4, 3)]


def numbers_of(records: list[Record]) -> list[int]:
    return [int(record.value) for record in records]


def test_several_batches_keep_their_boundaries_and_epochs(tmp_path: Path) -> None:
    follower = PartitionLog(tmp_path / "follower")
    data = encode_batch(0, 1, batch(2)) + encode_batch(2, 3, batch(4, start=2))
    follower.append_encoded_as_follower(data)
    assert [(e.epoch, e.start_offset) for e in follower.epoch_entries()] == [(1, 0), (3, 2)]
    assert follower.read_encoded(0) == (data, 6)
    assert follower.batch_start(5) == 2
    follower.truncate_to(5)
    assert follower.log_end_offset == 2
    assert [(e.epoch, e.start_offset) for e in follower.epoch_entries()] == [(1, 0)]
