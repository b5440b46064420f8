"""ISR changes and the data plane on the broker.

Written by partition leaders and followers, the replica manager and the config-change
listener; `isr_changed` also by the controller, and `alter_isr_handled` only by it.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import ABSENT, Absent, Event

__all__ = [
    "AlterIsrHandled",
    "FetcherParked",
    "HighWatermarkMoved",
    "IsrChangePropagated",
    "IsrChanged",
    "IsrUpdateFailed",
    "LogTruncated",
    "LogUnavailable",
    "ReplicasDeleted",
    "TopicConfigChanged",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrChanged(Event):
    """A partition's ISR was written.

    Written by the partition leader (`partition_isr.py`) for each ISR shrink or expand it wrote,
    and by the controller (`replica_state_machine.py`) for each ISR shrink of OfflineReplica
    it wrote, as one partition's fact of an `isrs_shrunk` (a line of its own only in version
    1 logs). The `by` field tells them apart.
    """

    kind: ClassVar[str] = "isr_changed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    reason: str
    """why (leader: `"shrink"` or `"expand"`; controller: `"replica offline"`)"""
    by: str | Absent = ABSENT
    """the writer (leader: absent; controller: `"controller"`)"""
    replica: int | Absent = ABSENT
    """the broker removed from the ISR (leader: absent; controller: yes)"""
    leader: int
    """the leader after the write (-1 when the controller removed the leader)"""
    leader_epoch: int
    """the leader epoch: unchanged by a leader's write, the new (bumped) one in the
    controller's"""
    old_isr: list[int] | Absent = ABSENT
    """the ISR before (leader: yes; controller: absent)"""
    isr: list[int]
    """the ISR written"""
    zk_version: int
    """the state znode's zkVersion after the write"""
    zxid: int | Absent | None = ABSENT
    """the zxid the write committed at (the mzxid of the state znode's new Stat) (leader:
    absent; controller: yes)
    """
    high_watermark: int | Absent = ABSENT
    """the leader's HW when the ISR was taken (before it is recomputed) (leader: yes;
    controller: absent)
    """
    controller_epoch: int | Absent = ABSENT
    """this controller's epoch (leader: absent; controller: yes)"""
    follower_log_end_offset: int | Absent = ABSENT
    """the joining follower's log end when the leader decided it may join (KIP-320: at least
    the high watermark and `epoch_start_offset`) (leader's `"expand"`: yes; else absent)
    """
    epoch_start_offset: int | Absent = ABSENT
    """the start offset of the leader's current epoch, the log end when it became leader
    (leader's `"expand"`: yes; else absent)
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrUpdateFailed(Event):
    """A broker could not write a partition's ISR.

    From `partition_isr.py`, when a leader's conditional ISR write hit BADVERSION or NoNode and the
    re-read znode is missing or holds another leader, leader epoch or ISR. The leader keeps its
    old ISR and waits for a LeaderAndIsr.

    From `isr_maintenance.py` (`isr-expiration`), when the ISR shrink or the log flush of a
    partition raised (e.g. a ZooKeeper error). The next round tries again.
    """

    kind: ClassVar[str] = "isr_update_failed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    leader_epoch: int | Absent = ABSENT
    """the leader's epoch"""
    isr: list[int] | Absent = ABSENT
    """the ISR it keeps"""
    wanted: list[int] | Absent = ABSENT
    """the ISR it tried to write"""
    reason: str
    """`"state znode changed (BADVERSION); waiting for the controller"`; `"<ExceptionType>:
    <message>"`
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicConfigChanged(Event):
    """A topic's configuration overrides changed.

    `config_changes.py`, `config-change-listener`.

    A `/config/changes` notification for a topic was handled: the broker's hosted partitions
    and, on the active controller, the context take the overrides.
    """

    kind: ClassVar[str] = "topic_config_changed"

    topic: str
    """the topic"""
    config: dict[str, str]
    """object: the topic's overrides now (`/config/topics/T`; `{}` when none)"""
    notification: str
    """the notification's child name, `config_change_<seq>`"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogUnavailable(Event):
    """A partition's log could not be opened.

    `replica_manager.py`, `grpc-worker*` handling LeaderAndIsr.

    A partition's log could not be opened; the LeaderAndIsr answer carries `KAFKA_STORAGE_ERROR`
    for it and the broker does not host it.
    """

    kind: ClassVar[str] = "log_unavailable"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    reason: str
    """`"<ExceptionType>: <message>"`, e.g. a `CorruptLogError` from recovery"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicasDeleted(Event):
    """A StopReplica deleted replicas on this broker.

    `control_requests.py`, the gRPC worker handling a StopReplica; one per request that
    deleted a replica (`delete_partition`, its leader epoch not fenced). The broker
    forgets the replica, its log and its leader epoch, as Kafka 2.x's does: a later
    LeaderAndIsr of any epoch creates it again, empty, a new incarnation whose high
    watermark starts over.
    """

    kind: ClassVar[str] = "replicas_deleted"

    topics: list[str]
    """each deleted replica's topic"""
    partitions: list[int]
    """each deleted replica's partition"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogTruncated(Event):
    """A follower truncated its log before fetching.

    `partition.py`, `replica-fetcher-<leader id>`.

    A follower truncated its log before fetching (KIP-101; see [data-plane.md](data-plane.md)).
    Only written when records were removed.
    """

    kind: ClassVar[str] = "log_truncated"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    to_offset: int
    """the log end offset after the truncation"""
    removed: int
    """records removed"""
    leader_epoch: int
    """the leader epoch this replica follows"""
    removed_records: list[list[int | str]]
    """`[offset, value]` of each removed record (the value decoded as UTF-8, undecodable bytes
    replaced), at most 1000 (`TRUNCATED_RECORDS_LOGGED`)
    """
    last_epoch: int | Absent = ABSENT
    """the leader epoch of the last record kept (the leader-epoch cache's latest after the
    truncation; -1 when the log is empty)
    """
    high_watermark: int | Absent = ABSENT
    """the follower's high watermark after the truncation"""


