"""The client API's requests and responses as frozen value objects (Kafka 2.8's fields):
Metadata, Produce, Fetch (with the incremental fetch sessions of KIP-227) and
OffsetsForLeaderEpoch.

`rpc.wire` converts them to and from protobuf; nothing else sees protobuf. Any thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain import TopicPartition
from rpc.control_messages import LiveBroker
from rpc.errors import Errors

#: Builds a `TopicPartition` without the named tuple's own `__new__` (a Python frame):
#: a Fetch of a follower names thousands of partitions.
_new_tp = tuple.__new__


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    """Ask a broker what it knows: the listed topics, or all when empty."""

    topics: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition as a broker's metadata cache sees it."""

    partition: int
    error: Errors
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic and its partitions (or UNKNOWN_TOPIC_OR_PARTITION)."""

    name: str
    error: Errors
    partitions: tuple[PartitionMetadata, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataResponse:
    """Live brokers, the controller, and the requested topics."""

    controller_id: int
    controller_epoch: int
    brokers: tuple[LiveBroker, ...]
    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True, slots=True)
class ProducedRecord:
    """A record as a producer sends it."""

    key: bytes | None
    value: bytes
    timestamp_ms: int = 0


@dataclass(frozen=True, slots=True)
class PartitionRecords:
    """The records a Produce carries for one partition."""

    topic: str
    partition: int
    records: tuple[ProducedRecord, ...]

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition written."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


@dataclass(frozen=True, slots=True)
class ProduceRequest:
    """Append records to partitions this broker leads. `acks`: 0, 1 or -1 (all); with -1
    the answer waits for every partition's ISR together, within the one `timeout_ms`."""

    partitions: tuple[PartitionRecords, ...]
    acks: int = -1
    timeout_ms: int = 10_000

    @classmethod
    def single(
        cls,
        topic: str,
        partition: int,
        records: tuple[ProducedRecord, ...],
        acks: int = -1,
        timeout_ms: int = 10_000,
    ) -> ProduceRequest:
        """A request for one partition's records."""
        return cls((PartitionRecords(topic, partition, records),), acks, timeout_ms)

    @property
    def record_count(self) -> int:
        """The records of every partition."""
        return sum(len(p.records) for p in self.partitions)


@dataclass(frozen=True, slots=True)
class PartitionProduceResult:
    """One partition's answer: the offsets given to its records, or why they were not
    written (or acknowledged)."""

    topic: str
    partition: int
    error: Errors
    base_offset: int = -1
    last_offset: int = -1
    error_message: str = ""

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition written."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


@dataclass(frozen=True, slots=True)
class ProduceResponse:
    """One result per partition entry of the request, in the request's order."""

    partitions: tuple[PartitionProduceResult, ...]

    @classmethod
    def refused(cls, request: ProduceRequest, error: Errors, message: str = "") -> ProduceResponse:
        """Every partition of `request` answered `error` (the request refused as a whole)."""
        return cls(
            tuple(
                PartitionProduceResult(p.topic, p.partition, error, error_message=message)
                for p in request.partitions
            )
        )

    @property
    def only(self) -> PartitionProduceResult:
        """The result of a single-partition request. Raises `ValueError` otherwise."""
        if len(self.partitions) != 1:
            raise ValueError(f"{len(self.partitions)} partition results, not one")
        return self.partitions[0]


@dataclass(frozen=True, slots=True)
class FetchPartition:
    """Where to read one partition from; `current_leader_epoch` -1 skips the epoch check."""

    topic: str
    partition: int
    fetch_offset: int
    current_leader_epoch: int = -1
    max_records: int = 500

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition read."""
        return _new_tp(TopicPartition, (self.topic, self.partition))


#: `FetchRequest.session_id` of a fetch that belongs to no session (KIP-227).
NO_SESSION_ID = 0
#: `FetchRequest.session_epoch` of a full fetch that opens a new session.
INITIAL_EPOCH = 0
#: `FetchRequest.session_epoch` of a full fetch that wants no session (every consumer's).
FINAL_EPOCH = -1


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """Read partitions; `replica_id` -1 for a consumer, a broker id for a follower.

    Incremental fetch sessions (KIP-227): at `session_epoch` `INITIAL_EPOCH` the fetch is
    full and opens a session (closing `session_id`'s, if any); at `FINAL_EPOCH` it is full
    and sessionless; above 0 it is the next fetch of session `session_id`, naming only the
    partitions whose fetch state changed, and in `forgotten` those no longer fetched."""

    partitions: tuple[FetchPartition, ...]
    replica_id: int = -1
    max_wait_ms: int = 0
    session_id: int = NO_SESSION_ID
    session_epoch: int = FINAL_EPOCH
    forgotten: tuple[TopicPartition, ...] = ()
    #: Answer records as the log stores them (`FetchedPartition.record_data`), as a
    #: follower copying them into its own log asks.
    encoded_records: bool = False

    @property
    def is_full(self) -> bool:
        """A fetch that names every partition it wants (no session yet, or none)."""
        return self.session_epoch in (INITIAL_EPOCH, FINAL_EPOCH)


@dataclass(frozen=True, slots=True)
class FetchedRecord:
    """A record read from a log."""

    offset: int
    leader_epoch: int
    timestamp_ms: int
    key: bytes | None
    value: bytes


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """What one partition returned."""

    topic: str
    partition: int
    error: Errors
    high_watermark: int = -1
    log_start_offset: int = -1
    log_end_offset: int = -1
    records: tuple[FetchedRecord, ...] = ()
    #: The records in the log's own format, when the fetch asked for `encoded_records`.
    record_data: bytes = b""

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition read."""
        return _new_tp(TopicPartition, (self.topic, self.partition))

    @property
    def has_records(self) -> bool:
        """Records were read (in either form)."""
        return bool(self.records or self.record_data)


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """A request-level error and the partitions read: every one asked by a full fetch;
    for a fetch of an incremental session only those with records, an error, or a high
    watermark or log start offset that changed since the session last answered them.
    `session_id` names the session (`NO_SESSION_ID`: none)."""

    error: Errors
    partitions: tuple[FetchedPartition, ...] = ()
    session_id: int = NO_SESSION_ID


@dataclass(frozen=True, slots=True)
class EpochPartition:
    """Ask for the end offset of `leader_epoch` (checked against `current_leader_epoch`)."""

    topic: str
    partition: int
    current_leader_epoch: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """The largest epoch <= the requested one and its end offset (KIP-101)."""

    topic: str
    partition: int
    error: Errors
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochRequest:
    """A follower asks its leader where each epoch ended."""

    partitions: tuple[EpochPartition, ...]
    replica_id: int = -1


@dataclass(frozen=True, slots=True)
class OffsetsForLeaderEpochResponse:
    """One answer per partition."""

    partitions: tuple[EpochEndOffset, ...]
