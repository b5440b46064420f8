"""State changes of many partitions (`controller-event-thread`).

A round of the controller's state machines writes one event of the kinds below for what
it did to all its partitions, not one per partition: each list field is a column with
one item per partition, in the same order in every column, and the other fields hold what
the round's partitions share. A reader sees the facts: `eventlog.columns.expand` turns
such an event into one event per partition of the kind each section names
(`leader_elected`, `isr_changed`, `leader_election_failed`, `isr_shrink_failed`), with the
round's envelope (`ts`, `seq`, `mono_ms`) and the round's line, which the invariants,
coverage and the report read (docs/invariants.md, docs/pipeline.md). Event logs of schema
version 1 hold those facts as single events; they read the same.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event, RoundEvent
from eventlog.events.replication import IsrChanged
from eventlog.events.state import IsrShrinkFailed, LeaderElected, LeaderElectionFailed

__all__ = ["IsrShrinksFailed", "IsrsShrunk", "LeaderElectionsFailed", "LeadersElected"]


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
