"""What an append may write: pure decisions, taken before a byte reaches the disk.

- `leader_append_problem`: a leader may append only in its epoch or a newer one.
- `follower_append_problem`: a follower's records must continue the log exactly (first
  offset = log end offset, contiguous) with valid, non-decreasing leader epochs
  (`follower_batches_problem` decides it for whole batches from their headers).
- `split_for_segments`: which batches of an append go to the active segment and which
  start new segments.

Pure functions; any thread may call them.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker_node.storage.record import BatchHeader, Record

__all__ = [
    "follower_append_problem",
    "follower_batches_problem",
    "leader_append_problem",
    "split_for_segments",
]


def leader_append_problem(leader_epoch: int, latest_epoch: int) -> str | None:
    """Why a leader append in `leader_epoch` is refused, None if it may go ahead."""
    if leader_epoch < 0:
        return f"invalid leader epoch {leader_epoch}"
    if leader_epoch < latest_epoch:
        return f"leader epoch {leader_epoch} is older than the latest epoch {latest_epoch}"
    return None


def follower_append_problem(
    records: Sequence[Record], log_end_offset: int, latest_epoch: int
) -> str | None:
    """Why a follower append of `records` is refused, None if it may go ahead.

    Refused: a first offset other than the log end offset (a gap or an overlap), offsets
    that are not contiguous, a negative leader epoch, or an epoch older than the one
    before it (the latest cached epoch, then the previous record's).
    """
    return follower_batches_problem(
        [BatchHeader(r.offset, 0, r.leader_epoch, 1) for r in records],
        log_end_offset,
        latest_epoch,
    )


def follower_batches_problem(
    batches: Sequence[BatchHeader], log_end_offset: int, latest_epoch: int
) -> str | None:
    """`follower_append_problem` of whole batches given by their headers (the records of
    a batch are contiguous and share its epoch): each must start where the one before
    ends, the first at the log end offset."""
    expected_offset = log_end_offset
    previous_epoch = latest_epoch
    for batch in batches:
        offset, epoch = batch.base_offset, batch.leader_epoch
        if offset != expected_offset:
            kind = "gap" if offset > expected_offset else "overlap"
            return f"batch at offset {offset} where {expected_offset} was expected ({kind})"
        if epoch < 0:
            return f"batch {offset} has invalid leader epoch {epoch}"
        if epoch < previous_epoch:
            return f"batch {offset} has leader epoch {epoch}, older than {previous_epoch}"
        expected_offset = batch.next_offset
        previous_epoch = epoch
    return None


def split_for_segments(sizes: Sequence[int], active_size: int, segment_bytes: int) -> list[int]:
    """How many consecutive batches go to each segment, for batches of `sizes` bytes.

    The first count is for the active segment (which holds `active_size` bytes; it may be
    0 when the active segment must roll first); each further count starts a new segment.
    A batch rolls the segment when it would push a non-empty segment past
    `segment_bytes`, so a segment exceeds it only when it holds a single larger batch.
    """
    if active_size + sum(sizes) <= segment_bytes:
        return [len(sizes)]
    counts = [0]
    current = active_size
    for size in sizes:
        if current > 0 and current + size > segment_bytes:
            counts.append(0)
            current = 0
        counts[-1] += 1
        current += size
    return counts
