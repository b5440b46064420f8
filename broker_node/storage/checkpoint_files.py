"""`CheckpointFiles`: what a log's `leader-epoch-checkpoint` and `hw-checkpoint` hold,
so that each is rewritten only when its content changed (closing thousands of logs
rewrites none), and the once-a-second clock of high-watermark rises. Called by
`PartitionLog` under its lock, on whatever thread holds it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

from broker_node.storage.checkpoints import (
    HW_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT,
    atomic_write,
    encode_epoch_checkpoint,
    encode_hw_checkpoint,
)
from broker_node.storage.epoch_cache import LeaderEpochCache

HW_CHECKPOINT_INTERVAL_S = 1.0
"""A rising high watermark is written to `hw-checkpoint` at most this often."""

#: The epoch checkpoint of a log without epochs (a new log has none).
_NO_EPOCHS = encode_epoch_checkpoint([])


class CheckpointFiles:
    """The two checkpoint files of one log directory, as last written or read."""

    def __init__(self, directory: Path, fsync: bool, make_directory: Callable[[], None]) -> None:
        self._directory = directory
        self._fsync = fsync
        #: creates the log's directory before its first file
        self._make_directory = make_directory
        self._clock: Callable[[], float] = time.monotonic
        self._hw_on_disk: int | None = None
        self._epochs_on_disk: bytes | None = None
        #: the epoch cache's `changes` when `_epochs_on_disk` was last compared with it
        self._epochs_compared = -1
        self._hw_written_at = -math.inf

    def assume_fresh(self, epochs: LeaderEpochCache, high_watermark: int) -> None:
        """A new log: its missing checkpoints read as no epochs and `high_watermark`."""
        self._epochs_on_disk = _NO_EPOCHS
        self._epochs_compared = epochs.changes
        self._hw_on_disk = high_watermark

    def assume_epochs_written(self, epochs: LeaderEpochCache) -> None:
        """The epoch checkpoint holds `epochs` as recovery read them."""
        self._epochs_on_disk = encode_epoch_checkpoint(epochs.entries)
        self._epochs_compared = epochs.changes

    def current(self, epochs: LeaderEpochCache, high_watermark: int) -> bool:
        """Whether both files already hold `epochs` and `high_watermark`."""
        return epochs.changes == self._epochs_compared and self._hw_on_disk == high_watermark

    def hw_due(self) -> bool:
        """Whether a rising high watermark may be written now (once a second)."""
        return self._clock() - self._hw_written_at >= HW_CHECKPOINT_INTERVAL_S

    def write_epochs(self, epochs: LeaderEpochCache) -> None:
        """Write the epoch cache unless the file already holds exactly these bytes (every
        change is written when it happens, so closing thousands of logs rewrites none)."""
        changes = epochs.changes
        if changes == self._epochs_compared:
            return
        data = encode_epoch_checkpoint(epochs.entries)
        if data != self._epochs_on_disk:
            self._make_directory()
            atomic_write(self._directory / LEADER_EPOCH_CHECKPOINT, data, self._fsync)
            self._epochs_on_disk = data
        self._epochs_compared = changes

    def write_hw(self, high_watermark: int) -> None:
        """Write the high watermark if it changed, and restart the once-a-second clock."""
        self.store_hw(high_watermark)
        self._hw_written_at = self._clock()

    def store_hw(self, high_watermark: int) -> None:
        """Write the high watermark if it changed, leaving the clock as it is."""
        if self._hw_on_disk != high_watermark:
            self._make_directory()
            atomic_write(
                self._directory / HW_CHECKPOINT,
                encode_hw_checkpoint(high_watermark),
                self._fsync,
            )
            self._hw_on_disk = high_watermark
