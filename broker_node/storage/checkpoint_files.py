"""`CheckpointFiles`: what a log's `leader-epoch-checkpoint` and `hw-checkpoint` hold,
so that each is rewritten only when its content changed (closing thousands of logs
rewrites none), and the clock that writes a rising high watermark at most once an
interval (Kafka's `replica.high.watermark.checkpoint.interval.ms`). Called by
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
from broker_node.storage.log_loader import LoadedLog

#: The epoch checkpoint of a log without epochs (a new log has none).
_NO_EPOCHS = encode_epoch_checkpoint([])


class CheckpointFiles:
    """The two checkpoint files of one log directory, as last written or read."""

    def __init__(
        self,
        directory: Path,
        fsync: bool,
        make_directory: Callable[[], None],
        hw_interval_s: float,
    ) -> None:
        """`hw_interval_s`: a rising high watermark is written at most this often."""
        self._directory = directory
        self._hw_interval_s = hw_interval_s
        self._fsync = fsync
        #: creates the log's directory before its first file
        self._make_directory = make_directory
        self._clock: Callable[[], float] = time.monotonic
        self._hw_on_disk: int | None = None
        self._epochs_on_disk: bytes | None = None
        #: the epoch cache's `changes` when `_epochs_on_disk` was last compared with it
        self._epochs_compared = -1
        self._hw_written_at = -math.inf

    def after_recovery(self, loaded: LoadedLog) -> None:
        """Learn what the files hold once recovery opened the log: a new log's missing
        checkpoints read as no epochs and its high watermark (written on change); an epoch
        checkpoint that recovery changed, or that is missing, is written; the high
        watermark is written if it differs, without starting the interval's clock."""
        epochs = loaded.epochs
        if loaded.fresh:
            self._epochs_on_disk = _NO_EPOCHS
            self._epochs_compared = epochs.changes
            self._hw_on_disk = loaded.high_watermark
        elif loaded.epochs_changed or not (self._directory / LEADER_EPOCH_CHECKPOINT).exists():
            self.write_epochs(epochs)
        else:  # the epoch checkpoint holds the epochs as recovery read them
            self._epochs_on_disk = encode_epoch_checkpoint(epochs.entries)
            self._epochs_compared = epochs.changes
        self.store_hw(loaded.high_watermark)

    def current(self, epochs: LeaderEpochCache, high_watermark: int) -> bool:
        """Whether both files already hold `epochs` and `high_watermark`."""
        return epochs.changes == self._epochs_compared and self._hw_on_disk == high_watermark

    def hw_due(self) -> bool:
        """Whether a rising high watermark may be written now (once an interval)."""
        return self._clock() - self._hw_written_at >= self._hw_interval_s

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
        """Write the high watermark if it changed, and restart the interval's clock."""
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
