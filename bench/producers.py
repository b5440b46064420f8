"""The benchmark's producer: batches of records sent straight to partition leaders.

`Connections` holds one `ClientApiClient` (one gRPC channel) per broker, always to
127.0.0.1 and the port from the broker's health file, shared by every thread, as a Kafka
producer keeps one connection per broker. `LeaderTable` maps partitions to leaders from
Metadata and refreshes itself (at most every `REFRESH_INTERVAL_S`) when a producer is told
NOT_LEADER_OR_FOLLOWER or finds no leader. `produce_op` is the operation `rpc_load` times:
one batch to the next partition in the thread's round robin, retried on retriable errors
until `MAX_ATTEMPTS` or the op's deadline.

Thread-safety: `LeaderTable` guards its map with a lock; the clients are thread-safe.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence

from bench.rpc_load import Op, OpResult, transport_error
from rpc import messages as m
from rpc.errors import Errors, RpcError
from rpc.wire import ClientApiClient

HOST = "127.0.0.1"
#: Errors after which a producer refreshes the leaders and tries the batch again.
RETRIABLE = frozenset(
    {
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.LEADER_NOT_AVAILABLE,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_ENOUGH_REPLICAS,
    }
)
MAX_ATTEMPTS = 10
RETRY_BACKOFF_S = 0.05
REFRESH_INTERVAL_S = 0.1
RPC_TIMEOUT_S = 10.0
NO_LEADER = "NO_LEADER_KNOWN"


class Connections:
    """One ClientApi channel per broker id, on 127.0.0.1."""

    def __init__(self, ports: Mapping[int, int]) -> None:
        self._clients = {
            broker_id: ClientApiClient(f"{HOST}:{port}", timeout_s=RPC_TIMEOUT_S)
            for broker_id, port in sorted(ports.items())
        }

    @property
    def broker_ids(self) -> list[int]:
        """Every broker with a channel, sorted."""
        return sorted(self._clients)

    def get(self, broker_id: int) -> ClientApiClient | None:
        """The channel to `broker_id`, if it is one of ours."""
        return self._clients.get(broker_id)

    def __iter__(self) -> Iterator[ClientApiClient]:
        return iter(self._clients.values())

    def close(self) -> None:
        """Close every channel."""
        for client in self._clients.values():
            client.close()


class LeaderTable:
    """Partition -> leader id of one topic, as the brokers' Metadata says."""

    def __init__(self, connections: Connections, topic: str) -> None:
        self._connections = connections
        self.topic = topic
        self._lock = threading.Lock()
        self._leaders: dict[int, int] = {}
        self._refreshed_at = -float("inf")
        self.refreshes = 0

    def leader(self, partition: int) -> int | None:
        """The known leader of `partition`, or None."""
        with self._lock:
            return self._leaders.get(partition)

    def snapshot(self) -> dict[int, int]:
        """Every known leader."""
        with self._lock:
            return dict(self._leaders)

    def refresh(self, force: bool = False) -> None:
        """Ask the brokers, in turn, for the topic's Metadata until one answers; at most
        once per `REFRESH_INTERVAL_S` unless `force`. Transport errors are skipped."""
        with self._lock:
            now = time.monotonic()
            if not force and now - self._refreshed_at < REFRESH_INTERVAL_S:
                return
            self._refreshed_at = now
            self.refreshes += 1
            for client in self._connections:
                try:
                    reply = client.metadata((self.topic,))
                except RpcError:
                    continue
                found = {
                    p.partition: p.leader
                    for t in reply.topics
                    if t.name == self.topic and t.error is Errors.NONE
                    for p in t.partitions
                    if p.leader >= 0
                }
                if found:
                    self._leaders = found
                    return


def make_batch(batch: int, value_bytes: int) -> tuple[m.ProducedRecord, ...]:
    """`batch` keyless records with distinct random values of `value_bytes` bytes."""
    return tuple(m.ProducedRecord(None, os.urandom(value_bytes)) for _ in range(batch))


def produce_op(
    connections: Connections,
    leaders: LeaderTable,
    partitions: Sequence[int],
    records: tuple[m.ProducedRecord, ...],
    acks: int,
    timeout_ms: int,
) -> Op:
    """Thread i's n-th operation sends `records` to partition `partitions[(i + n) % P]`'s
    leader with `acks`; a batch counts as `len(records)` units when acknowledged."""
    requests = {
        p: m.ProduceRequest(leaders.topic, p, records, acks=acks, timeout_ms=timeout_ms)
        for p in partitions
    }
    op_timeout_s = timeout_ms / 1000 + RPC_TIMEOUT_S

    def op(index: int, n: int) -> OpResult:
        partition = partitions[(index + n) % len(partitions)]
        request = requests[partition]
        errors: list[str] = []
        give_up = time.monotonic() + op_timeout_s
        for _ in range(MAX_ATTEMPTS):
            leader = leaders.leader(partition)
            client = connections.get(leader) if leader is not None else None
            if client is None:
                errors.append(NO_LEADER)
            else:
                try:
                    reply = client.produce(request)
                except RpcError as exc:
                    errors.append(transport_error(exc))
                else:
                    if reply.error is Errors.NONE:
                        return OpResult(True, len(records), tuple(errors))
                    errors.append(reply.error.name)
                    if reply.error not in RETRIABLE:
                        return OpResult(False, 0, tuple(errors))
            if time.monotonic() + RETRY_BACKOFF_S >= give_up:
                break
            time.sleep(RETRY_BACKOFF_S)
            leaders.refresh()
        return OpResult(False, 0, tuple(errors))

    return op
