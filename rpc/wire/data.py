"""Data plane on the wire: Metadata, Produce, Fetch and OffsetsForLeaderEpoch (and
ReplicaAudit, converted by `rpc.wire.audit`). Converts `rpc.messages` to and from protobuf
and adapts a `ClientApiHandler` to the generated servicer: Metadata, OffsetsForLeaderEpoch
and ReplicaAudit run on gRPC worker threads, Produce and Fetch on the server's event loop
(`_ClientApiServicer`).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any, Protocol

import grpc

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire.audit import replica_audit_request_from_pb, replica_audit_response_to_pb
from rpc.wire.control import _endpoint_to_pb, _live_broker_from_pb
from rpc.wire.produce import produce_request_from_pb, produce_response_to_pb
from testbed_rpc import control_pb2 as pb
from testbed_rpc import control_pb2_grpc as pb_grpc


def metadata_response_to_pb(r: m.MetadataResponse) -> pb.MetadataResponse:
    """Domain -> protobuf. Repeated entries are added in place (`add`), never built and
    then copied in: a third of the time for thousands of partitions."""
    out = pb.MetadataResponse(
        controller_id=r.controller_id,
        controller_epoch=r.controller_epoch,
        brokers=[
            pb.LiveBroker(
                id=b.id, endpoints=[_endpoint_to_pb(e) for e in b.endpoints], rack=b.rack or ""
            )
            for b in r.brokers
        ],
    )
    for t in r.topics:
        topic = out.topics.add(name=t.name, error_code=int(t.error))
        add = topic.partitions.add
        for p in t.partitions:
            add(
                partition=p.partition,
                error_code=int(p.error),
                leader=p.leader,
                leader_epoch=p.leader_epoch,
                replicas=p.replicas,
                isr=p.isr,
                offline_replicas=p.offline_replicas,
            )
    return out


def metadata_response_from_pb(r: pb.MetadataResponse) -> m.MetadataResponse:
    """Protobuf -> domain."""
    return m.MetadataResponse(
        controller_id=r.controller_id,
        controller_epoch=r.controller_epoch,
        brokers=tuple(_live_broker_from_pb(b) for b in r.brokers),
        topics=tuple(
            m.TopicMetadata(
                name=t.name,
                error=Errors.from_code(t.error_code),
                partitions=tuple(
                    m.PartitionMetadata(
                        partition=p.partition,
                        error=Errors.from_code(p.error_code),
                        leader=p.leader,
                        leader_epoch=p.leader_epoch,
                        replicas=tuple(p.replicas),
                        isr=tuple(p.isr),
                        offline_replicas=tuple(p.offline_replicas),
                    )
                    for p in t.partitions
                ),
            )
            for t in r.topics
        ),
    )


def fetch_request_to_pb(r: m.FetchRequest) -> pb.FetchRequest:
    """Domain -> protobuf (the session epoch is always written: absent means sessionless)."""
    out = pb.FetchRequest(
        replica_id=r.replica_id,
        max_wait_ms=r.max_wait_ms,
        session_id=r.session_id,
        session_epoch=r.session_epoch,
        forgotten=[pb.TopicPartition(topic=tp.topic, partition=tp.partition) for tp in r.forgotten],
        encoded_records=r.encoded_records,
    )
    add = out.partitions.add
    for p in r.partitions:
        add(
            topic=p.topic,
            partition=p.partition,
            fetch_offset=p.fetch_offset,
            current_leader_epoch=p.current_leader_epoch,
            max_records=p.max_records,
        )
    return out


def fetch_request_from_pb(r: pb.FetchRequest) -> m.FetchRequest:
    """Protobuf -> domain."""
    return m.FetchRequest(
        partitions=tuple(
            m.FetchPartition(
                p.topic, p.partition, p.fetch_offset, p.current_leader_epoch, p.max_records
            )
            for p in r.partitions
        ),
        replica_id=r.replica_id,
        max_wait_ms=r.max_wait_ms,
        session_id=r.session_id,
        session_epoch=r.session_epoch if r.HasField("session_epoch") else m.FINAL_EPOCH,
        forgotten=tuple(TopicPartition(tp.topic, tp.partition) for tp in r.forgotten),
        encoded_records=r.encoded_records,
    )


def fetch_response_to_pb(r: m.FetchResponse) -> pb.FetchResponse:
    """Domain -> protobuf."""
    out = pb.FetchResponse(error_code=int(r.error), session_id=r.session_id)
    add = out.partitions.add
    for p in r.partitions:
        fetched = add(
            topic=p.topic,
            partition=p.partition,
            error_code=int(p.error),
            high_watermark=p.high_watermark,
            log_start_offset=p.log_start_offset,
            log_end_offset=p.log_end_offset,
            record_data=p.record_data,
        )
        record = fetched.records.add
        for rec in p.records:
            record(
                offset=rec.offset,
                leader_epoch=rec.leader_epoch,
                timestamp_ms=rec.timestamp_ms,
                key=rec.key or b"",
                has_key=rec.key is not None,
                value=rec.value,
            )
    return out


def fetch_response_from_pb(r: pb.FetchResponse) -> m.FetchResponse:
    """Protobuf -> domain."""
    return m.FetchResponse(
        Errors.from_code(r.error_code),
        tuple(
            m.FetchedPartition(
                topic=p.topic,
                partition=p.partition,
                error=Errors.from_code(p.error_code),
                high_watermark=p.high_watermark,
                log_start_offset=p.log_start_offset,
                log_end_offset=p.log_end_offset,
                records=tuple(
                    m.FetchedRecord(
                        rec.offset,
                        rec.leader_epoch,
                        rec.timestamp_ms,
                        rec.key if rec.has_key else None,
                        rec.value,
                    )
                    for rec in p.records
                ),
                record_data=p.record_data,
            )
            for p in r.partitions
        ),
        r.session_id,
    )


def offsets_for_leader_epoch_request_to_pb(
    r: m.OffsetsForLeaderEpochRequest,
) -> pb.OffsetsForLeaderEpochRequest:
    """Domain -> protobuf."""
    return pb.OffsetsForLeaderEpochRequest(
        replica_id=r.replica_id,
        partitions=[
            pb.EpochPartition(
                topic=p.topic,
                partition=p.partition,
                current_leader_epoch=p.current_leader_epoch,
                leader_epoch=p.leader_epoch,
            )
            for p in r.partitions
        ],
    )


def offsets_for_leader_epoch_request_from_pb(
    r: pb.OffsetsForLeaderEpochRequest,
) -> m.OffsetsForLeaderEpochRequest:
    """Protobuf -> domain."""
    return m.OffsetsForLeaderEpochRequest(
        tuple(
            m.EpochPartition(p.topic, p.partition, p.current_leader_epoch, p.leader_epoch)
            for p in r.partitions
        ),
        r.replica_id,
    )


def offsets_for_leader_epoch_response_to_pb(
    r: m.OffsetsForLeaderEpochResponse,
) -> pb.OffsetsForLeaderEpochResponse:
    """Domain -> protobuf."""
    return pb.OffsetsForLeaderEpochResponse(
        partitions=[
            pb.EpochEndOffset(
                topic=p.topic,
                partition=p.partition,
                error_code=int(p.error),
                leader_epoch=p.leader_epoch,
                end_offset=p.end_offset,
            )
            for p in r.partitions
        ]
    )


def offsets_for_leader_epoch_response_from_pb(
    r: pb.OffsetsForLeaderEpochResponse,
) -> m.OffsetsForLeaderEpochResponse:
    """Protobuf -> domain."""
    return m.OffsetsForLeaderEpochResponse(
        tuple(
            m.EpochEndOffset(
                p.topic, p.partition, Errors.from_code(p.error_code), p.leader_epoch, p.end_offset
            )
            for p in r.partitions
        )
    )


class ClientApiHandler(Protocol):
    """What a broker answers to clients (domain objects in and out)."""

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """Describe brokers and topics."""

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse | Future[m.ProduceResponse]:
        """Append to partition leaders: the answer (one result per partition), or a future
        of it (the call's thread is then free while it waits, e.g. for the ISRs)."""

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions on the server's event loop: waits for data without holding a
        thread, and never blocks the loop for long."""

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where leader epochs ended."""

    def replica_audit(self, request: m.ReplicaAuditRequest) -> m.ReplicaAuditResponse:
        """What the hosted replicas hold, per leader epoch."""


class _ClientApiServicer(pb_grpc.ClientApiServicer):
    """Adapts protobuf calls to a `ClientApiHandler`. Metadata and OffsetsForLeaderEpoch
    run on gRPC worker threads; Produce and Fetch are coroutines on the server's event
    loop thread, which wait (for the ISR, for data) without holding any thread: a call
    costs no hop between threads."""

    def __init__(self, handler: ClientApiHandler) -> None:
        self._handler = handler

    def Metadata(self, request: pb.MetadataRequest, context: Any) -> Any:
        response = self._handler.metadata(m.MetadataRequest(tuple(request.topics)))
        return metadata_response_to_pb(response)

    async def Produce(self, request: pb.ProduceRequest, context: Any) -> Any:
        """The append runs on the loop (a write to the page cache); waiting for a future
        answer (acks=all) holds no thread."""
        answer = self._handler.produce(produce_request_from_pb(request))
        if isinstance(answer, Future):  # decided already (acks 0 and 1, errors): no hop
            r = answer.result() if answer.done() else await asyncio.wrap_future(answer)
        else:
            r = answer
        return produce_response_to_pb(r)

    async def Fetch(self, request: pb.FetchRequest, context: Any) -> Any:
        answer = await self._handler.fetch_async(fetch_request_from_pb(request))
        return fetch_response_to_pb(answer)

    def OffsetsForLeaderEpoch(self, request: pb.OffsetsForLeaderEpochRequest, context: Any) -> Any:
        response = self._handler.offsets_for_leader_epoch(
            offsets_for_leader_epoch_request_from_pb(request)
        )
        return offsets_for_leader_epoch_response_to_pb(response)

    def ReplicaAudit(self, request: pb.ReplicaAuditRequest, context: Any) -> Any:
        response = self._handler.replica_audit(replica_audit_request_from_pb(request))
        return replica_audit_response_to_pb(response)


def add_client_api_service(server: grpc.aio.Server, handler: ClientApiHandler) -> None:
    """Serve `handler` as the ClientApi service on `server`."""
    pb_grpc.add_ClientApiServicer_to_server(_ClientApiServicer(handler), server)  # type: ignore[no-untyped-call]
