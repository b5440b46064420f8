"""The benchmark's producer: batches of records sent to partition leaders through one
`client.Client` shared by every thread, as a Kafka producer keeps one connection per
broker.

`bench_client` bootstraps the client from the brokers' loopback ports (the brokers
advertise 127.0.0.1). `produce_op` is the operation `rpc_load` times: one Produce request
to the next leader in the thread's round robin, carrying a batch for every partition that
broker leads (`by_leader`), as a Kafka producer drains the batches of every partition a
broker leads into one request; with as many partitions as brokers that is one batch. The
client retries NOT_LEADER_OR_FOLLOWER and the other retriable errors per partition
(refreshing the leaders at most every `REFRESH_INTERVAL_S`, regrouping the retried batches
by their new leaders) until `MAX_ATTEMPTS` or the op's deadline, and every failed attempt
is counted by its name.

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


def by_leader(leaders: Mapping[int, int]) -> list[tuple[int, ...]]:
    """The partitions of each leader (partition -> leader), leaders in id order."""
    groups: dict[int, list[int]] = {}
    for partition, leader in sorted(leaders.items()):
        groups.setdefault(leader, []).append(partition)
    return [tuple(groups[b]) for b in sorted(groups)]


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
    groups: Sequence[tuple[int, ...]],
    records: tuple[m.ProducedRecord, ...],
    acks: int,
    timeout_ms: int,
) -> Op:
    """Thread i's n-th operation sends `records` to each partition of `groups[(i + n) % G]`
    (the partitions one broker leads) in one request with `acks`; it succeeds when every
    batch is acknowledged, and counts `len(records)` units per acknowledged batch."""
    batches = [tuple(m.PartitionRecords(topic, p, records) for p in group) for group in groups]

    def op(index: int, n: int) -> OpResult:
        results = client.produce_batches(
            batches[(index + n) % len(batches)], acks=acks, timeout_ms=timeout_ms
        )
        acked = [r for r in results if not isinstance(r, ProduceFailed)]
        errors = tuple(e for r in results for e in r.attempt_errors)
        return OpResult(len(acked) == len(results), len(acked) * len(records), errors)

    return op
