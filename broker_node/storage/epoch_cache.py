"""The leader-epoch cache (Kafka's `LeaderEpochFileCache`, KIP-101): for each leader epoch
that wrote records to this replica, the offset of its first record.

`end_offset_for` answers OffsetsForLeaderEpoch as a Kafka 2.8 leader does; it is a pure
function of the entries. `LeaderEpochCache` holds the entries in memory; `PartitionLog`
persists them (`checkpoints`) after every change.

Threads: `end_offset_for` is pure (any thread). `LeaderEpochCache` is not thread-safe; only
`PartitionLog`, holding its lock, calls it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_OFFSET",
    "EpochEntry",
    "LeaderEpochCache",
    "end_offset_for",
]

UNDEFINED_EPOCH = -1
"""Kafka's `OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH`."""
UNDEFINED_OFFSET = -1
"""Kafka's `OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET`."""


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """Leader epoch `epoch` wrote its first record at `start_offset`."""

    epoch: int
    start_offset: int


def end_offset_for(
    entries: Sequence[EpochEntry], requested_epoch: int, log_end_offset: int
) -> tuple[int, int]:
    """(epoch, end offset) for OffsetsForLeaderEpoch, as a Kafka 2.8 leader answers it.

    `entries` ascend by epoch. Case by case:

    - requested is UNDEFINED_EPOCH, or the cache is empty: (UNDEFINED_EPOCH, UNDEFINED_OFFSET);
    - requested is below the first cached epoch: (requested, the first entry's start offset),
      as Kafka 2.8's code answers (its scaladoc still says UNDEFINED_EPOCH_OFFSET);
    - requested is the latest cached epoch or above it: (latest epoch, log end offset);
    - otherwise: (largest cached epoch <= requested, start offset of the next cached epoch).

    Above the latest epoch, Kafka's cache alone would answer undefined; but a Kafka leader
    caches its own epoch at the log end when elected (`maybeAssignEpochStartOffset`), so
    the leader answers (latest epoch with records, log end offset at election). This log
    caches an epoch only with its first record, and this rule gives that same answer.
    """
    if requested_epoch == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_OFFSET
    if requested_epoch >= entries[-1].epoch:
        return entries[-1].epoch, log_end_offset
    epochs = [entry.epoch for entry in entries]
    higher = bisect.bisect_right(epochs, requested_epoch)
    if higher == 0:
        return requested_epoch, entries[0].start_offset
    return entries[higher - 1].epoch, entries[higher].start_offset


class LeaderEpochCache:
    """Epoch entries in memory, strictly ascending in both epoch and start offset."""

    def __init__(self, entries: Sequence[EpochEntry] = ()) -> None:
        self._entries: list[EpochEntry] = []
        self._changes = 0
        for entry in entries:
            self.assign(entry.epoch, entry.start_offset)

    @property
    def entries(self) -> list[EpochEntry]:
        """A copy of the entries, ascending."""
        return list(self._entries)

    @property
    def changes(self) -> int:
        """How many times the entries changed: equal counts mean equal entries."""
        return self._changes

    @property
    def latest_epoch(self) -> int:
        """The newest cached epoch, UNDEFINED_EPOCH when empty."""
        return self._entries[-1].epoch if self._entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that `epoch` starts at `start_offset` if it is newer than the latest
        epoch; return whether the cache changed. An epoch that is not newer is ignored."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"invalid epoch entry ({epoch}, {start_offset})")
        if epoch <= self.latest_epoch:
            return False
        if self._entries and start_offset <= self._entries[-1].start_offset:
            raise ValueError(f"epoch {epoch} at {start_offset} does not follow {self._entries[-1]}")
        self._entries.append(EpochEntry(epoch, start_offset))
        self._changes += 1
        return True

    def truncate_from_end(self, end_offset: int) -> bool:
        """Drop entries whose start offset is at or past `end_offset`; return whether any."""
        keep = len(self._entries)
        while keep and self._entries[keep - 1].start_offset >= end_offset:
            keep -= 1
        if keep == len(self._entries):
            return False
        del self._entries[keep:]
        self._changes += 1
        return True

    def start_offset_of(self, epoch: int) -> int | None:
        """The start offset of `epoch`, None if it is not cached."""
        for entry in self._entries:
            if entry.epoch == epoch:
                return entry.start_offset
        return None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """`end_offset_for` over this cache's entries."""
        return end_offset_for(self._entries, requested_epoch, log_end_offset)
