"""The controller's requests to brokers and their answers as frozen value objects (Kafka
2.8's fields): LeaderAndIsr, UpdateMetadata, StopReplica, and the two calls made of the
controller, ControlledShutdown, ElectLeaders and AlterIsr.

The per-partition entries of the control requests and their answers are named tuples
(built, compared and hashed in C): a request of the controller names thousands of them.

`rpc.wire` converts them to and from protobuf; nothing else sees protobuf. Any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from domain import EndPoint, TopicPartition
from rpc.errors import Errors, errors_by_code

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


class ErrorRun(NamedTuple):
    """The error codes of consecutive partitions of one topic, as the wire carries them
    (one code per partition, 0 for NONE; an unknown code reads UNKNOWN_SERVER_ERROR)."""

    topic: str
    partitions: tuple[int, ...]
    codes: tuple[int, ...]


class PartitionErrors(Sequence[PartitionError]):
    """One error per partition of an answer, held as the wire's runs and built into
    `PartitionError`s only when read entry by entry. A LeaderAndIsr answer names every
    partition of the request, almost all NONE, and the controller reads only the others:
    `failed()` yields those without building the rest. Equal to any sequence of the same
    entries, a tuple included. Immutable; any thread."""

    __slots__ = ("_entries", "_runs")

    def __init__(self, runs: Iterable[ErrorRun]) -> None:
        self._runs = tuple(runs)
        self._entries: tuple[PartitionError, ...] | None = None

    def _built(self) -> tuple[PartitionError, ...]:
        if self._entries is None:
            self._entries = tuple(e for run in self._runs for e in _entries(run))
        return self._entries

    def __len__(self) -> int:
        return sum(len(run.partitions) for run in self._runs)

    @overload
    def __getitem__(self, index: int) -> PartitionError: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[PartitionError]: ...

    def __getitem__(self, index: int | slice) -> PartitionError | Sequence[PartitionError]:
        return self._built()[index]

    def __iter__(self) -> Iterator[PartitionError]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PartitionErrors | tuple | list):
            return self._built() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._built())

    def __repr__(self) -> str:
        return f"PartitionErrors({self._built()!r})"

    def failed(self) -> Iterator[PartitionError]:
        """The entries whose error is not NONE, in order."""
        for run in self._runs:
            if any(run.codes):
                yield from _entries(run, failed_only=True)


def _entries(run: ErrorRun, failed_only: bool = False) -> Iterator[PartitionError]:
    """The run's entries (only those whose code is not NONE's 0 with `failed_only`)."""
    by_code, unknown, new = errors_by_code().get, Errors.UNKNOWN_SERVER_ERROR, tuple.__new__
    topic = run.topic
    for partition, code in zip(run.partitions, run.codes, strict=True):
        if code or not failed_only:
            tp = new(TopicPartition, (topic, partition))
            yield new(PartitionError, (tp, by_code(code, unknown)))


def failed_entries(errors: Sequence[PartitionError]) -> Iterator[PartitionError]:
    """The entries of `errors` whose error is not NONE, without building the others when
    `errors` is a `PartitionErrors`."""
    if isinstance(errors, PartitionErrors):
        return errors.failed()
    return (e for e in errors if e.error is not Errors.NONE)


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    """A request-level error plus one error per partition."""

    error: Errors
    partition_errors: Sequence[PartitionError] = ()


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
    partition_errors: Sequence[PartitionError] = ()


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
