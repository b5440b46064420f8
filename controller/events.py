"""Controller events: frozen values put on the event queue by watches, timers, RPC handlers
and session listeners (any thread), processed one at a time by the controller event thread.

An event that carries a caller (`callback`) must answer it exactly once: with its result
when processed, or through `preempt()` when the queue is cleared because the controller
moved or is shutting down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from controller.control_responses import LeaderAndIsrResult, StopReplicaResult
from controller.states import ControllerState
from domain import TopicPartition
from rpc.errors import Errors
from rpc.messages import (
    AlterIsrRequest,
    AlterIsrResponse,
    ControlledShutdownResponse,
    ElectLeadersResponse,
)
from zkdata.client import BrokerListing


@dataclass(frozen=True)
class ControllerEvent:
    """Base of all events."""

    state: ClassVar[ControllerState] = ControllerState.IDLE
    #: The handler decides from what it reads in ZooKeeper, so it may run again from the
    #: start when it lost the connection (`ControllerEventManager`, `MAX_RETRIES`).
    rereads: ClassVar[bool] = False

    def preempt(self) -> None:
        """Answer the caller, if any, because the event will not be processed."""


@dataclass(frozen=True)
class Startup(ControllerEvent):
    """The broker started: watch `/controller` and take part in the election."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class ControllerChange(ControllerEvent):
    """`/controller` was created or changed, or its watch was lost with a suspended
    connection: re-arm the watch, resign if it is no longer us, run for election if there
    is no controller at all."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class Reelect(ControllerEvent):
    """`/controller` was deleted: resign if needed and run for election."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE


@dataclass(frozen=True)
class Expire(ControllerEvent):
    """The ZooKeeper session expired: the ephemeral znodes are gone; resign (`reason`
    goes into `controller_resigned`)."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE
    reason: str = "its ZooKeeper session expired"


@dataclass(frozen=True)
class RegisterBrokerAndReelect(ControllerEvent):
    """A new session is up after an expiry: register the broker again (new broker epoch)
    and run for election. Handled again after a lost connection, as Kafka's registration
    retries until connected: a node its own session made counts as registered."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_CHANGE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class BrokerChange(ControllerEvent):
    """The children of `/brokers/ids` changed: brokers registered, left or bounced.

    `listing` is None: the handler reads `/brokers/ids` when it processes the event. With
    bug switch `kafka-3085` the watch read it when it fired, and the event carries that
    (not part of the event's value)."""

    state: ClassVar[ControllerState] = ControllerState.BROKER_CHANGE
    rereads: ClassVar[bool] = True
    listing: BrokerListing | None = field(default=None, compare=False)


@dataclass(frozen=True)
class BrokerModifications(ControllerEvent):
    """The registration of a known broker changed (its `/brokers/ids/N` data watch)."""

    state: ClassVar[ControllerState] = ControllerState.BROKER_CHANGE
    rereads: ClassVar[bool] = True
    broker_id: int


@dataclass(frozen=True)
class TopicChange(ControllerEvent):
    """The children of `/brokers/topics` changed: topics were created or removed."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_CHANGE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class PartitionModifications(ControllerEvent):
    """`/brokers/topics/T` changed: partitions may have been added to the topic."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_CHANGE
    rereads: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True)
class TopicDeletion(ControllerEvent):
    """The children of `/admin/delete_topics` changed."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_DELETION
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class TopicDeletionStopReplicaResponseReceived(ControllerEvent):
    """A broker answered a StopReplica that deleted partitions (put by the request's
    callback on `controller-to-broker-<id>-send-thread`). `result` holds one error per
    deleted partition, the request-level error where set (`controller.control_responses`)."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_DELETION
    broker_id: int
    result: StopReplicaResult


@dataclass(frozen=True)
class LeaderAndIsrResponseReceived(ControllerEvent):
    """A broker answered LeaderAndIsr with KAFKA_STORAGE_ERROR for some partitions (put by
    the request's callback on `controller-to-broker-<id>-send-thread`)."""

    state: ClassVar[ControllerState] = ControllerState.LEADER_AND_ISR_RESPONSE_RECEIVED
    broker_id: int
    result: LeaderAndIsrResult


@dataclass(frozen=True)
class IsrChangeNotification(ControllerEvent):
    """Leaders recorded ISR changes under `/isr_change_notification`."""

    state: ClassVar[ControllerState] = ControllerState.ISR_CHANGE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class AlterIsrReceived(ControllerEvent):
    """A partition leader's AlterIsr (KIP-497); `callback` receives the answer."""

    state: ClassVar[ControllerState] = ControllerState.ISR_CHANGE
    request: AlterIsrRequest
    callback: Callable[[AlterIsrResponse], None]

    def preempt(self) -> None:
        """The controller moved before the request was handled."""
        self.callback(AlterIsrResponse(Errors.NOT_CONTROLLER))


@dataclass(frozen=True)
class LogDirEventNotification(ControllerEvent):
    """Brokers recorded log-directory failures under `/log_dir_event_notification`."""

    state: ClassVar[ControllerState] = ControllerState.LOG_DIR_CHANGE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class PartitionReassignment(ControllerEvent):
    """`/admin/reassign_partitions` was created or changed."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class PartitionReassignmentIsrChange(ControllerEvent):
    """The state znode of a partition being reassigned changed: its ISR may now hold every
    target replica."""

    state: ClassVar[ControllerState] = ControllerState.ALTER_PARTITION_REASSIGNMENT
    rereads: ClassVar[bool] = True
    topic_partition: TopicPartition


@dataclass(frozen=True)
class TopicConfigChange(ControllerEvent):
    """A topic's config overrides changed (put by the broker's config-change listener):
    reload them; if unclean leader election is now enabled, elect leaders for its offline
    partitions (Kafka's TopicUncleanLeaderElectionEnable)."""

    state: ClassVar[ControllerState] = ControllerState.TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE
    rereads: ClassVar[bool] = True
    topic: str


@dataclass(frozen=True)
class ReplicaLeaderElection(ControllerEvent):
    """`/admin/preferred_replica_election` was created or changed."""

    state: ClassVar[ControllerState] = ControllerState.MANUAL_LEADER_BALANCE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class ControlledShutdown(ControllerEvent):
    """A broker asks to shut down in a controlled way; `callback` receives the answer."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLED_SHUTDOWN
    broker_id: int
    broker_epoch: int
    callback: Callable[[ControlledShutdownResponse], None]

    def preempt(self) -> None:
        """The controller moved before the request was handled."""
        self.callback(ControlledShutdownResponse(Errors.NOT_CONTROLLER))


@dataclass(frozen=True)
class ElectLeaders(ControllerEvent):
    """An ElectLeaders request from the admin client; `callback` receives the answer."""

    state: ClassVar[ControllerState] = ControllerState.MANUAL_LEADER_BALANCE
    election_type: int
    partitions: tuple[TopicPartition, ...]
    callback: Callable[[ElectLeadersResponse], None]

    def preempt(self) -> None:
        """The controller moved before the request was handled."""
        self.callback(ElectLeadersResponse(Errors.NOT_CONTROLLER))


@dataclass(frozen=True)
class AutoPreferredReplicaLeaderElection(ControllerEvent):
    """The leader-imbalance timer fired: move leaderships back to preferred replicas."""

    state: ClassVar[ControllerState] = ControllerState.AUTO_LEADER_BALANCE
    rereads: ClassVar[bool] = True


@dataclass(frozen=True)
class ShutdownEventThread(ControllerEvent):
    """Stop the event thread (the broker is stopping)."""

    state: ClassVar[ControllerState] = ControllerState.CONTROLLER_SHUTDOWN
