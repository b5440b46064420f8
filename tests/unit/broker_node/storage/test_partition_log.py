"""`PartitionLog` on a real directory: appends and reads with their limits, segment rolls,
the offset index, truncation (whole batches), follower appends, the high watermark, failures
and the life cycle (epochs: `test_partition_log_epochs`; reopening:
`test_partition_log_recovery`; batches copied as bytes: `test_partition_log_encoded`)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

import pytest

from broker_node.storage import (
    UNDEFINED_EPOCH,
    UNDEFINED_OFFSET,
    EpochEntry,
    LogError,
    OffsetOutOfRangeError,
    PartitionLog,
    Record,
)
from broker_node.storage.checkpoints import HW_CHECKPOINT, LEADER_EPOCH_CHECKPOINT
from broker_node.storage.record import BATCH_HEADER_BYTES, decode_batch, encoded_size
from broker_node.storage.segment import LogSegment

RECORD_BYTES = 84  # a null key and a 64-byte value, inside a batch
BATCH_BYTES = BATCH_HEADER_BYTES + RECORD_BYTES  # a batch of one such record


def batch(n: int, start: int = 0) -> list[tuple[bytes | None, bytes, int]]:
    """`n` records of exactly RECORD_BYTES, numbered from `start` in their values."""
    return [(None, f"{i:064d}".encode(), 1000 + i) for i in range(start, start + n)]


def append_each(log: PartitionLog, n: int, start: int = 0, epoch: int = 0) -> None:
    """`batch(n, start)` one record a batch (an append each)."""
    for i in range(start, start + n):
        log.append_as_leader(batch(1, start=i), epoch)


def numbers(records: list[Record]) -> list[int]:
    return [int(record.value) for record in records]


def segment_files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.glob("*.log"))


@pytest.fixture
def log(tmp_path: Path) -> PartitionLog:
    return PartitionLog(tmp_path / "topic-0")


@pytest.fixture
def segmented(tmp_path: Path) -> PartitionLog:
    """Ten one-record batches per segment."""
    return PartitionLog(tmp_path / "topic-0", segment_bytes=10 * BATCH_BYTES)


def test_a_new_log_is_empty(log: PartitionLog) -> None:
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)
    assert log.read(0) == []
    assert log.latest_epoch() == UNDEFINED_EPOCH
    assert log.epoch_entries() == []


def test_a_new_log_has_no_directory_until_its_first_append(log: PartitionLog) -> None:
    """Creating a log costs nothing on disk, nor do flushing and closing it while empty;
    its directory and segment file come with the first record, and a bare directory opens
    again as the same empty log."""
    assert not log.directory.exists()
    log.truncate_to(0)
    log.set_high_watermark(0)
    log.flush()
    log.close()
    assert not log.directory.exists()
    again = PartitionLog(log.directory)
    assert (again.log_start_offset, again.log_end_offset, again.high_watermark) == (0, 0, 0)
    assert again.read(0) == []
    assert again.read_encoded(0) == (b"", 0)
    assert again.end_offset_for_epoch(0) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    assert again.append_as_leader([(b"k", b"v", 1)], 0) == (0, 0)
    assert segment_files(again.directory) == ["00000000000000000000.log"]
    assert again.read(0) == [Record(0, 0, 1, b"k", b"v")]
    again.close()
    for path in again.directory.iterdir():
        path.unlink()
    bare = PartitionLog(again.directory)
    assert (bare.log_start_offset, bare.log_end_offset, bare.high_watermark) == (0, 0, 0)


def test_a_new_log_makes_its_directory_and_parents_for_its_first_record(
    tmp_path: Path,
) -> None:
    """The first append writes the epoch checkpoint before the records: the directory, and
    a data directory that is gone too, appear for it."""
    log = PartitionLog(tmp_path / "data" / "t-0")
    assert log.append_as_leader(batch(2), 3) == (0, 1)
    log.set_high_watermark(2)
    log.flush()
    assert {p.name for p in log.directory.iterdir()} == {
        "00000000000000000000.log",
        HW_CHECKPOINT,
        LEADER_EPOCH_CHECKPOINT,
    }
    assert PartitionLog(log.directory).epoch_entries() == log.epoch_entries()


def test_offsets_reads_start_end_and_high_watermark_together(segmented: PartitionLog) -> None:
    append_each(segmented, 25)
    segmented.set_high_watermark(20)
    assert segmented.offsets() == (0, 25, 20)
    segmented.truncate_to(12)
    assert segmented.offsets() == (
        segmented.log_start_offset,
        segmented.log_end_offset,
        segmented.high_watermark,
    )
    assert segmented.offsets() == (0, 12, 12)
    segmented.close()
    with pytest.raises(LogError, match="closed"):
        segmented.offsets()


def test_leader_appends_get_consecutive_offsets(log: PartitionLog) -> None:
    assert log.append_as_leader([(b"k", b"v0", 5), (None, b"v1", 6)], 0) == (0, 1)
    assert log.append_as_leader([(b"", b"v2", 7)], 0) == (2, 2)
    assert log.log_end_offset == 3
    assert log.read(0) == [
        Record(0, 0, 5, b"k", b"v0"),
        Record(1, 0, 6, None, b"v1"),
        Record(2, 0, 7, b"", b"v2"),
    ]


def test_an_empty_leader_append_writes_nothing(log: PartitionLog) -> None:
    log.append_as_leader(batch(2), 0)
    assert log.append_as_leader([], 3) == (2, 1)
    assert log.log_end_offset == 2
    assert log.latest_epoch() == 0


@pytest.mark.parametrize(
    ("start", "kwargs", "expected"),
    [
        pytest.param(0, {}, list(range(10)), id="everything"),
        pytest.param(4, {}, list(range(4, 10)), id="from-the-middle"),
        pytest.param(4, {"max_offset": 7}, [4, 5, 6], id="max-offset-is-exclusive"),
        pytest.param(4, {"max_offset": 50}, list(range(4, 10)), id="max-offset-past-the-leo"),
        pytest.param(4, {"max_offset": 4}, [], id="max-offset-at-start"),
        pytest.param(4, {"max_offset": 2}, [], id="max-offset-below-start"),
        pytest.param(2, {"max_records": 3}, [2, 3, 4], id="max-records"),
        pytest.param(2, {"max_records": 0}, [], id="max-records-zero"),
        pytest.param(2, {"max_bytes": 3 * RECORD_BYTES}, [2, 3, 4], id="max-bytes-exact"),
        pytest.param(2, {"max_bytes": 3 * RECORD_BYTES - 1}, [2, 3], id="max-bytes-short"),
        pytest.param(2, {"max_bytes": 1}, [2], id="one-record-even-if-too-large"),
        pytest.param(2, {"max_bytes": 0}, [2], id="one-record-even-with-zero-bytes"),
        pytest.param(10, {}, [], id="at-the-leo"),
    ],
)
def test_read_limits(
    segmented: PartitionLog, start: int, kwargs: dict[str, int], expected: list[int]
) -> None:
    segmented.append_as_leader(batch(10), 0)
    assert numbers(segmented.read(start, **kwargs)) == expected


@pytest.mark.parametrize("start", [-1, 11, 1000])
def test_reads_outside_the_log_are_out_of_range(log: PartitionLog, start: int) -> None:
    log.append_as_leader(batch(10), 0)
    with pytest.raises(OffsetOutOfRangeError) as excinfo:
        log.read(start)
    assert (excinfo.value.log_start_offset, excinfo.value.log_end_offset) == (0, 10)


def test_segments_roll_and_reads_cross_them(segmented: PartitionLog) -> None:
    append_each(segmented, 35)
    assert segment_files(segmented.directory) == [
        "00000000000000000000.log",
        "00000000000000000010.log",
        "00000000000000000020.log",
        "00000000000000000030.log",
    ]
    for name in segment_files(segmented.directory):
        assert (segmented.directory / name).stat().st_size <= 10 * BATCH_BYTES
    assert numbers(segmented.read(0)) == list(range(35))
    assert numbers(segmented.read(8, max_records=5)) == [8, 9, 10, 11, 12]
    assert numbers(segmented.read(8, max_bytes=15 * RECORD_BYTES)) == list(range(8, 23))
    assert numbers(segmented.read(18, max_offset=31)) == list(range(18, 31))
    assert numbers(segmented.read(30)) == list(range(30, 35))


def test_a_batch_larger_than_a_segment_gets_a_segment_of_its_own(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", segment_bytes=250)
    for value in (b"x", b"y" * 1000, b"z"):
        log.append_as_leader([(None, value, 0)], 0)
    assert segment_files(log.directory) == [
        "00000000000000000000.log",
        "00000000000000000001.log",
        "00000000000000000002.log",
    ]
    assert [r.value for r in log.read(0, max_bytes=1)] == [b"x"]
    assert [r.value for r in log.read(1, max_bytes=1)] == [b"y" * 1000]
    assert [r.value for r in log.read(0)] == [b"x", b"y" * 1000, b"z"]


def test_reads_seek_with_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of ten records (885 bytes), an index entry every few: a read looks at the
    headers of at most the batches of one index interval and decodes only its own."""
    log = PartitionLog(tmp_path / "t-0", index_interval_bytes=4 * 885)
    for start in range(0, 2000, 10):
        log.append_as_leader(batch(10, start), 0)
    decoded: list[int] = []

    def counting_decode(data: bytes, position: int) -> list[Record]:
        decoded.append(position)
        return decode_batch(data, position)

    monkeypatch.setattr("broker_node.storage.segment.decode_batch", counting_decode)
    assert numbers(log.read(1537, max_records=2)) == [1537, 1538]
    assert len(decoded) == 1, "only the batch holding the records is decoded"
    assert numbers(log.read(1538, max_records=3)) == [1538, 1539, 1540]
    assert len(decoded) == 3
    position = decoded[1]
    assert position == 153 * 885
    assert log._segments[0].index.lookup(1538)[1] >= position - 5 * 885


