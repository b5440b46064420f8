"""`ClientApi`: the data-plane service of a broker. Metadata is answered from the metadata
cache (an immutable snapshot); Produce, Fetch and OffsetsForLeaderEpoch go to the replica
manager. Runs on gRPC worker threads."""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import Future

from broker_node.metadata_cache import MetadataCache
from broker_node.replica_manager import ReplicaManager
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import NO_LEADER


class ClientApi:
    """Metadata from one broker's cache; Produce, Fetch and OffsetsForLeaderEpoch on its
    replicas."""

    def __init__(self, cache: MetadataCache, replicas: ReplicaManager) -> None:
        self._cache = cache
        self._replicas = replicas

    def produce(self, request: m.ProduceRequest) -> Future[m.ProduceResponse]:
        """Append to a partition this broker leads; the answer is a future (an acks=all
        request waits for the ISR in the produce purgatory, holding no thread)."""
        return self._replicas.produce(request)

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions (consumers up to the high watermark, followers up to the end)."""
        return self._replicas.fetch(request)

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where leader epochs ended (KIP-101)."""
        return self._replicas.offsets_for_leader_epoch(request)

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
