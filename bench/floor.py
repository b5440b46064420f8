"""Floors: the ZooKeeper work a controller failover cannot avoid, timed on the same ensemble.

- Read floor: a fresh kazoo session lists `/brokers/topics`, then reads
  every topic znode pipelined (issue every `get_async`, then collect), then every
  partition state znode the same way, decoding each with the project's codecs. The
  session's connect time is not counted: a controller already has its session.
- Write floor: one `FencedWriter.write` of a SetData per partition state (multis of
  1,000, each behind the `/controller_epoch` check), pipelined, on a connected session.
  It rewrites each state with its current bytes, so the cluster does not change; only
  the zkVersions grow.

Each floor is measured `repetitions` times and the best is kept. Blocks the main thread.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from kazoo.client import KazooClient

from bench.layout import ClusterLayout, initial_state
from harness.zk_ensemble import open_client
from zkdata import paths
from zkdata.fenced_writes import MAX_OPS_PER_MULTI, FencedWriter, SetData
from zkdata.model import TopicAssignment
from zkdata.znodes import TopicPartitionStateZNode, TopicZNode


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


def read_once(connect: str, layout: ClusterLayout) -> ReadSample:
    """Reload topics and partition states on a fresh session, as a new controller must."""
    with open_client(connect) as zk:
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
        pending = [zk.exists_async(path) for path, _ in self._states]
        self._versions = [int(result.get().version) for result in pending]

    def write_once(self) -> WriteSample:
        """One fenced, pipelined write of every state; raises `FloorError` if any failed."""
        ops = [
            SetData(path, data, version)
            for (path, data), version in zip(self._states, self._versions, strict=True)
        ]
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
        return WriteSample(seconds, len(ops), math.ceil(len(ops) / MAX_OPS_PER_MULTI))


def write_floor(connect: str, layout: ClusterLayout, repetitions: int) -> list[WriteSample]:
    """`repetitions` fenced rewrites of every partition state on one session."""
    with open_client(connect) as zk:
        rewriter = StateRewriter(zk, layout)
        return [rewriter.write_once() for _ in range(repetitions)]
