"""Log-directory failures (KIP-112): a broker takes a failed directory offline, the
controller handles the notifications brokers write.

Written by the broker's `log-dir-failure-handler` thread and by the controller.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event

__all__ = ["LogDirEventHandled", "LogDirFailed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LogDirFailed(Event):
    """A broker took its log directory offline.

    `log_dir_failure.py`, `log-dir-failure-handler`.

    An I/O error in the log directory (an append, a read, an fsync, a checkpoint write, a
    log that could not be created) took the whole directory offline: its replicas stopped
    fetching and answer `KAFKA_STORAGE_ERROR`. `action` says what followed (see
    [kafka-differences.md](kafka-differences.md)).
    """

    kind: ClassVar[str] = "log_dir_failed"

    log_dir: str
    """the directory taken offline"""
    partitions: list[str]
    """the replicas it held, as `"<topic>-<partition>"`, sorted"""
    reason: str
    """the first error, `"<ExceptionType>: <message>"`"""
    action: str
    """`"notify"`: the broker wrote `/log_dir_event_notification/log_dir_event_<seq>` and
    keeps running; `"halt"`: it stops at once, as Kafka halts a broker whose last log
    directory failed"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogDirEventHandled(Event):
    """The controller handled log-directory event notifications.

    `log_dir_events.py`, the controller event thread.

    After it sent LeaderAndIsr for every replica on the notifying brokers and deleted the
    notifications. Not emitted when there was no notification to handle.
    """

    kind: ClassVar[str] = "log_dir_event_handled"

    notifications: int
    """`/log_dir_event_notification` children handled and deleted, malformed ones included"""
    brokers: list[int]
    """the brokers they named, sorted"""
    replicas: int
    """replicas on those brokers sent to OnlineReplica (each a LeaderAndIsr entry)"""
    controller_epoch: int
    """the controller's epoch"""
