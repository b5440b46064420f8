"""The benchmark's producer: batches of records sent to partition leaders through one
`client.Client` shared by every thread, as a Kafka producer keeps one connection per
broker.

`bench_client` bootstraps the client from the brokers' loopback ports (the brokers
advertise 127.0.0.1). `produce_op` is the operation `rpc_load` times: one batch to the next
partition in the thread's round robin; the client retries NOT_LEADER_OR_FOLLOWER and the
other retriable errors (refreshing the leaders at most every `REFRESH_INTERVAL_S`) until
`MAX_ATTEMPTS` or the op's deadline, and every failed attempt is counted by its name.

Thread-safety: the client is thread-safe; everything else here is pure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from bench.produce.rpc_load import Op, OpResult
from client import Client, ProduceFailed
from domain import TopicPartition
from rpc import messages as m
from security.tls_files import TlsIdentity

HOST = "127.0.0.1"
MAX_ATTEMPTS = 10
RETRY_BACKOFF_S = 0.05
REFRESH_INTERVAL_S = 0.1
RPC_TIMEOUT_S = 10.0


def bench_client(ports: Mapping[int, int], topic: str, tls: TlsIdentity | None = None) -> Client:
    """A client bootstrapped from every broker's loopback port, asking Metadata about
    `topic` (over mutual TLS with `tls`)."""
    return Client(
        [f"{HOST}:{port}" for _, port in sorted(ports.items())],
        topics=(topic,),
        tls=tls,
        timeout_s=RPC_TIMEOUT_S,
        max_attempts=MAX_ATTEMPTS,
        backoff_s=RETRY_BACKOFF_S,
        refresh_interval_s=REFRESH_INTERVAL_S,
    )


def leaders_of(client: Client, topic: str) -> dict[int, int]:
    """Partition -> leader id of `topic` in the client's last Metadata."""
    return {
        p: leader
        for p in client.partitions_of(topic)
        if (leader := client.leader_of(TopicPartition(topic, p))) is not None
    }


def make_batch(batch: int, value_bytes: int) -> tuple[m.ProducedRecord, ...]:
    """`batch` keyless records with distinct random values of `value_bytes` bytes."""
    return tuple(m.ProducedRecord(None, os.urandom(value_bytes)) for _ in range(batch))


def produce_op(
    client: Client,
    topic: str,
    partitions: Sequence[int],
    records: tuple[m.ProducedRecord, ...],
    acks: int,
    timeout_ms: int,
) -> Op:
    """Thread i's n-th operation sends `records` to partition `partitions[(i + n) % P]`'s
    leader with `acks`; a batch counts as `len(records)` units when acknowledged."""

    def op(index: int, n: int) -> OpResult:
        partition = partitions[(index + n) % len(partitions)]
        try:
            produced = client.produce(topic, partition, records, acks=acks, timeout_ms=timeout_ms)
        except ProduceFailed as exc:
            return OpResult(False, 0, exc.attempt_errors)
        return OpResult(True, len(records), produced.attempt_errors)

    return op
