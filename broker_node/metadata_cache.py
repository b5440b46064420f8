"""`MetadataCache`: the cluster as the last accepted UpdateMetadata described it.

Written by the control request handler under its lock (gRPC threads); readers get copies.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from domain import EPOCH_DURING_DELETE, TopicPartition
from rpc.messages import (
    LiveBroker,
    LiveLeader,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
)


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """An immutable view of the cache."""

    controller_id: int
    controller_epoch: int
    live_brokers: dict[int, LiveBroker] = field(default_factory=dict)
    partitions: dict[TopicPartition, UpdateMetadataPartitionState] = field(default_factory=dict)

    def live_leaders(self) -> tuple[LiveLeader, ...]:
        """Every live broker at its first endpoint: where a follower looks its leader up
        with bug switch `kafka-4443`, as Kafka's did before LeaderAndIsr named them."""
        return tuple(
            LiveLeader(b.id, b.endpoints[0].host, b.endpoints[0].port)
            for b in self.live_brokers.values()
            if b.endpoints
        )


class MetadataCache:
    """Partition states and live brokers from UpdateMetadata (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot = MetadataSnapshot(controller_id=-1, controller_epoch=0)

    def update(self, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Apply an accepted request; return partitions it deleted (leader -2 sentinel)."""
        with self._lock:
            partitions = dict(self._snapshot.partitions)
            deleted = []
            for state in request.partition_states:
                tp = state.topic_partition
                if state.leader == EPOCH_DURING_DELETE:
                    partitions.pop(tp, None)
                    deleted.append(tp)
                else:
                    partitions[tp] = state
            self._snapshot = MetadataSnapshot(
                controller_id=request.header.controller_id,
                controller_epoch=request.header.controller_epoch,
                live_brokers={b.id: b for b in request.live_brokers},
                partitions=partitions,
            )
            return deleted

    def snapshot(self) -> MetadataSnapshot:
        """The current view."""
        with self._lock:
            return self._snapshot
