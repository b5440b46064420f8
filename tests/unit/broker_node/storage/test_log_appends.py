"""Pure append decisions: leader epochs, follower batches, and splitting across segments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_node.storage import Record
from broker_node.storage.appends import (
    follower_append_problem,
    leader_append_problem,
    split_for_segments,
)


@pytest.mark.parametrize(
    ("leader_epoch", "latest_epoch", "refused"),
    [
        pytest.param(0, -1, False, id="first-epoch-on-empty-cache"),
        pytest.param(5, 5, False, id="same-epoch"),
        pytest.param(6, 5, False, id="newer-epoch"),
        pytest.param(4, 5, True, id="older-epoch"),
        pytest.param(-1, -1, True, id="negative-epoch"),
    ],
)
def test_leader_append_epochs(leader_epoch: int, latest_epoch: int, refused: bool) -> None:
    assert (leader_append_problem(leader_epoch, latest_epoch) is not None) is refused


def batch(first: int, *epochs: int) -> list[Record]:
    return [Record(first + i, epoch, 0, None, b"v") for i, epoch in enumerate(epochs)]


@pytest.mark.parametrize(
    ("records", "problem"),
    [
        pytest.param(batch(10, 3, 3, 4), None, id="continues-the-log"),
        pytest.param([], None, id="empty-batch"),
        pytest.param(batch(11, 3), "gap", id="gap"),
        pytest.param(batch(9, 3, 3), "overlap", id="overlap"),
        pytest.param([*batch(10, 3), *batch(12, 3)], "gap", id="hole-inside-the-batch"),
        pytest.param(batch(10, 2), "older than 3", id="epoch-older-than-the-cache"),
        pytest.param(batch(10, 4, 3), "older than 4", id="epoch-going-back-in-the-batch"),
        pytest.param(batch(10, -1), "invalid leader epoch", id="negative-epoch"),
    ],
)
def test_follower_batches(records: list[Record], problem: str | None) -> None:
    found = follower_append_problem(records, 10, 3)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


@pytest.mark.parametrize(
    ("sizes", "active_size", "counts"),
    [
        pytest.param([10, 10], 0, [2], id="fits"),
        pytest.param([10, 10], 95, [0, 2], id="rolls-before-the-first"),
        pytest.param([30, 30, 30, 30], 0, [3, 1], id="rolls-in-the-middle"),
        pytest.param([150], 0, [1], id="oversized-record-alone-in-an-empty-segment"),
        pytest.param([150, 10], 50, [0, 1, 1], id="oversized-record-gets-its-own-segment"),
        pytest.param([], 50, [0], id="nothing"),
    ],
)
def test_split_for_segments(sizes: list[int], active_size: int, counts: list[int]) -> None:
    assert split_for_segments(sizes, active_size, 100) == counts


@given(
    st.lists(st.integers(1, 200), max_size=30),
    st.integers(0, 100),
    st.integers(1, 150),
)
def test_split_keeps_every_record_and_segments_within_bounds(
    sizes: list[int], active_size: int, segment_bytes: int
) -> None:
    counts = split_for_segments(sizes, active_size, segment_bytes)
    assert sum(counts) == len(sizes)
    assert all(count > 0 for count in counts[1:])
    start = 0
    for n, count in enumerate(counts):
        chunk = sizes[start : start + count]
        filled = (active_size if n == 0 else 0) + sum(chunk)
        alone = len(chunk) == 1 and filled == chunk[0]
        assert not chunk or filled <= segment_bytes or alone
        start += count
