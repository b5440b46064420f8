"""`ClientApi`: what a broker tells clients, answered from its metadata cache (Kafka's
Metadata request). Runs on gRPC worker threads; reads an immutable cache snapshot."""

from __future__ import annotations

from collections import defaultdict

from broker_node.metadata_cache import MetadataCache
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import NO_LEADER


class ClientApi:
    """Metadata from one broker's cache."""

    def __init__(self, cache: MetadataCache) -> None:
        self._cache = cache

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """Live brokers, the controller and the requested topics (all when none named).
        An unknown topic gets UNKNOWN_TOPIC_OR_PARTITION; a partition without a leader,
        LEADER_NOT_AVAILABLE."""
        snapshot = self._cache.snapshot()
        by_topic: dict[str, list[m.UpdateMetadataPartitionState]] = defaultdict(list)
        for tp, state in snapshot.partitions.items():
            by_topic[tp.topic].append(state)
        names = request.topics or tuple(sorted(by_topic))
        topics = []
        for name in names:
            states = by_topic.get(name)
            if not states:
                topics.append(m.TopicMetadata(name, Errors.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            partitions = tuple(
                m.PartitionMetadata(
                    partition=s.partition,
                    error=Errors.LEADER_NOT_AVAILABLE if s.leader == NO_LEADER else Errors.NONE,
                    leader=s.leader,
                    leader_epoch=s.leader_epoch,
                    replicas=s.replicas,
                    isr=s.isr,
                    offline_replicas=s.offline_replicas,
                )
                for s in sorted(states, key=lambda s: s.partition)
            )
            topics.append(m.TopicMetadata(name, Errors.NONE, partitions))
        return m.MetadataResponse(
            controller_id=snapshot.controller_id,
            controller_epoch=snapshot.controller_epoch,
            brokers=tuple(snapshot.live_brokers[b] for b in sorted(snapshot.live_brokers)),
            topics=tuple(topics),
        )
