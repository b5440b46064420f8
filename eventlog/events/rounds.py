"""State changes of many partitions (`controller-event-thread`, and a broker's gRPC worker
handling LeaderAndIsr).

A round of the controller's state machines, or a LeaderAndIsr a broker applies, writes one
event of the kinds below for what it did to all its partitions, not one per partition:
each list field is a column with one item per partition, in the same order in every
column, and the other fields hold what the round's partitions share. A reader sees the
facts: `eventlog.columns.expand` turns such an event into one event per partition of the
kind each section names (`leader_elected`, `isr_changed`, `leader_election_failed`,
`isr_shrink_failed`, `high_watermark_moved`), with the round's envelope (`ts`, `seq`,
`mono_ms`) and the round's line, which the invariants, coverage and the report read
(docs/invariants.md, docs/pipeline.md). Event logs of schema version 1 hold those facts
as single events; they read the same.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event, RoundEvent
from eventlog.events.replication import HighWatermarkMoved, IsrChanged
from eventlog.events.state import IsrShrinkFailed, LeaderElected, LeaderElectionFailed

__all__ = [
    "IsrShrinksFailed",
    "IsrsShrunk",
    "LeaderElectionsFailed",
    "LeadersElected",
    "LeadershipsStarted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Written(RoundEvent):
    """The columns of the state znodes a round wrote."""

    columns: ClassVar[dict[str, str]] = {
        "topics": "topic",
        "partitions": "partition",
        "leaders": "leader",
        "leader_epochs": "leader_epoch",
        "isrs": "isr",
        "zk_versions": "zk_version",
        "zxids": "zxid",
    }

    controller_epoch: int
    """this controller's epoch"""
    topics: list[str]
    """each partition's topic"""
    partitions: list[int]
    """each partition's number"""
    leaders: list[int]
    """each leader after the write (-1 where an ISR shrink removed the leader)"""
    leader_epochs: list[int]
    """each new (bumped) leader epoch"""
    isrs: list[list[int]]
    """each ISR written"""
    zk_versions: list[int]
    """each state znode's zkVersion after the write (0 for a new partition)"""
    zxids: list[int | None]
    """each zxid the write committed at (the mzxid of the state znode's new Stat); `null` for
    a new partition (a multi's create answers no Stat)
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class _Failed(RoundEvent):
    """The columns of the partitions a round failed."""

    columns: ClassVar[dict[str, str]] = {
        "topics": "topic",
        "partitions": "partition",
        "reasons": "reason",
    }

    controller_epoch: int
    """this controller's epoch"""
    topics: list[str]
    """each partition's topic"""
    partitions: list[int]
    """each partition's number"""
    reasons: list[str]
    """each partition's reason"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadersElected(_Written):
    """The controller elected the leaders of partitions and wrote their state znodes.

    `partition_state_machine.py`; one per pipelined write of a round with elections (a
    round that re-reads the partitions that lost a race writes again). Each partition's
    fact is a `leader_elected`.
    """

    kind: ClassVar[str] = "leaders_elected"
    fact: ClassVar[type[Event]] = LeaderElected
    columns: ClassVar[dict[str, str]] = {**_Written.columns, "uncleans": "unclean"}

    strategy: str
    """`"initial"` (new partitions), `"offline"`, `"reassign"`, `"preferred"` or
    `"controlled_shutdown"`
    """
    uncleans: list[bool]
    """`true` where the leader came from outside the ISR"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElectionsFailed(_Failed):
    """The controller could not elect a leader for partitions.

    `partition_state_machine.py`; one per pipelined write of a round with failures, before
    its `leaders_elected`. Each partition's fact is a `leader_election_failed` (its
    `reason`s are listed there).
    """

    kind: ClassVar[str] = "leader_elections_failed"
    fact: ClassVar[type[Event]] = LeaderElectionFailed


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrsShrunk(_Written):
    """The controller removed an offline replica from the ISRs of partitions and wrote their
    state znodes.

    `replica_state_machine.py`; one per pipelined write of a broker's OfflineReplica round.
    Each partition's fact is an `isr_changed` with `by` `"controller"`.
    """

    kind: ClassVar[str] = "isrs_shrunk"
    fact: ClassVar[type[Event]] = IsrChanged

    reason: str
    """`"replica offline"`"""
    by: str
    """`"controller"`"""
    replica: int
    """the broker removed from the ISRs"""


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrShrinksFailed(_Failed):
    """The controller could not remove an offline replica from the ISRs of partitions.

    `replica_state_machine.py`; one per pipelined write of a broker's OfflineReplica round
    with failures, before its `isrs_shrunk`. Each partition's fact is an
    `isr_shrink_failed` (its `reason`s are listed there).
    """

    kind: ClassVar[str] = "isr_shrinks_failed"
    fact: ClassVar[type[Event]] = IsrShrinkFailed

    replica: int
    """the broker being removed from the ISRs"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadershipsStarted(RoundEvent):
    """A broker became leader of partitions at new leader epochs.

    `replica_manager.py`, the gRPC worker handling a LeaderAndIsr; one per request that
    made the broker leader of partitions with something to tell (not the first leader,
    epoch 0, of an empty log). Each partition's fact is a `high_watermark_moved` with
    `reason` `"leader"`: the high watermark, log end and epoch start the leader began with.
    A failover of 100,000 partitions makes each surviving broker leader of tens of
    thousands at once; they take one line.
    """

    kind: ClassVar[str] = "leaderships_started"
    fact: ClassVar[type[Event]] = HighWatermarkMoved
    columns: ClassVar[dict[str, str]] = {
        "topics": "topic",
        "partitions": "partition",
        "leader_epochs": "leader_epoch",
        "high_watermarks": "high_watermark",
        "log_end_offsets": "log_end_offset",
        "epoch_start_offsets": "epoch_start_offset",
        "isrs": "isr",
        "isrs_log_end_offsets": "isr_log_end_offsets",
        "skips": "skipped",
    }

    reason: str
    """`"leader"`"""
    topics: list[str]
    """each partition's topic"""
    partitions: list[int]
    """each partition's number"""
    leader_epochs: list[int]
    """each new leader epoch"""
    high_watermarks: list[int]
    """each high watermark the leader began with"""
    log_end_offsets: list[int]
    """each log end offset"""
    epoch_start_offsets: list[int]
    """each start offset of the new epoch (the log end when it became leader)"""
    isrs: list[list[int]]
    """each ISR"""
    isrs_log_end_offsets: list[list[int]]
    """each ISR member's log end as the leader knows it (-1 for one it has no fetch from)"""
    skips: list[int]
    """each partition's moves since its previous line that were not written"""
