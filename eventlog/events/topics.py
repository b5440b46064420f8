"""Topic deletion and partition reassignment (`controller-event-thread`).

Topic deletion is `controller/topic_deletion.py`; reassignment `controller/reassignment.py`.
ORS, TRS, RS, AR and RR are the origin replicas, the target replicas, the replica set while
moving, and the replicas being added and removed ([controller.md](controller.md), Partition
reassignment). Lists of replicas are in the order of RS, which puts the target first.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event

__all__ = [
    "ReassignmentCompleted",
    "ReassignmentFailed",
    "ReassignmentRejected",
    "ReassignmentStarted",
    "TopicDeletionAnswerOutdated",
    "TopicDeletionCompleted",
    "TopicDeletionFailed",
    "TopicDeletionIneligible",
    "TopicDeletionRequested",
    "TopicDeletionStarted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionRequested(Event):
    """Topics were queued for deletion.

    Not written when nothing was queued or removed.
    """

    kind: ClassVar[str] = "topic_deletion_requested"

    topics: list[str]
    """topics queued for deletion now"""
    removed: list[str]
    """request znodes (`/admin/delete_topics/T`) removed without deleting anything: unknown
    topics, or every request when deletion is disabled
    """
    unknown: list[str]
    """the removed ones that name no known topic"""
    enabled: bool
    """`delete.topic.enable`"""
    source: str
    """`"watch"` (the child watch fired) or `"failover"`"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionStarted(Event):
    """A topic's deletion started or restarted.

    Per topic, each time its deletion starts or restarts.
    """

    kind: ClassVar[str] = "topic_deletion_started"

    topic: str
    """the topic"""
    partitions: int
    """how many partitions it has"""
    replicas: int
    """replicas sent StopReplica with `delete` in this round"""
    offline_replicas: int
    """its replicas on dead or shutting-down brokers"""
    retry: bool
    """`true` when its deletion already started earlier in this controller term"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionIneligible(Event):
    """A queued topic's deletion halted.

    When a queued topic's deletion halts.
    """

    kind: ClassVar[str] = "topic_deletion_ineligible"

    topic: str
    """the topic"""
    reason: str
    """`"offline replicas"`, `"replica deletion failure"` or `"topic reassignment in progress"`"""
    replicas: list[list[int]]
    """the `[partition, broker]` pairs concerned (may be empty)"""
    errors: list[str]
    """the brokers' error names (may be empty)"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionAnswerOutdated(Event):
    """A StopReplica answer to a broker's previous life did not count.

    When a broker answers a StopReplica that deleted partitions and the request was
    addressed to a broker epoch older than the one the controller now knows for it: the
    broker registered again since, the controller took its replicas offline and back, and
    deletion resumed with a round of its own for the new life.
    """

    kind: ClassVar[str] = "topic_deletion_answer_outdated"

    broker: int
    """the broker that answered"""
    addressed_epoch: int
    """the broker epoch the request was addressed to"""
    broker_epoch: int
    """the broker epoch the controller knows now"""
    topics: list[str]
    """the topics whose partitions the request deleted, sorted"""
    partitions: int
    """how many deleted partitions the answer named"""
    errors: list[str]
    """the error names the answer carried, sorted (may be empty)"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionCompleted(Event):
    """A topic was deleted."""

    kind: ClassVar[str] = "topic_deletion_completed"

    topic: str
    """the topic, now removed from ZooKeeper and the context"""
    partitions: int
    """how many partitions it had"""
    duration_ms: int | None
    """ms since it was queued in this controller term (int), or `null`"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDeletionFailed(Event):
    """A topic's znodes could not all be removed."""

    kind: ClassVar[str] = "topic_deletion_failed"

    topic: str
    """the topic; it stays queued and the removal is tried again at the next resumption"""
    failed: dict[str, str]
    """object: znode path → the kazoo error class that kept it from being removed"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignmentStarted(Event):
    """A partition's reassignment started or resumed.

    A reassignment starts or resumes and the ISR does not hold every target replica yet;
    before its leader epoch bump, A1.

    Not written for a reassignment whose ISR already holds every target replica: it completes at
    once.
    """

    kind: ClassVar[str] = "reassignment_started"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    origin: list[int]
    """ORS, in the order of RS (moving `[1,2]` to `[2,3]` gives `[2,1]`)"""
    target: list[int]
    """TRS, in request order"""
    adding: list[int]
    """AR, the replicas being added"""
    removing: list[int]
    """RR, the replicas being removed"""
    resumed: bool
    """`true` when the partition was already in flight and a new controller (at its failover) or
    a broker start-up started it again; `false` for a request started for the first time
    """
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignmentRejected(Event):
    """An entry of `/admin/reassign_partitions` that cannot run.

    Per entry of `/admin/reassign_partitions` that cannot run, after it was removed from the
    znode.

    A request that does not decode is deleted whole and reported as `malformed_znode` instead.
    """

    kind: ClassVar[str] = "reassignment_rejected"

    topic: str
    """the partition, which keeps its assignment"""
    partition: int
    """the partition, which keeps its assignment"""
    target: list[int]
    """the replicas the entry asked for"""
    error: str
    """Kafka's error name: `"INVALID_REQUEST"` (partition listed twice),
    `"UNKNOWN_TOPIC_OR_PARTITION"` (topic queued for deletion, or unknown partition) or
    `"INVALID_REPLICA_ASSIGNMENT"` (empty target, a broker twice, a broker to be added
    not registered)
    """
    reason: str
    """why, e.g. `"t-0 does not exist"`"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignmentCompleted(Event):
    """A partition's reassignment completed.

    After B8.
    """

    kind: ClassVar[str] = "reassignment_completed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    replicas: list[int]
    """TRS, now its replicas"""
    removed: list[int]
    """RR, the replicas stopped and deleted at B4-B5 (empty for a cancellation)"""
    leader: int
    """the leader after the move, -1 when there is none"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignmentFailed(Event):
    """A partition's reassignment failed."""

    kind: ClassVar[str] = "reassignment_failed"

    topic: str
    """the partition"""
    partition: int
    """the partition"""
    target: list[int]
    """TRS"""
    reason: str
    """`"the topic znode is missing or does not decode"` (at U1: nothing was written and the
    reassignment did not start; or at B6: the final assignment was not written, completion
    goes on) or `"the state znode is missing or does not decode"` (when bumping the leader
    epoch at A1, also after 10 conditional writes lost to leaders' ISR changes: no
    LeaderAndIsr was sent and A2 was skipped), or `"state znode written by another controller
    (epoch N, this controller's is M): aborting its state change"` (at A1, likewise). A
    request that failed at U1 or A1 is removed from `/admin/reassign_partitions`
    """
    controller_epoch: int
    """this controller's epoch"""
