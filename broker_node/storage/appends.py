"""What an append may write: pure decisions, taken before a byte reaches the disk.

- `leader_append_problem`: a leader may append only in its epoch or a newer one.
- `follower_append_problem`: a follower's records must continue the log exactly (first
  offset = log end offset, contiguous) with valid, non-decreasing leader epochs.
- `split_for_segments`: which records of a batch go to the active segment and which start
  new segments.

Pure functions; any thread may call them.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker_node.storage.record import Record

__all__ = ["follower_append_problem", "leader_append_problem", "split_for_segments"]


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
    expected_offset = log_end_offset
    previous_epoch = latest_epoch
    for record in records:
        if record.offset != expected_offset:
            kind = "gap" if record.offset > expected_offset else "overlap"
            return f"offset {record.offset} where {expected_offset} was expected ({kind})"
        if record.leader_epoch < 0:
            return f"record {record.offset} has invalid leader epoch {record.leader_epoch}"
        if record.leader_epoch < previous_epoch:
            return (
                f"record {record.offset} has leader epoch {record.leader_epoch}, "
                f"older than {previous_epoch}"
            )
        expected_offset += 1
        previous_epoch = record.leader_epoch
    return None


def split_for_segments(sizes: Sequence[int], active_size: int, segment_bytes: int) -> list[int]:
    """How many consecutive records go to each segment, for records of `sizes` bytes.

    The first count is for the active segment (which holds `active_size` bytes; it may be
    0 when the active segment must roll first); each further count starts a new segment.
    A record rolls the segment when it would push a non-empty segment past
    `segment_bytes`, so a segment exceeds it only when it holds a single larger record.
    """
    counts = [0]
    current = active_size
    for size in sizes:
        if current > 0 and current + size > segment_bytes:
            counts.append(0)
            current = 0
        counts[-1] += 1
        current += size
    return counts