def test_truncation_removes_the_tail_across_segments(segmented: PartitionLog) -> None:
    append_each(segmented, 35)
    segmented.set_high_watermark(30)
    segmented.truncate_to(13)
    assert segmented.log_end_offset == 13
    assert segmented.high_watermark == 13
    assert segment_files(segmented.directory) == [
        "00000000000000000000.log",
        "00000000000000000010.log",
    ]
    assert numbers(segmented.read(0)) == list(range(13))
    append_each(segmented, 12, start=100)
    assert segmented.log_end_offset == 25
    assert numbers(segmented.read(10)) == [10, 11, 12, *range(100, 112)]
    assert len(segment_files(segmented.directory)) == 3


def test_truncation_inside_a_batch_removes_the_whole_batch(segmented: PartitionLog) -> None:
    append_each(segmented, 8)
    segmented.append_as_leader(batch(5, start=8), 0)  # a batch 8..12 of its own segment
    segmented.append_as_leader(batch(3, start=13), 0)
    segmented.set_high_watermark(16)
    assert [segmented.batch_start(o) for o in (7, 8, 12, 13, 15, 16, 99)] == [
        7,
        8,
        8,
        13,
        13,
        16,
        16,
    ]
    segmented.truncate_to(14)
    assert (segmented.log_end_offset, segmented.high_watermark) == (13, 13)
    segmented.truncate_to(10)
    assert (segmented.log_end_offset, segmented.high_watermark) == (8, 8)
    assert numbers(segmented.read(0)) == list(range(8))
    assert segmented.append_as_leader(batch(2, start=50), 0) == (8, 9)
    assert numbers(segmented.read(6)) == [6, 7, 50, 51]
    with pytest.raises(OffsetOutOfRangeError):
        segmented.batch_start(-1)


