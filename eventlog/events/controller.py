"""Controller: election, event loop, failover and the changes it handles.

Written by `controller/controller.py` (election and event loop), `controller/active.py`
and its helpers (`topic_changes.py`, `broker_changes.py`, `isr_changes.py`,
`controlled_shutdown.py`, `replica_election.py`), on `controller-event-thread` unless
said otherwise.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import ABSENT, Absent, Event

__all__ = [
    "BrokerChange",
    "BrokerModified",
    "ControlledShutdown",
    "ControllerElected",
    "ControllerFailoverDone",
    "ControllerFailoverStep",
    "ControllerObserved",
    "ControllerResigned",
    "EventFailed",
    "IsrChangeHandled",
    "LeaderElectionsRequested",
    "MalformedZnode",
    "PartitionsAdded",
    "ReplicasOffline",
    "TopicChange",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerElected(Event):
    """This broker won the controller election.

    Zxids order every write of the ensemble, whatever the clocks say: a state write of an
    older controller epoch whose `zxid` exceeds a later `controller_elected`'s `epoch_zxid`
    committed after that controller bumped the epoch, which fencing forbids
    (`controller_writes_fenced`, docs/invariants.md). They cost nothing: ZooKeeper answers
    each set with the new Stat.
    """

    kind: ClassVar[str] = "controller_elected"

    controller_id: int
    """this broker's id"""
    controller_epoch: int
    """the epoch it won"""
    epoch_zk_version: int
    """zkVersion of `/controller_epoch` after the win, checked by every later controller write"""
    epoch_zxid: int | None
    """ZooKeeper transaction id (zxid) of the write that won the epoch: the mzxid of
    `/controller_epoch`'s Stat in the election multi's answer (read back when that answer was
    lost); `null` if unknown
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerResigned(Event):
    """This broker stopped being the controller.

    Event thread; main thread during shutdown.

    Emitted when `/controller` names another broker or is gone, on session expiry, after a
    failed epoch check (`ControllerMovedError`), after a failed failover, and when an active
    broker stops.
    """

    kind: ClassVar[str] = "controller_resigned"

    controller_id: int
    """this broker's id"""
    controller_epoch: int
    """the epoch it held"""
    reason: str
    """why, in words: `/controller names broker N`, `/controller is gone`, `its ZooKeeper
    session expired`, `an epoch-fenced write failed: ...`, `failover failed: ...`, `the
    broker is stopping`
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerObserved(Event):
    """This broker found another broker in `/controller`.

    This is emitted when an election finds `/controller` already held. It is also emitted
    when a failed election, a `/controller` change or a failed epoch check leaves another
    broker as controller.
    """

    kind: ClassVar[str] = "controller_observed"

    controller_id: int
    """the broker id found in `/controller`"""


@dataclass(frozen=True, slots=True, kw_only=True)
class MalformedZnode(Event):
    """A znode did not decode.

    Event thread; also from `active.py`, `topic_changes.py`, `partition_state_machine.py`,
    `replica_election.py` and `reassignment.py`; and from `config-change-listener` on every
    broker.
    """

    kind: ClassVar[str] = "malformed_znode"

    path: str | None
    """the znode, relative to the chroot: `/controller`, `/controller_epoch`, `/brokers/ids/N`,
    `/brokers/topics/T`, `/config/topics/T`, `/brokers/topics/T/partitions/P/state`,
    `/isr_change_notification/isr_change_<seq>`, `/admin/preferred_replica_election`,
    `/admin/reassign_partitions` or `/config/changes/config_change_<seq>`. For a non-integer
    child of `/brokers/ids`, the bare child name.
    """
    reason: str
    """why it did not decode"""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventFailed(Event):
    """A controller event raised.

    Not emitted for `ControllerMovedError`, which resigns instead.
    """

    kind: ClassVar[str] = "event_failed"

    event: str
    """the controller event's class name, e.g. `RegisterBrokerAndReelect`;
    `"ControllerFailover"` when `on_failover` raised (the broker then resigns)
    """
    error: str
    """`"<ExceptionType>: <message>"`"""
    retried: bool | Absent = ABSENT
    """`true`: the handling lost the ZooKeeper connection (the session kept) and the
    event is handled again once connected, as Kafka's client retries a request until
    connected; absent in older logs"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerFailoverStep(Event):
    """A step of the new controller's failover is done.

    `on_failover`, after each step.

    A failover that raises stops after its last completed step.
    """

    kind: ClassVar[str] = "controller_failover_step"

    step: str
    """the step just done, in this order: `"watches_registered"`, `"notifications_removed"`,
    `"context_initialized"`, `"update_metadata_sent"`, `"state_machines_started"`,
    `"reassignments_resumed"`, `"deletions_resumed"`, `"preferred_elections_done"`,
    `"auto_rebalance_scheduled"` (the last only with the auto rebalance enabled; with bug
    switch `kafka-4443`, `"update_metadata_sent"` comes after `"state_machines_started"`);
    docs/architecture.md (Failover) says what each does
    """
    controller_epoch: int
    """the epoch won"""
    isr_change_notifications: int | Absent = ABSENT
    """only on `"notifications_removed"`: pending ISR change notifications deleted unhandled"""
    log_dir_event_notifications: int | Absent = ABSENT
    """only on `"notifications_removed"`: pending log-directory event notifications deleted
    unhandled (Kafka's failover clears them; its LeaderAndIsr to every broker finds the
    offline replicas again)"""
    state_reader_processes: int | Absent = ABSENT
    """only on `"context_initialized"`: helper processes started to read the partition
    states (`--state-reader-processes`; 0 when the states were read in-process)"""
    read_by_helpers: int | Absent = ABSENT
    """only on `"context_initialized"`: partition states those helpers read"""
    delay_s: float | Absent = ABSENT
    """only on `"auto_rebalance_scheduled"`: seconds until the first check (5.0)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerFailoverDone(Event):
    """The new controller's failover is done.

    End of `on_failover`.
    """

    kind: ClassVar[str] = "controller_failover_done"

    controller_epoch: int
    """the epoch won"""
    brokers: int
    """live brokers loaded"""
    topics: int
    """topics loaded"""
    partitions: int
    """partitions of those topics"""
    offline_partitions: int
    """partitions in OfflinePartition, except those of topics whose deletion has started, at the
    end of failover: after both state machines have started, reassignments and topic deletion
    have resumed, and a pending preferred-election request was handled (pending ISR change
    notifications were removed unhandled at the start)
    """
    duration_ms: float
    """time from the start of `on_failover`, float, 0.1 ms resolution"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerChange(Event):
    """The controller handled a change of the registered brokers."""

    kind: ClassVar[str] = "broker_change"

    new: list[int]
    """ids registered now and not known before (sorted)"""
    dead: list[int]
    """known ids no longer registered"""
    bounced: list[int]
    """ids registered with a larger broker epoch (czxid) than known"""
    live: list[int]
    """every registered id"""
    epochs: dict[str, int]
    """object: broker id (as a string) → broker epoch, for every registered broker"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerModified(Event):
    """A live broker rewrote its registration with other endpoints (Kafka's
    BrokerModifications); the controller took the new ones and sent UpdateMetadata to
    every live broker."""

    kind: ClassVar[str] = "broker_modified"

    broker_id: int
    """the broker whose `/brokers/ids/N` changed"""
    broker_epoch: int
    """its broker epoch (unchanged: the znode was rewritten, not replaced)"""
    endpoints: list[str]
    """the new endpoints, `LISTENER://host:port` each"""
    previous: list[str]
    """the endpoints the controller knew before"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicChange(Event):
    """The controller handled a change of the topics."""

    kind: ClassVar[str] = "topic_change"

    added: list[str]
    """new topics that loaded (malformed ones are left out), sorted"""
    removed: list[str]
    """known topics whose `/brokers/topics/T` is gone, sorted"""
    refused: dict[str, str]
    """new topics not created because their names collide with an existing or earlier-created
    topic's ('.' read as '_'): topic -> Kafka's message, `Topic 'a_b' collides with existing
    topics: a.b`; `{}` when none
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class IsrChangeHandled(Event):
    """The controller handled ISR change notifications.

    After the handled notifications were deleted.

    Not emitted when there was no notification to handle.
    """

    kind: ClassVar[str] = "isr_change_handled"

    notifications: int
    """`/isr_change_notification` children handled and deleted, malformed ones included"""
    partitions: int
    """distinct partitions of known topics they named (their states were re-read and sent in
    UpdateMetadata)
    """
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlledShutdown(Event):
    """The controller moved the leaderships of a broker shutting down.

    A ControlledShutdown that passed the checks.

    Counted partitions have more than one replica and a known leadership, and are not queued for
    deletion. A request answered `STALE_BROKER_EPOCH`, `BROKER_NOT_AVAILABLE` or
    `NOT_CONTROLLER` writes no event on the controller.
    """

    kind: ClassVar[str] = "controlled_shutdown"

    broker_id: int
    """the broker shutting down"""
    broker_epoch: int
    """the broker epoch in its request"""
    led: int
    """partitions it led that went through the controlled-shutdown election"""
    followed: int
    """partitions it followed whose replica went OfflineReplica"""
    remaining: int
    """partitions it still leads (answered to the broker)"""
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderElectionsRequested(Event):
    """The controller ran preferred or unclean elections on request.

    After preferred or unclean elections on request.

    One per run of `ActiveController.elect_leaders`: an ElectLeaders request handled by the
    active controller, a `/admin/preferred_replica_election` request listing partitions, or an
    auto-rebalance check that found candidates (`requested` is then the number of candidates).
    The event does not say which of the three it was. Not written for a request answered at
    request level (`NOT_CONTROLLER`, `INVALID_REQUEST`), for an empty or malformed
    `/admin/preferred_replica_election`, for a rebalance check without candidates, or when a
    `ControllerMovedError` interrupted the elections. The elections themselves emit
    `partition_state_change`, `leader_elected` (`strategy` `"preferred"`, or `"offline"` for
    unclean) and `leader_election_failed` before it.
    """

    kind: ClassVar[str] = "leader_elections_requested"

    election: str
    """`"preferred"` or `"unclean"`"""
    requested: int | str
    """how many partitions were asked for, as given (duplicates counted), or the string `"all"`
    when an ElectLeaders request named none (every partition)
    """
    outcomes: dict[str, int]
    """object: Kafka error name → number of partitions answered with it, e.g. `{"NONE": 1,
    "ELECTION_NOT_NEEDED": 1}`. Names: `NONE`, `ELECTION_NOT_NEEDED`,
    `UNKNOWN_TOPIC_OR_PARTITION`, `INVALID_TOPIC_EXCEPTION`,
    `PREFERRED_LEADER_NOT_AVAILABLE`, `ELIGIBLE_LEADERS_NOT_AVAILABLE`. Empty when there was
    no partition.
    """
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionsAdded(Event):
    """The controller found partitions added to a topic.

    `topic_changes.py`, PartitionModifications.

    `/brokers/topics/T` lists partitions the controller did not know.
    """

    kind: ClassVar[str] = "partitions_added"

    topic: str
    """the topic"""
    partitions: list[int]
    """the new partition numbers, sorted"""
    created: bool
    """`true` when they were created and brought online; `false` when the topic is queued for
    deletion: they are not created
    """
    restored: bool
    """`true` when the topic is queued for deletion and `/brokers/topics/T` was written back
    (fenced) to the assignment the controller knows, dropping the added partitions, as Kafka
    restores it; `false` otherwise (also when the topic znode was gone or did not decode)
    """
    controller_epoch: int
    """this controller's epoch"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicasOffline(Event):
    """A broker's replicas went offline after a storage error.

    `broker_changes.py`.

    A live broker answered LeaderAndIsr with `KAFKA_STORAGE_ERROR` for partitions it had not
    reported before; those replicas are now offline until the broker restarts
    ([controller.md](controller.md), Offline replicas).
    """

    kind: ClassVar[str] = "replicas_offline"

    broker_id: int
    """the broker"""
    partitions: list[str]
    """the newly offline partitions, as `"<topic>-<partition>"`, sorted"""
    controller_epoch: int
    """this controller's epoch"""
