"""Test doubles for `client`: an in-process cluster of one topic (`FakeBrokers`) whose
`connect` plugs into `Client(connect=...)`, with scripted Produce faults (`ProduceFault`).
For tests only; any thread.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass

from client.connections import ApiLike
from client.errors import TransportError
from domain import EndPoint
from rpc import messages as m
from rpc.errors import Errors, RpcDeadlineExceeded, RpcUnavailable

#: Three brokers as they advertise themselves, as the host reaches them, and the map between.
ADVERTISED = {1: "broker1:9092", 2: "broker2:9092", 3: "broker3:9092"}
REACHABLE = {1: "127.0.0.1:9091", 2: "127.0.0.1:9092", 3: "127.0.0.1:9093"}
ADDRESS_MAP = {ADVERTISED[b]: REACHABLE[b] for b in ADVERTISED}


def three_brokers(topic: str = "t", partitions: int = 2) -> FakeBrokers:
    """Brokers 1-3 reached through `ADDRESS_MAP`; broker 1 leads every partition."""
    return FakeBrokers(topic, partitions, ADVERTISED, REACHABLE, leader=1)


@dataclass(frozen=True, slots=True)
class ProduceFault:
    """What the next Produce to a broker does instead of the normal path: answer `error`
    (after appending when `append`), or fail on the wire (after appending when `append`)."""

    error: Errors | None = None
    append: bool = False
    transport: bool = False


def _split(address: str) -> EndPoint:
    host, _, port = address.rpartition(":")
    return EndPoint(host, int(port))


class FakeBrokers:
    """An in-process cluster of one topic: brokers advertising `advertised[id]` and reached
    at `reachable[id]` (default: the advertised address), one log (list of values) per
    partition whose high watermark is its length, a leader per partition, brokers that are
    `down`, brokers whose log directory is `offline` (their Produce and Fetch answer
    KAFKA_STORAGE_ERROR, as a broker's offline replicas do), and scripted `ProduceFault`s
    per reachable address. Any thread (one lock)."""

    def __init__(
        self,
        topic: str,
        partitions: int,
        advertised: Mapping[int, str] | None = None,
        reachable: Mapping[int, str] | None = None,
        leader: int = 1,
    ) -> None:
        self.topic = topic
        self.advertised = dict(advertised or {i: f"broker{i}:9092" for i in (1, 2, 3)})
        self.reachable = dict(reachable or self.advertised)
        self.logs: dict[int, list[str]] = {p: [] for p in range(partitions)}
        self.leaders: dict[int, int] = dict.fromkeys(range(partitions), leader)
        self.leader_epochs: dict[int, int] = dict.fromkeys(range(partitions), 0)
        self.down: set[int] = set()
        self.offline: set[int] = set()
        self.calls: list[tuple[str, str]] = []
        self._faults: dict[str, deque[ProduceFault]] = defaultdict(deque)
        self._lock = threading.RLock()

    # -- driving the fake ----------------------------------------------------------------

    def connect(self, address: str) -> ApiLike:
        """A connection to `address` (plug into `Client(connect=...)`)."""
        return _FakeClient(self, address)

    def move_leader(self, partition: int, broker_id: int) -> None:
        """Elect `broker_id` (-1: no leader) and bump the leader epoch."""
        with self._lock:
            self.leaders[partition] = broker_id
            self.leader_epochs[partition] += 1

    def inject(self, address: str, *faults: ProduceFault) -> None:
        """Queue faults for the next Produce requests reaching `address`."""
        with self._lock:
            self._faults[address].extend(faults)

    def truncate(self, partition: int, length: int) -> None:
        """Cut a partition's log to `length` records (what an unclean election does)."""
        with self._lock:
            del self.logs[partition][length:]

    def values(self, partition: int) -> list[str]:
        """The log of a partition."""
        with self._lock:
            return list(self.logs[partition])

    # -- what a broker answers -----------------------------------------------------------

    def _broker_at(self, address: str, method: str) -> int:
        with self._lock:
            self.calls.append((address, method))
            ids = [b for b, a in self.reachable.items() if a == address]
            if not ids or ids[0] in self.down:
                raise TransportError(RpcUnavailable(address, "UNAVAILABLE"))
            return ids[0]

    def metadata(self, address: str, topics: tuple[str, ...]) -> m.MetadataResponse:
        """What the broker at `address` answers to Metadata."""
        self._broker_at(address, "metadata")
        with self._lock:
            brokers = tuple(
                m.LiveBroker(b, (_split(a),))
                for b, a in sorted(self.advertised.items())
                if b not in self.down
            )
            parts = tuple(
                m.PartitionMetadata(
                    p,
                    Errors.NONE if leader >= 0 else Errors.LEADER_NOT_AVAILABLE,
                    leader,
                    self.leader_epochs[p],
                    tuple(sorted(self.advertised)),
                    tuple(sorted(self.advertised)),
                )
                for p, leader in sorted(self.leaders.items())
            )
            answer = [m.TopicMetadata(self.topic, Errors.NONE, parts)]
            answer += [
                m.TopicMetadata(t, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                for t in topics
                if t != self.topic
            ]
            return m.MetadataResponse(min(self.advertised), 1, brokers, tuple(answer))

    def produce(self, address: str, request: m.ProduceRequest) -> m.ProduceResponse:
        """What the broker at `address` answers to Produce: each partition on its own; a
        queued fault (one per request) applies to every partition of the request."""
        broker = self._broker_at(address, "produce")
        with self._lock:
            fault = self._faults[address].popleft() if self._faults[address] else None
            if fault is not None and fault.transport:
                for entry in request.partitions:
                    if fault.append and entry.partition in self.logs:
                        self.logs[entry.partition].extend(
                            r.value.decode("utf-8") for r in entry.records
                        )
                raise TransportError(RpcDeadlineExceeded(address, "DEADLINE_EXCEEDED"))
            return m.ProduceResponse(
                tuple(self._produce_partition(broker, entry, fault) for entry in request.partitions)
            )

    def _produce_partition(
        self, broker: int, entry: m.PartitionRecords, fault: ProduceFault | None
    ) -> m.PartitionProduceResult:
        """One partition's answer (under the lock)."""
        topic, partition = entry.topic, entry.partition
        if topic != self.topic or partition not in self.logs:
            return m.PartitionProduceResult(topic, partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        if fault is None and broker in self.offline:
            return m.PartitionProduceResult(topic, partition, Errors.KAFKA_STORAGE_ERROR)
        log = self.logs[partition]
        if fault is None and self.leaders[partition] != broker:
            return m.PartitionProduceResult(topic, partition, Errors.NOT_LEADER_OR_FOLLOWER)
        first, last = -1, -1
        if fault is None or fault.append:
            first = len(log)
            log.extend(r.value.decode("utf-8") for r in entry.records)
            last = len(log) - 1
        error = Errors.NONE if fault is None else fault.error or Errors.UNKNOWN_SERVER_ERROR
        return m.PartitionProduceResult(topic, partition, error, first, last)

    def fetch(self, address: str, request: m.FetchRequest) -> m.FetchResponse:
        """What the broker at `address` answers to Fetch (up to the end of each log)."""
        broker = self._broker_at(address, "fetch")
        out = []
        with self._lock:
            for p in request.partitions:
                if p.topic != self.topic or p.partition not in self.logs:
                    out.append(
                        m.FetchedPartition(p.topic, p.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    )
                    continue
                if broker in self.offline or self.leaders[p.partition] != broker:
                    error = (
                        Errors.KAFKA_STORAGE_ERROR
                        if broker in self.offline
                        else Errors.NOT_LEADER_OR_FOLLOWER
                    )
                    out.append(m.FetchedPartition(p.topic, p.partition, error))
                    continue
                log = self.logs[p.partition]
                end = min(len(log), p.fetch_offset + p.max_records)
                records = tuple(
                    m.FetchedRecord(o, self.leader_epochs[p.partition], 0, None, log[o].encode())
                    for o in range(max(0, p.fetch_offset), end)
                )
                out.append(
                    m.FetchedPartition(
                        p.topic, p.partition, Errors.NONE, len(log), 0, len(log), records
                    )
                )
        return m.FetchResponse(Errors.NONE, tuple(out))


class _FakeClient:
    """An `ApiLike` bound to one reachable address of a `FakeBrokers`."""

    def __init__(self, brokers: FakeBrokers, address: str) -> None:
        self._brokers = brokers
        self.target = address
        self.closed = False

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        return self._brokers.metadata(self.target, topics)

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        return self._brokers.produce(self.target, request)

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        return self._brokers.fetch(self.target, request)

    def close(self) -> None:
        self.closed = True
