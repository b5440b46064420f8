"""`ClientApi`: the data-plane service of a broker. Metadata is answered from the metadata
cache (an immutable snapshot); Produce, Fetch and OffsetsForLeaderEpoch go to the replica
manager. Every request is validated first (`broker_node.request_validation`); a refused
request or entry is answered with its error and a `request_invalid` event, and never reaches
the replica manager. Produce and Fetch run on the gRPC server's event loop, the rest on its
worker threads."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from concurrent.futures import Future

from broker_node import client_request_validation as validation
from broker_node.metadata_cache import MetadataCache
from broker_node.purgatory import answered, then
from broker_node.replica_manager import ReplicaManager
from broker_node.request_guard import report_invalid
from domain import NO_LEADER, TopicPartition
from eventlog import EventLog
from rpc import messages as m
from rpc.errors import Errors


class ClientApi:
    """Metadata from one broker's cache; Produce, Fetch and OffsetsForLeaderEpoch on its
    replicas."""

    def __init__(self, cache: MetadataCache, replicas: ReplicaManager, events: EventLog) -> None:
        self._cache = cache
        self._replicas = replicas
        self._events = events

    def produce(self, request: m.ProduceRequest) -> Future[m.ProduceResponse]:
        """Append to partitions this broker leads; the answer is a future (an acks=all
        request waits for the ISRs in the produce purgatory, holding no thread). A refused
        partition is answered with its error and reason, and not appended; the others are
        (`ReplicaManager.produce`)."""
        verdict = validation.produce(request)
        if verdict.ok:
            return self._replicas.produce(request)
        report_invalid(self._events, "Produce", verdict, len(request.partitions))
        if verdict.error is not Errors.NONE:
            return answered(m.ProduceResponse.refused(request, verdict.error, verdict.reason))
        valid = tuple(p for p in request.partitions if p.topic_partition not in verdict.invalid)
        appended = (
            self._replicas.produce(dataclasses.replace(request, partitions=valid))
            if valid
            else answered(m.ProduceResponse(()))
        )
        twice = validation.named_twice(request)

        def in_order(written: m.ProduceResponse) -> m.ProduceResponse:
            results = iter(written.partitions)
            out = []
            for p in request.partitions:
                error, why = validation.produce_entry(p, p.topic_partition in twice)
                out.append(
                    next(results)
                    if error is Errors.NONE
                    else m.PartitionProduceResult(p.topic, p.partition, error, error_message=why)
                )
            return m.ProduceResponse(tuple(out))

        return then(appended, in_order)

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions (consumers up to the high watermark, followers up to the end) on
        the gRPC server's event loop: waiting for data holds no thread
        (`ReplicaManager.fetch_async`). Refused partitions are answered with their error
        and not read."""
        verdict = validation.fetch(request)
        if verdict.ok:
            return await self._replicas.fetch_async(request)
        report_invalid(self._events, "Fetch", verdict, len(request.partitions))
        if verdict.error is not Errors.NONE:
            return m.FetchResponse(verdict.error)
        valid = tuple(f for f in request.partitions if f.topic_partition not in verdict.invalid)
        read = (
            await self._replicas.fetch_async(dataclasses.replace(request, partitions=valid))
            if valid or not request.is_full
            else m.FetchResponse(Errors.NONE)
        )
        # in the order asked; an incremental session's answer may leave a valid partition
        # out (nothing changed) and name partitions this request did not
        by_tp = {p.topic_partition: p for p in read.partitions}
        answered: list[m.FetchedPartition] = []
        for f in request.partitions:
            tp = f.topic_partition
            if tp in verdict.invalid:
                answered.append(m.FetchedPartition(f.topic, f.partition, verdict.invalid[tp]))
            elif tp in by_tp:
                answered.append(by_tp.pop(tp))
        return m.FetchResponse(read.error, (*answered, *by_tp.values()), read.session_id)

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where leader epochs ended (KIP-101). Refused partitions are answered with their
        error (every partition, when the request as a whole is refused)."""
        verdict = validation.offsets_for_leader_epoch(request)
        if verdict.ok:
            return self._replicas.offsets_for_leader_epoch(request)
        report_invalid(self._events, "OffsetsForLeaderEpoch", verdict, len(request.partitions))
        if verdict.error is not Errors.NONE:
            return m.OffsetsForLeaderEpochResponse(
                tuple(
                    m.EpochEndOffset(e.topic, e.partition, verdict.error)
                    for e in request.partitions
                )
            )
        asked = tuple(
            e
            for e in request.partitions
            if TopicPartition(e.topic, e.partition) not in verdict.invalid
        )
        answers = iter(
            self._replicas.offsets_for_leader_epoch(
                m.OffsetsForLeaderEpochRequest(asked, request.replica_id)
            ).partitions
            if asked
            else ()
        )
        out = []
        for e in request.partitions:
            error = verdict.invalid.get(TopicPartition(e.topic, e.partition))
            out.append(m.EpochEndOffset(e.topic, e.partition, error) if error else next(answers))
        return m.OffsetsForLeaderEpochResponse(tuple(out))

    def replica_audit(self, request: m.ReplicaAuditRequest) -> m.ReplicaAuditResponse:
        """Each hosted replica of the topics asked (every one when none is named), by
        topic and partition, with its per-epoch digests (`Partition.audited`)."""
        topics = set(request.topics)
        hosted = sorted(
            (p for p in self._replicas.partitions() if not topics or p.tp.topic in topics),
            key=lambda p: (p.tp.topic, p.tp.partition),
        )
        return m.ReplicaAuditResponse(self._replicas.broker_id, tuple(p.audited() for p in hosted))

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """Live brokers, the controller and the requested topics (all when none named).
        An unknown topic gets UNKNOWN_TOPIC_OR_PARTITION; a partition without a leader,
        LEADER_NOT_AVAILABLE."""
        verdict = validation.metadata(request)
        if not verdict.ok:
            report_invalid(self._events, "Metadata", verdict, len(request.topics))
        snapshot = self._cache.snapshot()
        by_topic: dict[str, list[m.UpdateMetadataPartitionState]] = defaultdict(list)
        for tp, state in snapshot.partitions.items():
            by_topic[tp.topic].append(state)
        names = tuple(dict.fromkeys(request.topics)) or tuple(sorted(by_topic))
        topics = []
        for name in names:
            if verdict.error is not Errors.NONE:
                topics.append(m.TopicMetadata(name, verdict.error))
                continue
            refused = verdict.invalid.get(TopicPartition(name, -1))
            if refused is not None:
                topics.append(m.TopicMetadata(name, refused))
                continue
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
