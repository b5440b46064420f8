"""Opening a log directory again: after a clean close, after a kill (the files as a killed
process leaves them), after a torn or corrupt tail, with damaged indexes and checkpoints.

A "kill" is simulated by copying the directory while the log is still open: every append
has reached the OS when it returns, which is all a killed process leaves behind. The
fixture appends one record at a time, so each batch is one record; a batch of several
goes whole, and a directory in the earlier per-record format is refused.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from broker_node.storage import CorruptLogError, EpochEntry, PartitionLog, Record
from broker_node.storage.checkpoints import HW_CHECKPOINT, LEADER_EPOCH_CHECKPOINT
from broker_node.storage.errors import LegacyLogFormatError
from broker_node.storage.record import BATCH_HEADER_BYTES

RECORD_BYTES = BATCH_HEADER_BYTES + 84  # a batch of one record, a null key, a 64-byte value
SEGMENT_BYTES = 10 * RECORD_BYTES


def batch(n: int, start: int = 0) -> list[tuple[bytes | None, bytes, int]]:
    return [(None, f"{i:064d}".encode(), 1000 + i) for i in range(start, start + n)]


def numbers(records: list[Record]) -> list[int]:
    return [int(record.value) for record in records]


def open_log(directory: Path) -> PartitionLog:
    return PartitionLog(directory, segment_bytes=SEGMENT_BYTES, index_interval_bytes=250)


def killed_copy(log: PartitionLog, destination: Path) -> Path:
    """The directory as a process killed right now would leave it."""
    shutil.copytree(log.directory, destination)
    return destination


def segment(directory: Path, suffix: str, which: int = -1) -> Path:
    return sorted(directory.glob(f"*{suffix}"))[which]


@pytest.fixture
def written(tmp_path: Path) -> PartitionLog:
    """25 one-record batches over three segments: epoch 0 [0, 12), epoch 3 [12, 25);
    HW 20."""
    log = open_log(tmp_path / "topic-0")
    for offset in range(25):
        log.append_as_leader(batch(1, start=offset), 0 if offset < 12 else 3)
    log.set_high_watermark(20)
    return log


def test_reopening_after_close_gives_the_same_log(written: PartitionLog) -> None:
    written.close()
    log = open_log(written.directory)
    assert numbers(log.read(0)) == list(range(25))
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12)]
    assert log.high_watermark == 20
    assert log.append_as_leader(batch(1, start=25), 3) == (25, 25)


def test_a_killed_log_keeps_every_append(written: PartitionLog, tmp_path: Path) -> None:
    written.append_as_leader(batch(2, start=25), 4)
    log = open_log(killed_copy(written, tmp_path / "killed"))
    assert numbers(log.read(0)) == list(range(27))
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12), EpochEntry(4, 25)]
    assert log.high_watermark == 20


def cut_mid_record(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size - RECORD_BYTES // 2)


def cut_into_length_field(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size - RECORD_BYTES + 2)


def append_garbage(path: Path) -> None:
    with path.open("ab") as file:
        file.write(b"\x00\x00\x01\x00 not a record at all")


def append_zeros(path: Path) -> None:
    with path.open("ab") as file:
        file.write(bytes(4096))


def flip_byte_in_last_record(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "survivors"),
    [
        pytest.param(cut_mid_record, 24, id="torn-mid-record"),
        pytest.param(cut_into_length_field, 24, id="torn-inside-the-length-field"),
        pytest.param(append_garbage, 25, id="garbage-appended"),
        pytest.param(append_zeros, 25, id="zeros-appended"),
        pytest.param(flip_byte_in_last_record, 24, id="crc-mismatch"),
    ],
)
def test_a_damaged_tail_is_truncated_to_the_last_whole_record(
    written: PartitionLog, tmp_path: Path, damage: Callable[[Path], None], survivors: int
) -> None:
    directory = killed_copy(written, tmp_path / "killed")
    damage(segment(directory, ".log"))
    log = open_log(directory)
    assert log.log_end_offset == survivors
    assert numbers(log.read(0)) == list(range(survivors))
    assert segment(directory, ".log").stat().st_size == (survivors - 20) * RECORD_BYTES
    assert log.append_as_leader(batch(3, start=100), 3) == (survivors, survivors + 2)
    log.close()
    assert numbers(open_log(directory).read(survivors)) == [100, 101, 102]


def test_a_corrupt_record_drops_everything_after_it(written: PartitionLog, tmp_path: Path) -> None:
    directory = killed_copy(written, tmp_path / "killed")
    last = segment(directory, ".log")
    data = bytearray(last.read_bytes())
    data[2 * RECORD_BYTES + 50] ^= 0x01  # inside batch 22; 23 and 24 are intact
    last.write_bytes(bytes(data))
    assert open_log(directory).log_end_offset == 22


def test_a_torn_tail_drops_epochs_and_clamps_the_high_watermark(
    written: PartitionLog, tmp_path: Path
) -> None:
    written.append_as_leader(batch(1, start=25), 7)
    written.set_high_watermark(26)
    written.flush()
    directory = killed_copy(written, tmp_path / "killed")
    cut_mid_record(segment(directory, ".log"))
    log = open_log(directory)
    assert log.log_end_offset == 25
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12)]
    assert log.high_watermark == 25


def test_a_tail_torn_back_to_the_segment_start_leaves_it_empty(
    written: PartitionLog, tmp_path: Path
) -> None:
    directory = killed_copy(written, tmp_path / "killed")
    with segment(directory, ".log").open("r+b") as file:
        file.truncate(3)
    log = open_log(directory)
    assert log.log_end_offset == 20
    assert numbers(log.read(15)) == [15, 16, 17, 18, 19]
    assert log.append_as_leader(batch(1, start=99), 3) == (20, 20)


def break_index(path: Path) -> None:
    path.write_bytes(b"\x01\x02\x03")


def scramble_index(path: Path) -> None:
    path.write_bytes(bytes.fromhex("00000001 00000010 00000005 00000020"))


def delete_index(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize("which", [0, 1, -1], ids=["first", "middle", "last"])
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(delete_index, id="missing"),
        pytest.param(break_index, id="garbage"),
        pytest.param(scramble_index, id="pointing-nowhere"),
    ],
)
def test_a_damaged_index_is_rebuilt(
    written: PartitionLog, damage: Callable[[Path], None], which: int
) -> None:
    written.close()
    index = segment(written.directory, ".index", which)
    original = index.read_bytes()
    assert original, "the fixture's segments are large enough to be indexed"
    damage(index)
    log = open_log(written.directory)
    assert index.read_bytes() == original
    assert numbers(log.read(13, max_records=3)) == [13, 14, 15]
    assert numbers(log.read(0)) == list(range(25))


def test_a_corrupt_sealed_segment_without_index_cannot_be_repaired(
    written: PartitionLog,
) -> None:
    written.close()
    first = segment(written.directory, ".log", 0)
    data = bytearray(first.read_bytes())
    data[50] ^= 0x01
    first.write_bytes(bytes(data))
    segment(written.directory, ".index", 0).unlink()
    with pytest.raises(CorruptLogError, match="batches stop"):
        open_log(written.directory)


def test_corruption_in_a_sealed_segment_surfaces_on_read(written: PartitionLog) -> None:
    written.close()
    first = segment(written.directory, ".log", 0)
    data = bytearray(first.read_bytes())
    data[50] ^= 0x01
    first.write_bytes(bytes(data))
    log = open_log(written.directory)
    assert numbers(log.read(5)) == list(range(5, 25))
    with pytest.raises(CorruptLogError, match="CRC"):
        log.read(0)


def test_a_missing_middle_segment_is_corruption(written: PartitionLog) -> None:
    written.close()
    segment(written.directory, ".log", 1).unlink()
    with pytest.raises(CorruptLogError, match="ends at 10"):
        open_log(written.directory)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.unlink(), id="missing"),
        pytest.param(lambda path: path.write_bytes(b"0\n7\n1 1\n"), id="garbage"),
    ],
)
def test_a_lost_epoch_checkpoint_is_rebuilt_from_the_records(
    written: PartitionLog, damage: Callable[[Path], None]
) -> None:
    written.close()
    damage(written.directory / LEADER_EPOCH_CHECKPOINT)
    log = open_log(written.directory)
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12)]
    assert (written.directory / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n2\n0 0\n3 12\n"


def test_epoch_entries_past_the_log_end_are_dropped(written: PartitionLog) -> None:
    written.close()
    checkpoint = written.directory / LEADER_EPOCH_CHECKPOINT
    checkpoint.write_text("0\n3\n0 0\n3 12\n9 25\n")
    assert open_log(written.directory).epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12)]


def test_an_epoch_the_checkpoint_missed_is_learned_from_the_last_segment(
    written: PartitionLog,
) -> None:
    written.close()
    (written.directory / LEADER_EPOCH_CHECKPOINT).write_text("0\n1\n0 0\n")
    assert open_log(written.directory).epoch_entries() == [EpochEntry(0, 0), EpochEntry(3, 12)]


def test_a_garbage_high_watermark_checkpoint_cannot_be_repaired(written: PartitionLog) -> None:
    written.close()
    (written.directory / HW_CHECKPOINT).write_bytes(b"twenty\n")
    with pytest.raises(CorruptLogError, match="high watermark"):
        open_log(written.directory)


@pytest.mark.parametrize(("content", "expected"), [(None, 0), (b"999\n", 25), (b"7\n", 7)])
def test_the_high_watermark_checkpoint_is_clamped_to_the_log(
    written: PartitionLog, content: bytes | None, expected: int
) -> None:
    written.close()
    checkpoint = written.directory / HW_CHECKPOINT
    if content is None:
        checkpoint.unlink()
    else:
        checkpoint.write_bytes(content)
    assert open_log(written.directory).high_watermark == expected


def test_leftovers_of_interrupted_writes_are_removed(written: PartitionLog) -> None:
    written.close()
    directory = written.directory
    (directory / f"{HW_CHECKPOINT}.tmp").write_bytes(b"half")
    (directory / "00000000000000000099.index").write_bytes(b"")
    (directory / "notes.txt").write_bytes(b"not ours")
    open_log(directory)
    assert not (directory / f"{HW_CHECKPOINT}.tmp").exists()
    assert not (directory / "00000000000000000099.index").exists()
    assert (directory / "notes.txt").exists()


def test_an_epoch_starting_inside_the_last_segment_is_recovered(
    written: PartitionLog,
) -> None:
    written.append_as_leader(batch(2, start=25), 5)
    written.close()
    (written.directory / LEADER_EPOCH_CHECKPOINT).write_text("0\n2\n0 0\n3 12\n")
    assert open_log(written.directory).epoch_entries() == [
        EpochEntry(0, 0),
        EpochEntry(3, 12),
        EpochEntry(5, 25),
    ]


@pytest.mark.parametrize("cut", [1, 84, 84 * 3, 84 * 4 + BATCH_HEADER_BYTES - 1])
def test_a_torn_batch_of_several_records_goes_whole(tmp_path: Path, cut: int) -> None:
    log = open_log(tmp_path / "topic-0")
    log.append_as_leader(batch(2), 0)
    log.append_as_leader(batch(4, start=2), 1)
    directory = killed_copy(log, tmp_path / "killed")
    last = segment(directory, ".log")
    with last.open("r+b") as file:
        file.truncate(last.stat().st_size - cut)
    recovered = open_log(directory)
    assert numbers(recovered.read(0)) == [0, 1]
    assert recovered.epoch_entries() == [EpochEntry(0, 0)]
    assert last.stat().st_size == BATCH_HEADER_BYTES + 2 * 84


def per_record_segment(count: int) -> bytes:
    """`count` records in the per-record format that preceded record batches."""
    data = b""
    for offset in range(count):
        body = struct.pack(">qiqii", offset, 0, 1000, -1, 3) + b"old"
        data += struct.pack(">II", len(body) + 4, zlib.crc32(body)) + body
    return data


@pytest.mark.parametrize("count", [1, 5])
def test_a_directory_in_the_per_record_format_is_refused_untouched(
    tmp_path: Path, count: int
) -> None:
    directory = tmp_path / "topic-0"
    directory.mkdir()
    old = per_record_segment(count)
    (directory / "00000000000000000000.log").write_bytes(old)
    with pytest.raises(LegacyLogFormatError, match=f"{directory}.*per-record log format"):
        open_log(directory)
    assert (directory / "00000000000000000000.log").read_bytes() == old
