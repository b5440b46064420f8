"""`PartitionLog`'s leader-epoch cache: filled by leader and follower appends, answering
OffsetsForLeaderEpoch (Kafka 2.8's cases), truncated with the log, checkpointed."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_node.storage import (
    UNDEFINED_EPOCH,
    UNDEFINED_OFFSET,
    EpochEntry,
    LogError,
    PartitionLog,
    Record,
)
from broker_node.storage.checkpoints import LEADER_EPOCH_CHECKPOINT


def batch(n: int) -> list[tuple[bytes | None, bytes, int]]:
    return [(None, f"{i:064d}".encode(), 1000 + i) for i in range(n)]


@pytest.fixture
def log(tmp_path: Path) -> PartitionLog:
    return PartitionLog(tmp_path / "topic-0")


def test_leader_appends_record_each_new_epoch(log: PartitionLog) -> None:
    log.append_as_leader(batch(3), 0)
    log.append_as_leader(batch(2), 0)
    log.append_as_leader(batch(4), 2)
    log.append_as_leader(batch(1), 5)
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 5), EpochEntry(5, 9)]
    assert log.latest_epoch() == 5
    assert log.epoch_start_offset(2) == 5
    assert log.epoch_start_offset(3) is None


def test_an_older_leader_epoch_is_rejected_and_writes_nothing(log: PartitionLog) -> None:
    log.append_as_leader(batch(3), 4)
    with pytest.raises(LogError, match="older"):
        log.append_as_leader(batch(3), 3)
    with pytest.raises(LogError, match="invalid"):
        log.append_as_leader(batch(3), -1)
    assert log.log_end_offset == 3
    assert log.epoch_entries() == [EpochEntry(4, 0)]


def test_follower_appends_learn_epochs_from_the_records(log: PartitionLog) -> None:
    log.append_as_follower([Record(0, 1, 0, None, b"a"), Record(1, 1, 0, None, b"b")])
    log.append_as_follower([Record(2, 1, 0, None, b"c"), Record(3, 3, 0, None, b"d")])
    log.append_as_follower([Record(4, 3, 0, None, b"e"), Record(5, 6, 0, b"k", b"f")])
    assert log.epoch_entries() == [EpochEntry(1, 0), EpochEntry(3, 3), EpochEntry(6, 5)]
    assert [r.value for r in log.read(0)] == [b"a", b"b", b"c", b"d", b"e", b"f"]
    assert log.read(5) == [Record(5, 6, 0, b"k", b"f")]


def test_end_offset_for_epoch_answers_from_the_log(log: PartitionLog) -> None:
    log.append_as_leader(batch(5), 0)
    log.append_as_leader(batch(5), 2)
    log.append_as_leader(batch(2), 5)
    undefined = (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    expected = {
        5: (5, 12),  # the latest epoch ends at the LEO
        4: (2, 10),
        3: (2, 10),
        2: (2, 10),
        1: (0, 5),
        0: (0, 5),
        6: (5, 12),  # above the latest: as a Kafka leader, which caches its own epoch
        UNDEFINED_EPOCH: undefined,
    }
    assert {epoch: log.end_offset_for_epoch(epoch) for epoch in expected} == expected


def test_end_offset_for_epoch_below_the_first_and_on_an_empty_cache(log: PartitionLog) -> None:
    assert log.end_offset_for_epoch(0) == (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
    log.append_as_follower([Record(0, 3, 0, None, b"v"), Record(1, 4, 0, None, b"v")])
    assert log.end_offset_for_epoch(1) == (1, 0)


def test_truncation_truncates_the_epoch_cache(log: PartitionLog) -> None:
    log.append_as_leader(batch(5), 0)
    log.append_as_leader(batch(5), 2)
    log.append_as_leader(batch(2), 5)
    log.truncate_to(10)
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(2, 5)]
    log.truncate_to(6)  # inside the batch 5..9 of epoch 2: the whole batch goes
    assert log.log_end_offset == 5
    assert log.epoch_entries() == [EpochEntry(0, 0)]
    assert log.end_offset_for_epoch(2) == (0, 5), "epoch 2 is gone: epoch 0 now ends the log"
    log.append_as_leader(batch(1), 7)
    assert log.epoch_entries() == [EpochEntry(0, 0), EpochEntry(7, 5)]
    checkpoint = (log.directory / LEADER_EPOCH_CHECKPOINT).read_text()
    assert checkpoint == "0\n2\n0 0\n7 5\n"