@dataclass(frozen=True, slots=True, kw_only=True)
class HighWatermarkMoved(Event):
    """A leader's high watermark and log end, sampled.

    `partition_isr.py`, any thread that moves the high watermark (gRPC workers handling
    Produce and Fetch, the `isr-expiration` thread) and the gRPC worker handling the
    LeaderAndIsr that made this broker leader.

    Written when a broker becomes leader (`reason` `"leader"`; not for the first leader,
    epoch 0, of an empty log, which has nothing to tell) and when the high watermark
    moves, at most once per `HW_EVENT_INTERVAL_MS` (1000) per partition (`reason` `"moved"`):
    the moves in between are counted in `skipped`, not written. Each line is a true state of
    the leader at its time: the high watermark is at most the log end of every ISR member
    (`isr_log_end_offsets`), and never lower than in an earlier line of the same leader.
    """

    kind: ClassVar[str] = "high_watermark_moved"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    leader_epoch: int
    """the leader's epoch"""
    reason: str
    """`"leader"` (it became leader) or `"moved"` (the high watermark moved)"""
    high_watermark: int
    """the leader's high watermark"""
    log_end_offset: int
    """the leader's log end offset"""
    epoch_start_offset: int
    """the start offset of the leader's epoch (its log end when it became leader)"""
    isr: list[int]
    """the ISR"""
    isr_log_end_offsets: list[int]
    """the log end of each ISR member as the leader knows it, in `isr`'s order (-1 for one
    it has no fetch from yet)
    """
    skipped: int
    """the moves since the previous line of this partition that were not written"""


@dataclass(frozen=True, slots=True, kw_only=True)
class FetcherParked(Event):
    """A follower stopped fetching a partition until its next LeaderAndIsr.

    `fetcher.py`, `replica-fetcher-<leader id>`.

    The leader answered OffsetsForLeaderEpoch or Fetch with `FENCED_LEADER_EPOCH`,
    `NOT_LEADER_OR_FOLLOWER` or `UNKNOWN_TOPIC_OR_PARTITION`. The partition is not fetched again
    until the next accepted LeaderAndIsr for it.
    """

    kind: ClassVar[str] = "fetcher_parked"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    leader: int
    """the broker fetched from"""
    leader_epoch: int
    """the leader epoch the follower sent"""
    error: str
    """the leader's error name"""


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrChangePropagated(Event):
    """A broker wrote an ISR change notification for the controller.

    `isr_maintenance.py`, `isr-change-propagation`.
    """

    kind: ClassVar[str] = "isr_change_propagated"

    notification: str
    """the notification created, e.g. `/isr_change_notification/isr_change_0000000003` (a field
    that once shadowed the envelope's `node`)
    """
    partitions: int
    """how many partitions it names"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterIsrHandled(Event):
    """The controller answered an AlterIsr (inter.broker.protocol.version 2.7).

    `controller/alter_isr.py`, `controller-event-thread`, after the fenced writes and before
    the answer goes out. Not emitted for an AlterIsr refused NOT_CONTROLLER.
    """

    kind: ClassVar[str] = "alter_isr_handled"

    broker_id: int
    """the leader that asked"""
    broker_epoch: int
    """the broker epoch it sent"""
    error: str
    """the request-level answer: `"NONE"` or `"STALE_BROKER_EPOCH"`"""
    partitions: int
    """partitions asked about"""
    written: int
    """state znodes written"""
    rejected: list[str]
    """`"<topic>-<partition>:<error>"` for each partition answered with an error"""
    controller_epoch: int
    """this controller's epoch"""
