"""Floors: the ZooKeeper work a controller failover cannot avoid, timed on the same ensemble.

- Read floor: a fresh kazoo session lists `/brokers/topics`, then reads
  every topic znode pipelined (issue every `get_async`, then collect), then every
  partition state znode the same way, decoding each with the project's codecs. The
  session's connect time is not counted: a controller already has its session.
- Write floor: one `FencedWriter.write` of a SetData per partition state (multis of
  1,000, each behind the `/controller_epoch` check), pipelined, on a connected session.
  It rewrites each state with its current bytes, so the cluster does not change; only
  the zkVersions grow. A change that writes K states is compared with K times the best
  per-state cost.
- RPC floor: one LeaderAndIsr naming every partition, sent to a broker with a stale
  controller epoch: the broker parses all of it and answers at once, so the round trip
  is the gRPC cost of a request of that size.

`Floors` holds a run's three and sums what one measure's work needs.

Each is timed with Python's cyclic garbage collector off (`collector_off`), as the brokers
run the work they are compared with (`controller.collector`): at 100,000 partitions the
collector at Python's default thresholds made the read floor about a fifth slower.

Each floor is measured `repetitions` times and the best is kept. Blocks the main thread.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kazoo.client import KazooClient

from bench.control.layout import INITIAL_CONTROLLER_EPOCH, ClusterLayout, initial_state
from harness.zk_endpoint import ZkEndpoint
from rpc import messages as m
from rpc.wire import BrokerControlClient
from security.tls_files import BROKER, load_identity
from zkdata import paths
from zkdata.fenced_writes import FencedWriter, SetData, multi_chunks
from zkdata.model import TopicAssignment
from zkdata.pipelined_reads import pipelined
from zkdata.znodes import TopicPartitionStateZNode, TopicZNode

#: Deadline of one floor RPC (a busy 2-core box can take seconds for 100,000 partitions).
RPC_TIMEOUT_S = 120.0


class FloorError(RuntimeError):
    """A floor measurement read or wrote something other than the layout."""


@dataclass(frozen=True, slots=True)
class ReadSample:
    """One timed pipelined reload: listing, topic znodes, partition states (seconds)."""

    list_seconds: float
    topics_seconds: float
    states_seconds: float
    topics: int
    states: int

    @property
    def seconds(self) -> float:
        """The whole reload."""
        return self.list_seconds + self.topics_seconds + self.states_seconds

    @property
    def znodes(self) -> int:
        """Znodes read with data (the listing not counted)."""
        return self.topics + self.states


@dataclass(frozen=True, slots=True)
class WriteSample:
    """One timed fenced write of every partition state."""

    seconds: float
    writes: int
    multis: int


@contextmanager
def collector_off() -> Iterator[None]:
    """Python's cyclic garbage collector is off while the block runs (restored after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_once(endpoint: ZkEndpoint, layout: ClusterLayout) -> ReadSample:
    """Reload topics and partition states on a fresh session, as a new controller must."""
    with endpoint.open() as zk, collector_off():
        started = time.perf_counter()
        topics = sorted(zk.get_children(paths.BROKER_TOPICS))
        listed = time.perf_counter()
        pending_topics = [(topic, zk.get_async(paths.topic(topic))) for topic in topics]
        assignments: dict[str, TopicAssignment] = {}
        for topic, result in pending_topics:
            data, _ = result.get()
            assignments[topic] = TopicZNode.decode(data)
        topics_read = time.perf_counter()
        pending_states = [
            zk.get_async(paths.partition_state(topic, partition))
            for topic, assignment in assignments.items()
            for partition in assignment.partitions
        ]
        states = 0
        for result in pending_states:
            data, stat = result.get()
            TopicPartitionStateZNode.decode(data, int(stat.version))
            states += 1
        done = time.perf_counter()
    if len(topics) != layout.topics or states != layout.partitions:
        raise FloorError(
            f"read {len(topics)} topics and {states} partition states, "
            f"expected {layout.topics} and {layout.partitions}"
        )
    return ReadSample(
        listed - started, topics_read - listed, done - topics_read, len(topics), states
    )


