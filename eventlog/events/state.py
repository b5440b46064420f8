"""State machines (`controller-event-thread`).

The partition and replica state machines' changes, elections and refused transitions.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import ABSENT, Absent, Event

__all__ = [
    "InvalidStateTransition",
    "IsrShrinkFailed",
    "LeaderElected",
    "LeaderElectionFailed",
    "PartitionStateChange",
    "ReplicaStateChange",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionStateChange(Event):
    """The partition state machine moved partitions to a state.

    `partition_state_machine.py`; one per round with valid partitions.
    """

    kind: ClassVar[str] = "partition_state_change"

    target: str
    """the target state, e.g. `"OnlinePartition"`"""
    partitions: int
    """partitions moved to it"""
    failed: int
    """valid partitions that did not get there (their election or creation failed)"""
    topics: list[str]
    """the topics of the partitions moved, sorted"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaStateChange(Event):
    """The replica state machine moved a broker's replicas to a state.

    `replica_state_machine.py`; one per broker per round with valid replicas.
    """

    kind: ClassVar[str] = "replica_state_change"

    broker_id: int
    """the broker holding the replicas"""
    target: str
    """the target state, e.g. `"OfflineReplica"`"""
    replicas: int
    """replicas moved to it"""
    failed: int
    """valid replicas that did not get there"""


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidStateTransition(Event):
    """A state machine refused a transition.

    Both machines.

    A NewReplica for the partition's current leader is also reported this way.
    """

    kind: ClassVar[str] = "invalid_state_transition"

    machine: str
    """`"partition"` or `"replica"`"""
    topic: str
    """the partition"""
    partition: int
    """the partition"""
    replica: int | Absent = ABSENT
    """the broker id of the replica (only when `machine` is `"replica"`)"""
    current: str
    """the current state"""
    target: str
    """the refused target state"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElected(Event):
    """The controller elected a partition leader and wrote its state znode.

    `partition_state_machine.py`, as one partition's fact of a `leaders_elected` (a line of
    its own only in version 1 logs).
    """

    kind: ClassVar[str] = "leader_elected"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    leader: int
    """the new leader"""
    leader_epoch: int
    """the new leader epoch"""
    isr: list[int]
    """the new ISR (list)"""
    zk_version: int
    """the state znode's zkVersion after the write (0 for a new partition)"""
    zxid: int | None
    """the zxid the write committed at (the mzxid of the state znode's new Stat); `null` for a
    new partition (a multi's create answers no Stat)
    """
    controller_epoch: int
    """this controller's epoch"""
    strategy: str
    """`"initial"` (new partition), `"offline"`, `"reassign"`, `"preferred"` or
    `"controlled_shutdown"`
    """
    unclean: bool
    """`true` when the leader came from outside the ISR"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElectionFailed(Event):
    """The controller could not elect a leader for a partition.

    `partition_state_machine.py`, as one partition's fact of a `leader_elections_failed` (a
    line of its own only in version 1 logs).
    """

    kind: ClassVar[str] = "leader_election_failed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    reason: str
    """`"no live replica to lead a new partition"`, `"state znode already exists"` (create hit
    NodeExists), `"state znode is missing"` (read found nothing, or the update hit NoNode),
    `"state znode does not decode"`, `"state znode written by another controller (epoch N,
    this controller's is M): aborting its state change"` (only that partition fails; the
    others of the round go on and the controller stays), `"no eligible leader (<strategy>)"`
    (also after re-reading the state znode from ZooKeeper), or a kazoo exception's class name
    for another failed write
    """
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrShrinkFailed(Event):
    """The controller could not remove an offline replica from a partition's ISR.

    `replica_state_machine.py`, as one partition's fact of an `isr_shrinks_failed` (a line of
    its own only in version 1 logs).
    """

    kind: ClassVar[str] = "isr_shrink_failed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    replica: int
    """the broker being removed from the ISR"""
    reason: str
    """`"state znode is missing"` (not written for a topic queued for deletion), `"state znode
    does not decode"`, `"state znode written by another controller (epoch N, this
    controller's is M): aborting its state change"` (only that partition fails; the replica
    keeps its state), or the kazoo exception's class name of a failed write (BADVERSION is
    retried from a fresh read, never reported)
    """
    controller_epoch: int
    """this controller's epoch"""
