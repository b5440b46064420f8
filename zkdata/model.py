"""Value objects stored in ZooKeeper: frozen, hashable, free of I/O. Any thread. The values
shared with the other layers (topic-partition, endpoint, leadership) live in `domain`."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain import EndPoint, TopicPartition

#: Fields of a znode that this project does not use, kept so that a rewrite does not drop
#: them: (name, compact JSON text) pairs in name order (see `zkdata.jsonfields`).
UnknownFields = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """What a broker registers under `/brokers/ids/N`."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    jmx_port: int = -1
    timestamp_ms: int = 0

    @property
    def endpoint(self) -> EndPoint:
        """The first (primary) endpoint."""
        return self.endpoints[0]


@dataclass(frozen=True, slots=True)
class Broker:
    """A registered broker together with its epoch (the czxid of its znode, KIP-380)."""

    info: BrokerInfo
    epoch: int

    @property
    def id(self) -> int:
        """The broker id."""
        return self.info.id


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """The content of `/controller`."""

    broker_id: int
    timestamp_ms: int = 0


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """Replicas of one partition, with the replicas being added or removed by a reassignment."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def is_being_reassigned(self) -> bool:
        """True while a reassignment is in flight."""
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        """The replicas before the reassignment in flight (ORS): all but those being added."""
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replicas once the reassignment in flight is done (TRS): all but those being
        removed."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    def reassign_to(self, target: tuple[int, ...]) -> ReplicaAssignment:
        """The assignment while moving from the origin replicas to `target`: the replica
        set is target then origin (RS = TRS + ORS, no repeats), adding what only the target
        has (AR) and removing what only the origin has (RR). A reassignment already in
        flight is replaced: its origin stays the origin."""
        origin = self.origin_replicas
        full = tuple(dict.fromkeys((*target, *origin)))
        return ReplicaAssignment(
            full,
            tuple(r for r in full if r not in origin),
            tuple(r for r in full if r not in target),
        )


@dataclass(frozen=True, slots=True)
class TopicAssignment:
    """The content of `/brokers/topics/T`: partition number -> assignment, the topic id
    (KIP-516, Kafka's base64 UUID) when it has one, and the fields this project does not
    use."""

    partitions: dict[int, ReplicaAssignment] = field(default_factory=dict)
    topic_id: str | None = None
    unknown: UnknownFields = ()

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.partitions.items())), self.topic_id, self.unknown))


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """One entry of `/admin/reassign_partitions`, with the fields of the entry this project
    does not use (such as Kafka's `log_dirs`)."""

    topic_partition: TopicPartition
    replicas: tuple[int, ...]
    #: Not compared: two entries moving the same partition to the same replicas are the
    #: same request to the controller.
    unknown: UnknownFields = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """The content of `/config/topics/T`: string-valued overrides (Kafka keeps them as strings)."""

    config: dict[str, str] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.config.items())))