def test_truncation_to_a_segment_base_keeps_that_segment_empty(segmented: PartitionLog) -> None:
    append_each(segmented, 25)
    segmented.truncate_to(10)
    assert segmented.log_end_offset == 10
    assert segment_files(segmented.directory)[-1] == "00000000000000000010.log"
    assert (segmented.directory / "00000000000000000010.log").stat().st_size == 0
    segmented.truncate_to(0)
    assert segmented.log_end_offset == 0
    assert segmented.read(0) == []


def test_truncation_at_or_past_the_leo_is_a_no_op(log: PartitionLog) -> None:
    log.append_as_leader(batch(5), 0)
    log.set_high_watermark(5)
    log.truncate_to(5)
    log.truncate_to(50)
    assert (log.log_end_offset, log.high_watermark) == (5, 5)


def test_truncation_below_the_log_start_is_out_of_range(log: PartitionLog) -> None:
    with pytest.raises(OffsetOutOfRangeError):
        log.truncate_to(-1)


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        pytest.param([Record(4, 2, 0, None, b"x")], "gap", id="gap"),
        pytest.param([Record(2, 2, 0, None, b"x")], "overlap", id="overlap"),
        pytest.param(
            [Record(3, 2, 0, None, b"x"), Record(5, 2, 0, None, b"y")], "gap", id="inner-gap"
        ),
        pytest.param([Record(3, 1, 0, None, b"x")], "older", id="older-epoch"),
    ],
)
def test_bad_follower_appends_write_nothing(
    log: PartitionLog, records: list[Record], problem: str
) -> None:
    log.append_as_follower([Record(i, 2, 0, None, b"v") for i in range(3)])
    files = {path.name: path.read_bytes() for path in log.directory.iterdir()}
    with pytest.raises(LogError, match=problem):
        log.append_as_follower(records)
    assert log.log_end_offset == 3
    assert log.epoch_entries() == [EpochEntry(2, 0)]
    assert {path.name: path.read_bytes() for path in log.directory.iterdir()} == files


