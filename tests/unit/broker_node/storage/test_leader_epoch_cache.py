"""The leader-epoch cache: Kafka 2.8's OffsetsForLeaderEpoch answers as tables, the cache's
assign/truncate rules, and the leader-epoch-checkpoint text format."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_node.storage import UNDEFINED_EPOCH, UNDEFINED_OFFSET, CorruptLogError, EpochEntry
from broker_node.storage.checkpoints import (
    decode_epoch_checkpoint,
    decode_hw_checkpoint,
    encode_epoch_checkpoint,
    encode_hw_checkpoint,
)
from broker_node.storage.epoch_cache import LeaderEpochCache, end_offset_for

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_OFFSET)
# Epoch 0 wrote [10, 13), epoch 2 wrote [13, 17), epoch 4 wrote [17, LEO=20).
CACHE = [EpochEntry(0, 10), EpochEntry(2, 13), EpochEntry(4, 17)]
LEO = 20


@pytest.mark.parametrize(
    ("entries", "requested", "expected"),
    [
        pytest.param(CACHE, 4, (4, LEO), id="latest-epoch-ends-at-the-log-end"),
        pytest.param(CACHE, 2, (2, 17), id="cached-epoch-ends-where-the-next-starts"),
        pytest.param(CACHE, 0, (0, 13), id="first-cached-epoch"),
        pytest.param(CACHE, 1, (0, 13), id="between-epochs-gives-the-largest-below"),
        pytest.param(CACHE, 3, (2, 17), id="between-later-epochs"),
        # Above the latest epoch: Kafka's cache alone says undefined, but a Kafka leader has
        # its own epoch cached at the LEO from its election, and so answers like this.
        pytest.param(CACHE, 5, (4, LEO), id="above-the-latest-epoch-ends-at-the-log-end"),
        pytest.param(CACHE, UNDEFINED_EPOCH, UNDEFINED, id="undefined-epoch-requested"),
        pytest.param([], 0, UNDEFINED, id="empty-cache"),
        pytest.param([], UNDEFINED_EPOCH, UNDEFINED, id="empty-cache-undefined-epoch"),
        # Kafka 2.8 answers (requested epoch, first start offset) below the first cached
        # epoch (LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch),
        # although its scaladoc still says UNDEFINED_EPOCH_OFFSET.
        pytest.param(
            [EpochEntry(5, 11), EpochEntry(6, 12)], 4, (4, 11), id="below-the-first-epoch"
        ),
        pytest.param([EpochEntry(3, 0)], 3, (3, LEO), id="single-epoch-latest"),
        pytest.param(
            [EpochEntry(0, 10), EpochEntry(2, 13), EpochEntry(4, 17)],
            1,
            (0, 13),
            id="kafka-next-available-epoch",
        ),
    ],
)
def test_end_offset_for(
    entries: list[EpochEntry], requested: int, expected: tuple[int, int]
) -> None:
    assert end_offset_for(entries, requested, LEO) == expected


def test_assign_keeps_only_newer_epochs() -> None:
    cache = LeaderEpochCache()
    assert cache.latest_epoch == UNDEFINED_EPOCH
    assert cache.assign(1, 0)
    assert not cache.assign(1, 5), "the same epoch keeps its first start offset"
    assert not cache.assign(0, 6), "an older epoch is ignored"
    assert cache.assign(3, 7)
    assert cache.entries == [EpochEntry(1, 0), EpochEntry(3, 7)]
    assert cache.start_offset_of(3) == 7
    assert cache.start_offset_of(2) is None


@pytest.mark.parametrize(
    ("epoch", "start_offset"),
    [
        pytest.param(-1, 0, id="negative-epoch"),
        pytest.param(4, -1, id="negative-offset"),
        pytest.param(4, 7, id="start-not-after-the-latest-entry"),
    ],
)
def test_assign_rejects_invalid_entries(epoch: int, start_offset: int) -> None:
    cache = LeaderEpochCache([EpochEntry(3, 7)])
    with pytest.raises(ValueError, match="epoch"):
        cache.assign(epoch, start_offset)


def test_changes_count_every_change_and_nothing_else() -> None:
    """A log compares the count with the one its checkpoint was written at."""
    cache = LeaderEpochCache()
    assert cache.changes == 0
    cache.assign(1, 0)
    cache.assign(1, 5)  # ignored
    cache.assign(2, 6)
    assert cache.changes == 2
    cache.truncate_from_end(9)  # nothing starts there
    assert cache.changes == 2
    cache.truncate_from_end(6)
    cache.assign(3, 6)  # the same length as before the truncation, other entries
    assert cache.changes == 4


def test_truncate_from_end_drops_entries_starting_at_or_after_the_offset() -> None:
    cache = LeaderEpochCache(CACHE)
    assert not cache.truncate_from_end(18)
    assert cache.truncate_from_end(17)
    assert cache.entries == CACHE[:2]
    assert cache.truncate_from_end(0)
    assert cache.entries == []


def test_checkpoint_has_kafkas_text_format() -> None:
    data = encode_epoch_checkpoint(CACHE)
    assert data == b"0\n3\n0 10\n2 13\n4 17\n"
    assert decode_epoch_checkpoint(data, Path("x")) == CACHE
    assert encode_epoch_checkpoint([]) == b"0\n0\n"
    assert decode_epoch_checkpoint(b"0\n0\n", Path("x")) == []


entry_lists = st.lists(st.tuples(st.integers(1, 50), st.integers(1, 10**6)), max_size=20).map(
    lambda steps: [
        EpochEntry(sum(e for e, _ in steps[: i + 1]), sum(o for _, o in steps[: i + 1]))
        for i in range(len(steps))
    ]
)


@given(entry_lists)
def test_checkpoint_round_trips(entries: list[EpochEntry]) -> None:
    assert decode_epoch_checkpoint(encode_epoch_checkpoint(entries), Path("x")) == entries


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty-file"),
        pytest.param(b"1\n0\n", id="unknown-version"),
        pytest.param(b"0\n2\n0 10\n", id="count-too-high"),
        pytest.param(b"0\n1\n0 10\n2 13\n", id="count-too-low"),
        pytest.param(b"0\n1\n0\n", id="one-field"),
        pytest.param(b"0\n1\n0 10 3\n", id="three-fields"),
        pytest.param(b"0\n1\n-1 10\n", id="negative-epoch"),
        pytest.param(b"0\n1\nx 10\n", id="not-a-number"),
        pytest.param(b"0\n2\n2 10\n1 13\n", id="epochs-descending"),
        pytest.param(b"0\n2\n1 10\n2 10\n", id="start-offsets-not-increasing"),
        pytest.param(b"\xff\xfe", id="not-ascii"),
    ],
)
def test_malformed_checkpoints_are_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptLogError):
        decode_epoch_checkpoint(data, Path("x"))


def test_hw_checkpoint_is_one_integer() -> None:
    assert encode_hw_checkpoint(42) == b"42\n"
    assert decode_hw_checkpoint(b"42\n", Path("x")) == 42
    for bad in (b"", b"-1\n", b"4 2\n", b"x\n", b"\xff"):
        with pytest.raises(CorruptLogError):
            decode_hw_checkpoint(bad, Path("x"))
