"""A partition leader's conditional write of its ISR to the partition's state znode, and
what it makes of a conflict, as Kafka's leader does (KAFKA-2729).

The write is conditional on the zkVersion the leader holds. On BADVERSION the leader
re-reads the znode: when it already says what the leader wanted (its own write went
through but the answer was lost, and the client retried), the leader adopts the znode's
zkVersion; otherwise the controller changed the partition and the leader waits for its
LeaderAndIsr. Bug switch `kafka-2729` (docs/bugs.md) skips the re-read: the leader keeps
its cached zkVersion and every later ISR write fails the same way.

Runs on the caller's thread, with the partition's lock held (`broker_node.partition`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from domain import LeaderIsrAndControllerEpoch, TopicPartition
from zkdata.pipelined_reads import Reads


class IsrStore(Protocol):
    """Where a leader writes its ISR (`KafkaZkClient`)."""

    def update_partition_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> int | None:
        """Conditional write; None on BADVERSION."""

    def get_partition_states(
        self, partitions: Sequence[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Read state znodes."""


def write_isr(
    store: IsrStore,
    tp: TopicPartition,
    state: LeaderIsrAndControllerEpoch,
    reread_on_conflict: bool = True,
) -> int | None:
    """Write `state` conditionally on its `leader_and_isr.zk_version`; the znode's new
    zkVersion, or None when the leader must keep its ISR and wait for the controller."""
    wanted = state.leader_and_isr
    version = store.update_partition_state(tp, state, wanted.zk_version)
    if version is not None or not reread_on_conflict:
        return version
    current = store.get_partition_states([tp]).found.get(tp)
    found = current.leader_and_isr if current else None
    if found is None or (found.leader, found.leader_epoch, found.isr) != (
        wanted.leader,
        wanted.leader_epoch,
        wanted.isr,
    ):
        return None
    return found.zk_version