class StateRewriter:
    """Rewrites every partition state with its current bytes through `FencedWriter`,
    tracking the zkVersions it produces. Bound to one connected session."""

    def __init__(self, zk: KazooClient, layout: ClusterLayout) -> None:
        self._writer = FencedWriter(zk)
        self._epoch_zk_version = int(zk.get(paths.CONTROLLER_EPOCH)[1].version)
        self._states = [
            (
                paths.partition_state(topic, partition),
                TopicPartitionStateZNode.encode(initial_state(replicas)),
            )
            for topic, assignment in layout.assignments().items()
            for partition, replicas in assignment.partitions.items()
        ]
        self._versions = [
            int(result.get().version)
            for _, result in pipelined(self._states, lambda state: zk.exists_async(state[0]))
        ]

    def write_once(self) -> WriteSample:
        """One fenced, pipelined write of every state; raises `FloorError` if any failed."""
        ops = [
            SetData(path, data, version)
            for (path, data), version in zip(self._states, self._versions, strict=True)
        ]
        with collector_off():
            started = time.perf_counter()
            results = self._writer.write(ops, self._epoch_zk_version)
            seconds = time.perf_counter() - started
        versions = [r for r in results if isinstance(r, int) and not isinstance(r, bool)]
        if len(versions) != len(ops):
            path, error = next(
                (op.path, r)
                for op, r in zip(ops, results, strict=True)
                if not isinstance(r, int) or isinstance(r, bool)
            )
            failed = len(ops) - len(versions)
            raise FloorError(f"{failed} fenced writes failed, first {path}: {error!r}")
        self._versions = versions
        return WriteSample(seconds, len(ops), len(multi_chunks(ops)))


def write_floor(endpoint: ZkEndpoint, layout: ClusterLayout, repetitions: int) -> list[WriteSample]:
    """`repetitions` fenced rewrites of every partition state on one session."""
    with endpoint.open() as zk:
        rewriter = StateRewriter(zk, layout)
        return [rewriter.write_once() for _ in range(repetitions)]


def rpc_floor(
    port: int, layout: ClusterLayout, repetitions: int, tls_dir: Path | None = None
) -> float:
    """Best round trip of a LeaderAndIsr of every partition, refused as stale by the
    broker on `port` (which must have seen a controller epoch above the initial one). Over
    mutual TLS with the broker's certificate from `tls_dir` when given (LeaderAndIsr is a
    broker-only method)."""
    tls = load_identity(tls_dir, BROKER) if tls_dir is not None else None
    states = tuple(
        m.LeaderAndIsrPartitionState(
            topic=topic,
            partition=partition,
            controller_epoch=INITIAL_CONTROLLER_EPOCH,
            leader=replicas.replicas[0],
            leader_epoch=0,
            isr=replicas.replicas,
            zk_version=0,
            replicas=replicas.replicas,
        )
        for topic, assignment in layout.assignments().items()
        for partition, replicas in assignment.partitions.items()
    )
    request = m.LeaderAndIsrRequest(
        m.ControlHeader(
            controller_id=0, controller_epoch=INITIAL_CONTROLLER_EPOCH, broker_epoch=-1
        ),
        states,
    )
    best = float("inf")
    with BrokerControlClient(f"127.0.0.1:{port}", timeout_s=RPC_TIMEOUT_S, tls=tls) as client:
        for _ in range(repetitions):
            with collector_off():
                started = time.perf_counter()
                client.leader_and_isr(request)
                best = min(best, time.perf_counter() - started)
    return best


@dataclass(frozen=True, slots=True)
class Floors:
    """The floors of one cluster size: the best reload, the best fenced write of every
    state (`write_s` for `writes` states) and the best RPC round trip of all partitions."""

    read: ReadSample
    write_s: float
    writes: int
    rpc_s: float

    def write_of(self, states: int) -> float:
        """The fenced-write floor of `states` state znodes (per-state cost x states)."""
        return self.write_s / self.writes * states if self.writes else 0.0

    def of(self, *, reload: bool, states: int) -> float:
        """The floor of a change: the reload if it reads everything, its writes, one RPC."""
        return (self.read.seconds if reload else 0.0) + self.write_of(states) + self.rpc_s

    def phrase(self, *, reload: bool, states: int) -> str:
        """What `of` adds up, in words."""
        parts = [f"pipelined read of {self.read.znodes:,} znodes"] if reload else []
        parts.append(f"fenced multi writes of {states:,} states")
        parts.append(f"gRPC round trip of a {self.read.states:,}-partition request")
        return " + ".join(parts)