def test_the_high_watermark_is_clamped_to_the_log(log: PartitionLog) -> None:
    log.append_as_leader(batch(5), 0)
    log.set_high_watermark(3)
    assert log.high_watermark == 3
    log.set_high_watermark(50)
    assert log.high_watermark == 5
    log.set_high_watermark(-4)
    assert log.high_watermark == 0


@pytest.mark.parametrize(
    ("interval_ms", "step_s"),
    [(1000, 0.5), (5000, 2.5), (200, 0.1)],
    ids=["fast-profile", "kafka-default", "200ms"],
)
def test_rises_of_the_high_watermark_are_checkpointed_at_most_once_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interval_ms: int, step_s: float
) -> None:
    """`step_s` is half the interval."""
    log = PartitionLog(tmp_path / "topic-0", hw_checkpoint_interval_ms=interval_ms)
    now = [100.0]
    monkeypatch.setattr(log._checkpoints, "_clock", lambda: now[0])
    checkpoint = log.directory / HW_CHECKPOINT

    def on_disk() -> int:
        return int(checkpoint.read_text())

    append_each(log, 20)
    log.set_high_watermark(5)
    assert on_disk() == 5, "the first rise after opening is written at once"
    now[0] += step_s
    log.set_high_watermark(7)
    assert on_disk() == 5
    now[0] += step_s * 0.99
    log.set_high_watermark(8)
    assert on_disk() == 5, "written before the interval was over"
    now[0] += step_s * 0.01
    log.set_high_watermark(9)
    assert on_disk() == 9
    now[0] += step_s / 5
    log.set_high_watermark(10)
    assert on_disk() == 9
    log.flush()
    assert on_disk() == 10
    now[0] += step_s / 5
    log.set_high_watermark(6)
    assert on_disk() == 6, "a fall is written at once"
    log.set_high_watermark(12)
    log.truncate_to(10)
    assert on_disk() == 10, "truncation below the watermark is written at once"


