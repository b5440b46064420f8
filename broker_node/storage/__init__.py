"""The on-disk partition log a broker keeps for each replica it hosts: Kafka's `Log`,
`LogSegment`, `OffsetIndex` and `LeaderEpochFileCache`, much simplified but real.

    PartitionLog(directory)   segments, offset indexes, leader-epoch and HW checkpoints;
                              recovers a torn tail when it opens the directory

Errors:

    LogError                      any storage failure a caller can act on
    ├── OffsetOutOfRangeError     a read below the log start or above the log end offset
    └── CorruptLogError           damage that recovery cannot repair

`OSError` passes through unchanged; impossible arguments raise `ValueError`.

Modules behind this surface, one concept each: `record` (the record format), `offset_index`,
`segment`, `epoch_cache` (with the pure OffsetsForLeaderEpoch decision), `checkpoints`
(both checkpoint file formats), `appends` (pure append checks), `log_loader` (recovery),
`partition_log`; and `testing`, whose `InMemoryPartitionLog` is a test double of the log.

Threads: every `PartitionLog` method is safe from any thread (one lock per log).
"""

from broker_node.storage.epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_OFFSET,
    EpochEntry,
)
from broker_node.storage.errors import CorruptLogError, LogError, OffsetOutOfRangeError
from broker_node.storage.partition_log import PartitionLog
from broker_node.storage.record import Record

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_OFFSET",
    "CorruptLogError",
    "EpochEntry",
    "LogError",
    "OffsetOutOfRangeError",
    "PartitionLog",
    "Record",
]
