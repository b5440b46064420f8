"""The controller's requests to brokers and their answers as frozen value objects (Kafka
2.8's fields): LeaderAndIsr, UpdateMetadata, StopReplica, and the two calls made of the
controller, ControlledShutdown, ElectLeaders and AlterIsr.

The per-partition entries of the control requests and their answers are named tuples
(built, compared and hashed in C): a request of the controller names thousands of them.

`rpc.wire` converts them to and from protobuf; nothing else sees protobuf. Any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from domain import EndPoint, TopicPartition
from rpc.errors import Errors

#: Builds a `TopicPartition` without the named tuple's own `__new__` (a Python frame):
#: handlers name hundreds of thousands of partitions per control request.
_new_tp = tuple.__new__


@dataclass(frozen=True, slots=True)
class ControlHeader:
    """Sender and fencing epochs carried by every controller-to-broker request."""

    controller_id: int
    controller_epoch: int
    broker_epoch: int


class LeaderAndIsrPartitionState(NamedTuple):
    """The leadership of one partition as the controller decided it."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition this state is about."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


@dataclass(frozen=True, slots=True)
class LiveLeader:
    """A broker that leads some partition of a LeaderAndIsr request, and where to reach it."""

    broker_id: int
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    """Make this broker leader or follower of the listed partitions."""

    header: ControlHeader
    partition_states: tuple[LeaderAndIsrPartitionState, ...]
    live_leaders: tuple[LiveLeader, ...] = ()


class PartitionError(NamedTuple):
    """The outcome for one partition of a request."""

    topic_partition: TopicPartition
    error: Errors


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    """A request-level error plus one error per partition."""

    error: Errors
    partition_errors: tuple[PartitionError, ...] = ()


class UpdateMetadataPartitionState(NamedTuple):
    """What every broker's metadata cache holds about one partition."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition this state is about."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


@dataclass(frozen=True, slots=True)
class LiveBroker:
    """A live broker and its endpoints."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    """Refresh the metadata cache: partition states and the live brokers."""

    header: ControlHeader
    partition_states: tuple[UpdateMetadataPartitionState, ...]
    live_brokers: tuple[LiveBroker, ...]


@dataclass(frozen=True, slots=True)
class UpdateMetadataResponse:
    """A request-level error."""

    error: Errors


class StopReplicaPartitionState(NamedTuple):
    """Stop one replica; `leader_epoch` -1 means none given, -2 a deletion in progress."""

    topic: str
    partition: int
    leader_epoch: int
    delete_partition: bool

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition this state is about."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    """Stop (and optionally delete) replicas on this broker."""

    header: ControlHeader
    partition_states: tuple[StopReplicaPartitionState, ...]


@dataclass(frozen=True, slots=True)
class StopReplicaResponse:
    """A request-level error plus one error per partition."""

    error: Errors
    partition_errors: tuple[PartitionError, ...] = ()


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    """A broker asks the controller to move its leaderships away before it stops."""

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    """The outcome, and the partitions the broker still leads."""

    error: Errors
    remaining_partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest:
    """Ask the controller for a preferred (0) or unclean (1) election; all partitions when
    none are listed."""

    election_type: int
    partitions: tuple[TopicPartition, ...] = ()
    timeout_ms: int = 30_000


@dataclass(frozen=True, slots=True)
class PartitionElectionResult:
    """One partition's outcome (ELECTION_NOT_NEEDED and friends, as Kafka names them)."""

    topic_partition: TopicPartition
    error: Errors
    message: str = ""


@dataclass(frozen=True, slots=True)
class ElectLeadersResponse:
    """A request-level error (NOT_CONTROLLER...) and one result per partition."""

    error: Errors
    results: tuple[PartitionElectionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterIsrPartition:
    """One partition's proposed ISR: the leader's epoch, the new ISR and the zkVersion of
    the state znode it last saw (Kafka's AlterIsrRequest PartitionData)."""

    topic_partition: TopicPartition
    leader_epoch: int
    new_isr: tuple[int, ...]
    current_isr_version: int


@dataclass(frozen=True, slots=True)
class AlterIsrRequest:
    """A partition leader asks the controller to change ISRs (KIP-497)."""

    broker_id: int
    broker_epoch: int
    partitions: tuple[AlterIsrPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterIsrPartitionResult:
    """One partition's outcome: an error, or (NONE) its leader, leader epoch, ISR and
    zkVersion as now in ZooKeeper."""

    topic_partition: TopicPartition
    error: Errors
    leader: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    current_isr_version: int = -1


@dataclass(frozen=True, slots=True)
class AlterIsrResponse:
    """A request-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH) or one result per
    partition."""

    error: Errors
    partitions: tuple[AlterIsrPartitionResult, ...] = ()
