"""Test doubles for the workload client: an in-process cluster (`FakeBrokers`) whose
`connect` plugs into `Cluster`, a history writer that keeps its lines (`RecordingHistory`),
a clock that only moves when slept on (`FakeClock`), and `HistoryBuilder` for hand-written
histories. For tests only; any thread unless said otherwise.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chaos.checker import FinalRead
from chaos.cluster import ClientLike, TransportError
from chaos.history import Completion, HistoryOp, HistoryWriter, OpF
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import EndPoint, TopicPartition


class RecordingHistory(HistoryWriter):
    """A `HistoryWriter(None, process)` that keeps every line it is given. Any thread."""

    def __init__(self, process: str, clock: FakeClock | None = None) -> None:
        if clock is None:
            super().__init__(None, process)
        else:
            super().__init__(None, process, clock_ns=clock.monotonic_ns, wall_ms=clock.wall_ms)
        self._kept_lock = threading.Lock()
        self._kept: list[HistoryOp] = []

    def write(self, op: HistoryOp) -> None:
        """Count the line as `HistoryWriter` does, and keep it."""
        super().write(op)
        with self._kept_lock:
            self._kept.append(op)

    @property
    def ops(self) -> list[HistoryOp]:
        """Every line so far, in order."""
        with self._kept_lock:
            return list(self._kept)


class HistoryBuilder:
    """Hand-written histories: each call appends an invoke and its completion, one
    nanosecond apart, to `ops`. One thread."""

    def __init__(self, topic: str = "t") -> None:
        self.topic = topic
        self.ops: list[HistoryOp] = []
        self._time_ns = 0
        self._op_ids: dict[str, int] = defaultdict(int)

    def now(self) -> int:
        """A fresh time after every line so far (e.g. when a final read begins)."""
        self._time_ns += 1
        return self._time_ns

    def _invoke(
        self,
        f: OpF,
        process: str,
        partition: int,
        offset: int | None,
        value: str | None,
        acks: int | None,
    ) -> int:
        op_id = self._op_ids[process]
        self._op_ids[process] += 1
        t = self.now()
        self.ops.append(
            HistoryOp(
                "invoke", f, process, t, t, self.topic, partition, offset, value, None, op_id, acks
            )
        )
        return op_id

    def send(
        self,
        process: str,
        partition: int,
        value: str,
        type: Completion | None = "ok",
        offset: int | None = None,
        *,
        attempts_unknown: int | None = None,
        acks: int = -1,
    ) -> None:
        """A send of `value` completing as `type` (None: never completes). `info` defaults
        to one unknown attempt, the rest to none."""
        op_id = self._invoke("send", process, partition, None, value, acks)
        if type is None:
            return
        unknown = attempts_unknown if attempts_unknown is not None else int(type == "info")
        error = None if type == "ok" else "ERROR"
        t = self.now()
        self.ops.append(
            HistoryOp(
                type=type,
                f="send",
                process=process,
                time_ns=t,
                wall_ms=t,
                topic=self.topic,
                partition=partition,
                offset=offset,
                value=value,
                error=error,
                op_id=op_id,
                acks=acks,
                attempts=unknown + 1,
                attempts_unknown=unknown,
            )
        )

    def poll(
        self,
        process: str,
        partition: int,
        records: Sequence[tuple[int, str]],
        *,
        from_offset: int = 0,
        high_watermark: int | None = None,
    ) -> None:
        """A poll that read `records` (high watermark: just past the last, by default)."""
        op_id = self._invoke("poll", process, partition, from_offset, None, None)
        if high_watermark is None:
            high_watermark = records[-1][0] + 1 if records else from_offset
        t = self.now()
        self.ops.append(
            HistoryOp(
                type="ok",
                f="poll",
                process=process,
                time_ns=t,
                wall_ms=t,
                topic=self.topic,
                partition=partition,
                offset=high_watermark,
                value=None,
                error=None,
                op_id=op_id,
                attempts=1,
                records=tuple(records),
            )
        )

    def final_read(self, logs: Mapping[int, Sequence[str]]) -> FinalRead:
        """A final read begun now holding `logs[p]` at offsets 0.. of each partition."""
        return FinalRead(
            self.now(),
            {TopicPartition(self.topic, p): tuple(enumerate(values)) for p, values in logs.items()},
        )


class FakeClock:
    """Monotonic time that advances only through `sleep` or `advance`. Any thread."""

    def __init__(self, start_s: float = 1000.0) -> None:
        self._lock = threading.Lock()
        self._now = start_s

    def monotonic(self) -> float:
        """Seconds."""
        with self._lock:
            return self._now

    def monotonic_ns(self) -> int:
        """Nanoseconds; strictly increasing between calls so history lines stay ordered."""
        with self._lock:
            self._now += 1e-9
            return int(self._now * 1e9)

    def wall_ms(self) -> int:
        """Wall-clock ms derived from the fake time."""
        return int(self.monotonic() * 1000)

    def sleep(self, seconds: float) -> None:
        """Advance instead of sleeping."""
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        with self._lock:
            self._now += seconds


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
    `down`, and scripted `ProduceFault`s per reachable address. Any thread (one lock)."""

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
        self.calls: list[tuple[str, str]] = []
        self._faults: dict[str, deque[ProduceFault]] = defaultdict(deque)
        self._lock = threading.RLock()

    # -- driving the fake ----------------------------------------------------------------

    def connect(self, address: str) -> ClientLike:
        """A client for `address` (plug into `Cluster(connect=...)`)."""
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
                raise TransportError(f"UNAVAILABLE from {address}")
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
        """What the broker at `address` answers to Produce (a queued fault first)."""
        broker = self._broker_at(address, "produce")
        with self._lock:
            fault = self._faults[address].popleft() if self._faults[address] else None
            if request.topic != self.topic or request.partition not in self.logs:
                return m.ProduceResponse(Errors.UNKNOWN_TOPIC_OR_PARTITION)
            log = self.logs[request.partition]
            if fault is None and self.leaders[request.partition] != broker:
                return m.ProduceResponse(Errors.NOT_LEADER_OR_FOLLOWER)
            first, last = -1, -1
            if fault is None or fault.append:
                first = len(log)
                log.extend(r.value.decode("utf-8") for r in request.records)
                last = len(log) - 1
            if fault is None:
                return m.ProduceResponse(Errors.NONE, first, last)
            if fault.transport:
                raise TransportError(f"DEADLINE_EXCEEDED from {address}")
            return m.ProduceResponse(fault.error or Errors.UNKNOWN_SERVER_ERROR, first, last)

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
                if self.leaders[p.partition] != broker:
                    out.append(
                        m.FetchedPartition(p.topic, p.partition, Errors.NOT_LEADER_OR_FOLLOWER)
                    )
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
    """A `ClientLike` bound to one reachable address of a `FakeBrokers`."""

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
