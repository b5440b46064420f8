"""Errors of the partition log.

    LogError                      any storage failure a caller can act on
    ├── OffsetOutOfRangeError     a read below the log start or above the log end offset
    └── CorruptLogError           damage that recovery cannot repair
        ├── InvalidRecordError    a batch that fails its length or CRC check, at `position`
        └── LegacyLogFormatError  a directory written in the earlier per-record format

`OSError` from the file system passes through unchanged. Arguments that no caller could
legitimately pass (a negative `max_records`, a `segment_bytes` of zero) raise `ValueError`.

Threads: none of its own; raised on whichever thread called into the log.
"""

from __future__ import annotations


class LogError(Exception):
    """Root of the errors raised by `broker_node.storage`."""


class OffsetOutOfRangeError(LogError):
    """The requested offset is below the log start offset or above the log end offset."""

    def __init__(self, offset: int, log_start_offset: int, log_end_offset: int) -> None:
        super().__init__(f"offset {offset} is out of range [{log_start_offset}, {log_end_offset}]")
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset


class CorruptLogError(LogError):
    """Damage that recovery cannot repair: a bad record before the last segment (so its
    index cannot be rebuilt), or a high-watermark checkpoint that does not parse."""


class LegacyLogFormatError(CorruptLogError):
    """A log directory written in the per-record format that preceded record batches: it
    is refused whole, named in the message, rather than misread as torn batches."""


class InvalidRecordError(CorruptLogError):
    """The bytes at `position` of a segment are not a whole, intact record batch.

    Recovery catches it in the last segment and truncates there; anywhere else it
    reaches the caller as a `CorruptLogError`.
    """

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(f"invalid record at position {position}: {reason}")
        self.position = position
        self.reason = reason