def test_with_no_interval_every_rise_is_checkpointed(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "topic-0", hw_checkpoint_interval_ms=0)
    log.append_as_leader(batch(20), 0)
    for hw in (3, 4, 9):
        log.set_high_watermark(hw)
        assert int((log.directory / HW_CHECKPOINT).read_text()) == hw


def test_a_log_waits_kafkas_five_seconds_between_written_rises_by_default(
    log: PartitionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [100.0]
    monkeypatch.setattr(log._checkpoints, "_clock", lambda: now[0])
    log.append_as_leader(batch(20), 0)
    log.set_high_watermark(5)
    now[0] += 4.9
    log.set_high_watermark(7)
    assert int((log.directory / HW_CHECKPOINT).read_text()) == 5
    now[0] += 0.1
    log.set_high_watermark(8)
    assert int((log.directory / HW_CHECKPOINT).read_text()) == 8


def test_a_closed_log_refuses_calls(log: PartitionLog) -> None:
    log.append_as_leader(batch(1), 0)
    log.close()
    log.close()
    calls: list[Callable[[], object]] = [
        lambda: log.read(0),
        lambda: log.append_as_leader(batch(1), 0),
        lambda: log.append_as_follower([]),
        lambda: log.truncate_to(0),
        lambda: log.log_end_offset,
        lambda: log.high_watermark,
        lambda: log.set_high_watermark(0),
        lambda: log.epoch_entries(),
        lambda: log.flush(),
    ]
    for call in calls:
        with pytest.raises(LogError, match="closed"):
            call()


def test_delete_removes_the_directory(log: PartitionLog) -> None:
    log.append_as_leader(batch(3), 0)
    log.delete()
    assert not log.directory.exists()
    with pytest.raises(LogError):
        log.read(0)
    log.delete()


def test_a_failed_write_fails_the_log_until_it_is_reopened(
    log: PartitionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    log.append_as_leader(batch(3), 0)

    def disk_full(
        segment: LogSegment, first_offset: int, data: bytes, sizes: object, counts: object
    ) -> None:
        with segment.log_path.open("ab") as file:
            file.write(data[:50])  # half a batch reaches the file
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(LogSegment, "append", disk_full)
    with pytest.raises(OSError, match="No space"):
        log.append_as_leader(batch(2, start=3), 0)
    with pytest.raises(LogError, match="write failed"):
        log.read(0)
    log.close()
    monkeypatch.undo()
    reopened = PartitionLog(log.directory)
    assert numbers(reopened.read(0)) == [0, 1, 2]
    assert reopened.append_as_leader(batch(1, start=3), 0) == (3, 3)


def test_an_fsyncing_log_behaves_the_same(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", segment_bytes=5 * BATCH_BYTES, fsync=True)
    append_each(log, 12, epoch=1)
    log.set_high_watermark(12)
    log.flush()
    log.truncate_to(7)
    log.close()
    reopened = PartitionLog(tmp_path / "t-0", segment_bytes=5 * BATCH_BYTES, fsync=True)
    assert numbers(reopened.read(0)) == list(range(7))
    assert reopened.high_watermark == 7
    reopened.close()


@pytest.mark.parametrize(
    ("segment_bytes", "index_interval_bytes"),
    [(0, 4096), (2**32, 4096), (1 << 20, -1)],
)
def test_impossible_configuration_is_refused(
    tmp_path: Path, segment_bytes: int, index_interval_bytes: int
) -> None:
    with pytest.raises(ValueError, match="must be"):
        PartitionLog(tmp_path / "t-0", segment_bytes, index_interval_bytes)
    assert not (tmp_path / "t-0").exists(), "nothing is created for a refused configuration"


def test_record_sizes_match_the_codec() -> None:
    assert encoded_size(None, b"0" * 64) == RECORD_BYTES
