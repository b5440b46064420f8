"""The one module that touches generated protobuf code (`testbed_rpc`).

Converts `rpc.messages` to and from protobuf, adapts a `BrokerControlHandler` to the
generated gRPC servicer, and wraps the generated stub in `BrokerControlClient`.
Server-side handlers run on gRPC's worker threads; the client blocks its caller.
"""

from __future__ import annotations

from typing import Any, Protocol

import grpc

from rpc import messages as m
from rpc.errors import Errors
from testbed_rpc import control_pb2 as pb
from testbed_rpc import control_pb2_grpc as pb_grpc
from zkdata.model import EndPoint, TopicPartition

#: gRPC's default 4 MiB cap is reached near 120k partitions; control requests may be larger.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]


class BrokerControlHandler(Protocol):
    """What a broker does with each control request (domain objects in and out)."""

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Become leader or follower of partitions."""

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Refresh the metadata cache."""

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Stop replicas."""

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Move leaderships off a stopping broker (answered by the controller)."""

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Run preferred or unclean elections (answered by the controller)."""


# -- conversions -----------------------------------------------------------------------


def _header_to_pb(h: m.ControlHeader) -> pb.ControlHeader:
    return pb.ControlHeader(
        controller_id=h.controller_id,
        controller_epoch=h.controller_epoch,
        broker_epoch=h.broker_epoch,
    )


def _header_from_pb(h: pb.ControlHeader) -> m.ControlHeader:
    return m.ControlHeader(h.controller_id, h.controller_epoch, h.broker_epoch)


def _errors_to_pb(errors: tuple[m.PartitionError, ...]) -> list[pb.PartitionError]:
    return [
        pb.PartitionError(
            topic=e.topic_partition.topic,
            partition=e.topic_partition.partition,
            error_code=int(e.error),
        )
        for e in errors
    ]


def _errors_from_pb(errors: Any) -> tuple[m.PartitionError, ...]:
    return tuple(
        m.PartitionError(TopicPartition(e.topic, e.partition), Errors.from_code(e.error_code))
        for e in errors
    )


def leader_and_isr_request_to_pb(r: m.LeaderAndIsrRequest) -> pb.LeaderAndIsrRequest:
    """Domain -> protobuf."""
    return pb.LeaderAndIsrRequest(
        header=_header_to_pb(r.header),
        partition_states=[
            pb.LeaderAndIsrPartitionState(
                topic=s.topic,
                partition=s.partition,
                controller_epoch=s.controller_epoch,
                leader=s.leader,
                leader_epoch=s.leader_epoch,
                isr=s.isr,
                zk_version=s.zk_version,
                replicas=s.replicas,
                adding_replicas=s.adding_replicas,
                removing_replicas=s.removing_replicas,
                is_new=s.is_new,
            )
            for s in r.partition_states
        ],
        live_leaders=[
            pb.LiveLeader(broker_id=x.broker_id, host=x.host, port=x.port) for x in r.live_leaders
        ],
    )


def leader_and_isr_request_from_pb(r: pb.LeaderAndIsrRequest) -> m.LeaderAndIsrRequest:
    """Protobuf -> domain."""
    return m.LeaderAndIsrRequest(
        header=_header_from_pb(r.header),
        partition_states=tuple(
            m.LeaderAndIsrPartitionState(
                topic=s.topic,
                partition=s.partition,
                controller_epoch=s.controller_epoch,
                leader=s.leader,
                leader_epoch=s.leader_epoch,
                isr=tuple(s.isr),
                zk_version=s.zk_version,
                replicas=tuple(s.replicas),
                adding_replicas=tuple(s.adding_replicas),
                removing_replicas=tuple(s.removing_replicas),
                is_new=s.is_new,
            )
            for s in r.partition_states
        ),
        live_leaders=tuple(m.LiveLeader(x.broker_id, x.host, x.port) for x in r.live_leaders),
    )


def leader_and_isr_response_to_pb(r: m.LeaderAndIsrResponse) -> pb.LeaderAndIsrResponse:
    """Domain -> protobuf."""
    return pb.LeaderAndIsrResponse(
        error_code=int(r.error), partition_errors=_errors_to_pb(r.partition_errors)
    )


def leader_and_isr_response_from_pb(r: pb.LeaderAndIsrResponse) -> m.LeaderAndIsrResponse:
    """Protobuf -> domain."""
    return m.LeaderAndIsrResponse(
        Errors.from_code(r.error_code), _errors_from_pb(r.partition_errors)
    )


def _endpoint_to_pb(e: EndPoint) -> pb.Endpoint:
    return pb.Endpoint(
        listener=e.listener, host=e.host, port=e.port, security_protocol=e.security_protocol
    )


def update_metadata_request_to_pb(r: m.UpdateMetadataRequest) -> pb.UpdateMetadataRequest:
    """Domain -> protobuf."""
    return pb.UpdateMetadataRequest(
        header=_header_to_pb(r.header),
        partition_states=[
            pb.UpdateMetadataPartitionState(
                topic=s.topic,
                partition=s.partition,
                controller_epoch=s.controller_epoch,
                leader=s.leader,
                leader_epoch=s.leader_epoch,
                isr=s.isr,
                zk_version=s.zk_version,
                replicas=s.replicas,
                offline_replicas=s.offline_replicas,
            )
            for s in r.partition_states
        ],
        live_brokers=[
            pb.LiveBroker(
                id=b.id, endpoints=[_endpoint_to_pb(e) for e in b.endpoints], rack=b.rack or ""
            )
            for b in r.live_brokers
        ],
    )


def update_metadata_request_from_pb(r: pb.UpdateMetadataRequest) -> m.UpdateMetadataRequest:
    """Protobuf -> domain."""
    return m.UpdateMetadataRequest(
        header=_header_from_pb(r.header),
        partition_states=tuple(
            m.UpdateMetadataPartitionState(
                topic=s.topic,
                partition=s.partition,
                controller_epoch=s.controller_epoch,
                leader=s.leader,
                leader_epoch=s.leader_epoch,
                isr=tuple(s.isr),
                zk_version=s.zk_version,
                replicas=tuple(s.replicas),
                offline_replicas=tuple(s.offline_replicas),
            )
            for s in r.partition_states
        ),
        live_brokers=tuple(_live_broker_from_pb(b) for b in r.live_brokers),
    )


def stop_replica_request_to_pb(r: m.StopReplicaRequest) -> pb.StopReplicaRequest:
    """Domain -> protobuf."""
    return pb.StopReplicaRequest(
        header=_header_to_pb(r.header),
        partition_states=[
            pb.StopReplicaPartitionState(
                topic=s.topic,
                partition=s.partition,
                leader_epoch=s.leader_epoch,
                delete_partition=s.delete_partition,
            )
            for s in r.partition_states
        ],
    )


def stop_replica_request_from_pb(r: pb.StopReplicaRequest) -> m.StopReplicaRequest:
    """Protobuf -> domain."""
    return m.StopReplicaRequest(
        header=_header_from_pb(r.header),
        partition_states=tuple(
            m.StopReplicaPartitionState(s.topic, s.partition, s.leader_epoch, s.delete_partition)
            for s in r.partition_states
        ),
    )


def stop_replica_response_to_pb(r: m.StopReplicaResponse) -> pb.StopReplicaResponse:
    """Domain -> protobuf."""
    return pb.StopReplicaResponse(
        error_code=int(r.error), partition_errors=_errors_to_pb(r.partition_errors)
    )


def stop_replica_response_from_pb(r: pb.StopReplicaResponse) -> m.StopReplicaResponse:
    """Protobuf -> domain."""
    return m.StopReplicaResponse(
        Errors.from_code(r.error_code), _errors_from_pb(r.partition_errors)
    )


def controlled_shutdown_response_to_pb(
    r: m.ControlledShutdownResponse,
) -> pb.ControlledShutdownResponse:
    """Domain -> protobuf."""
    return pb.ControlledShutdownResponse(
        error_code=int(r.error),
        remaining_partitions=[
            pb.TopicPartition(topic=tp.topic, partition=tp.partition)
            for tp in r.remaining_partitions
        ],
    )


def controlled_shutdown_response_from_pb(
    r: pb.ControlledShutdownResponse,
) -> m.ControlledShutdownResponse:
    """Protobuf -> domain."""
    return m.ControlledShutdownResponse(
        Errors.from_code(r.error_code),
        tuple(TopicPartition(tp.topic, tp.partition) for tp in r.remaining_partitions),
    )


def _live_broker_from_pb(b: Any) -> m.LiveBroker:
    return m.LiveBroker(
        id=b.id,
        endpoints=tuple(
            EndPoint(e.host, e.port, e.listener, e.security_protocol) for e in b.endpoints
        ),
        rack=b.rack or None,
    )


def metadata_response_to_pb(r: m.MetadataResponse) -> pb.MetadataResponse:
    """Domain -> protobuf."""
    return pb.MetadataResponse(
        controller_id=r.controller_id,
        controller_epoch=r.controller_epoch,
        brokers=[
            pb.LiveBroker(
                id=b.id, endpoints=[_endpoint_to_pb(e) for e in b.endpoints], rack=b.rack or ""
            )
            for b in r.brokers
        ],
        topics=[
            pb.TopicMetadata(
                name=t.name,
                error_code=int(t.error),
                partitions=[
                    pb.PartitionMetadata(
                        partition=p.partition,
                        error_code=int(p.error),
                        leader=p.leader,
                        leader_epoch=p.leader_epoch,
                        replicas=p.replicas,
                        isr=p.isr,
                        offline_replicas=p.offline_replicas,
                    )
                    for p in t.partitions
                ],
            )
            for t in r.topics
        ],
    )


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


def produce_request_to_pb(r: m.ProduceRequest) -> pb.ProduceRequest:
    """Domain -> protobuf."""
    return pb.ProduceRequest(
        acks=r.acks,
        timeout_ms=r.timeout_ms,
        topic=r.topic,
        partition=r.partition,
        records=[
            pb.ProducedRecord(
                key=rec.key or b"",
                has_key=rec.key is not None,
                value=rec.value,
                timestamp_ms=rec.timestamp_ms,
            )
            for rec in r.records
        ],
    )


def produce_request_from_pb(r: pb.ProduceRequest) -> m.ProduceRequest:
    """Protobuf -> domain."""
    return m.ProduceRequest(
        topic=r.topic,
        partition=r.partition,
        records=tuple(
            m.ProducedRecord(rec.key if rec.has_key else None, rec.value, rec.timestamp_ms)
            for rec in r.records
        ),
        acks=r.acks,
        timeout_ms=r.timeout_ms,
    )


def fetch_request_to_pb(r: m.FetchRequest) -> pb.FetchRequest:
    """Domain -> protobuf."""
    return pb.FetchRequest(
        replica_id=r.replica_id,
        max_wait_ms=r.max_wait_ms,
        partitions=[
            pb.FetchPartition(
                topic=p.topic,
                partition=p.partition,
                fetch_offset=p.fetch_offset,
                current_leader_epoch=p.current_leader_epoch,
                max_records=p.max_records,
            )
            for p in r.partitions
        ],
    )


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
    )


def fetch_response_to_pb(r: m.FetchResponse) -> pb.FetchResponse:
    """Domain -> protobuf."""
    return pb.FetchResponse(
        error_code=int(r.error),
        partitions=[
            pb.FetchedPartition(
                topic=p.topic,
                partition=p.partition,
                error_code=int(p.error),
                high_watermark=p.high_watermark,
                log_start_offset=p.log_start_offset,
                log_end_offset=p.log_end_offset,
                records=[
                    pb.FetchedRecord(
                        offset=rec.offset,
                        leader_epoch=rec.leader_epoch,
                        timestamp_ms=rec.timestamp_ms,
                        key=rec.key or b"",
                        has_key=rec.key is not None,
                        value=rec.value,
                    )
                    for rec in p.records
                ],
            )
            for p in r.partitions
        ],
    )


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
            )
            for p in r.partitions
        ),
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


# -- server side -------------------------------------------------------------------------


class _BrokerControlServicer(pb_grpc.BrokerControlServicer):
    """Adapts protobuf calls to a `BrokerControlHandler` (runs on gRPC worker threads)."""

    def __init__(self, handler: BrokerControlHandler) -> None:
        self._handler = handler

    def LeaderAndIsr(self, request: pb.LeaderAndIsrRequest, context: Any) -> Any:
        response = self._handler.leader_and_isr(leader_and_isr_request_from_pb(request))
        return leader_and_isr_response_to_pb(response)

    def UpdateMetadata(self, request: pb.UpdateMetadataRequest, context: Any) -> Any:
        response = self._handler.update_metadata(update_metadata_request_from_pb(request))
        return pb.UpdateMetadataResponse(error_code=int(response.error))

    def StopReplica(self, request: pb.StopReplicaRequest, context: Any) -> Any:
        response = self._handler.stop_replica(stop_replica_request_from_pb(request))
        return stop_replica_response_to_pb(response)

    def ControlledShutdown(self, request: pb.ControlledShutdownRequest, context: Any) -> Any:
        response = self._handler.controlled_shutdown(
            m.ControlledShutdownRequest(request.broker_id, request.broker_epoch)
        )
        return controlled_shutdown_response_to_pb(response)

    def ElectLeaders(self, request: pb.ElectLeadersRequest, context: Any) -> Any:
        response = self._handler.elect_leaders(
            m.ElectLeadersRequest(
                request.election_type,
                tuple(TopicPartition(p.topic, p.partition) for p in request.partitions),
                request.timeout_ms,
            )
        )
        return pb.ElectLeadersResponse(
            error_code=int(response.error),
            results=[
                pb.PartitionElectionResult(
                    topic=r.topic_partition.topic,
                    partition=r.topic_partition.partition,
                    error_code=int(r.error),
                    error_message=r.message,
                )
                for r in response.results
            ],
        )


class ClientApiHandler(Protocol):
    """What a broker answers to clients (domain objects in and out)."""

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """Describe brokers and topics."""

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """Append to a partition leader."""

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions."""

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where leader epochs ended."""


class _ClientApiServicer(pb_grpc.ClientApiServicer):
    """Adapts protobuf calls to a `ClientApiHandler` (runs on gRPC worker threads)."""

    def __init__(self, handler: ClientApiHandler) -> None:
        self._handler = handler

    def Metadata(self, request: pb.MetadataRequest, context: Any) -> Any:
        response = self._handler.metadata(m.MetadataRequest(tuple(request.topics)))
        return metadata_response_to_pb(response)

    def Produce(self, request: pb.ProduceRequest, context: Any) -> Any:
        r = self._handler.produce(produce_request_from_pb(request))
        return pb.ProduceResponse(
            error_code=int(r.error),
            base_offset=r.base_offset,
            last_offset=r.last_offset,
            error_message=r.error_message,
        )

    def Fetch(self, request: pb.FetchRequest, context: Any) -> Any:
        return fetch_response_to_pb(self._handler.fetch(fetch_request_from_pb(request)))

    def OffsetsForLeaderEpoch(self, request: pb.OffsetsForLeaderEpochRequest, context: Any) -> Any:
        response = self._handler.offsets_for_leader_epoch(
            offsets_for_leader_epoch_request_from_pb(request)
        )
        return offsets_for_leader_epoch_response_to_pb(response)


def add_client_api_service(server: grpc.Server, handler: ClientApiHandler) -> None:
    """Serve `handler` as the ClientApi service on `server`."""
    pb_grpc.add_ClientApiServicer_to_server(_ClientApiServicer(handler), server)  # type: ignore[no-untyped-call]


def add_broker_control_service(server: grpc.Server, handler: BrokerControlHandler) -> None:
    """Serve `handler` as the BrokerControl service on `server`."""
    pb_grpc.add_BrokerControlServicer_to_server(_BrokerControlServicer(handler), server)  # type: ignore[no-untyped-call]


# -- client side -------------------------------------------------------------------------


class BrokerControlClient:
    """A channel to one broker's BrokerControl service. Calls block the calling thread and
    raise `grpc.RpcError` on transport failure."""

    def __init__(self, target: str, timeout_s: float = 10.0) -> None:
        self._channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        self._stub = pb_grpc.BrokerControlStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout_s
        self.target = target

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Send LeaderAndIsr."""
        reply = self._stub.LeaderAndIsr(
            leader_and_isr_request_to_pb(request), timeout=self._timeout
        )
        return leader_and_isr_response_from_pb(reply)

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Send UpdateMetadata."""
        reply = self._stub.UpdateMetadata(
            update_metadata_request_to_pb(request), timeout=self._timeout
        )
        return m.UpdateMetadataResponse(Errors.from_code(reply.error_code))

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Send StopReplica."""
        reply = self._stub.StopReplica(stop_replica_request_to_pb(request), timeout=self._timeout)
        return stop_replica_response_from_pb(reply)

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Send ControlledShutdown."""
        reply = self._stub.ControlledShutdown(
            pb.ControlledShutdownRequest(
                broker_id=request.broker_id, broker_epoch=request.broker_epoch
            ),
            timeout=self._timeout,
        )
        return controlled_shutdown_response_from_pb(reply)

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Ask the controller for elections."""
        reply = self._stub.ElectLeaders(
            pb.ElectLeadersRequest(
                election_type=request.election_type,
                partitions=[
                    pb.TopicPartition(topic=tp.topic, partition=tp.partition)
                    for tp in request.partitions
                ],
                timeout_ms=request.timeout_ms,
            ),
            timeout=max(self._timeout, request.timeout_ms / 1000 + 5),
        )
        return m.ElectLeadersResponse(
            Errors.from_code(reply.error_code),
            tuple(
                m.PartitionElectionResult(
                    TopicPartition(r.topic, r.partition),
                    Errors.from_code(r.error_code),
                    r.error_message,
                )
                for r in reply.results
            ),
        )

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def __enter__(self) -> BrokerControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ClientApiClient:
    """A channel to one broker's ClientApi service (blocks the calling thread)."""

    def __init__(self, target: str, timeout_s: float = 10.0) -> None:
        self._channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        self._stub = pb_grpc.ClientApiStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout_s
        self.target = target

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        """Ask for brokers and topics (all topics when `topics` is empty)."""
        reply = self._stub.Metadata(pb.MetadataRequest(topics=topics), timeout=self._timeout)
        return metadata_response_from_pb(reply)

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """Append records to a partition leader."""
        timeout = max(self._timeout, request.timeout_ms / 1000 + 5)
        reply = self._stub.Produce(produce_request_to_pb(request), timeout=timeout)
        return m.ProduceResponse(
            Errors.from_code(reply.error_code),
            reply.base_offset,
            reply.last_offset,
            reply.error_message,
        )

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions (waits up to `max_wait_ms` for data on the broker)."""
        timeout = max(self._timeout, request.max_wait_ms / 1000 + 5)
        return fetch_response_from_pb(
            self._stub.Fetch(fetch_request_to_pb(request), timeout=timeout)
        )

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Ask where leader epochs ended."""
        reply = self._stub.OffsetsForLeaderEpoch(
            offsets_for_leader_epoch_request_to_pb(request), timeout=self._timeout
        )
        return offsets_for_leader_epoch_response_from_pb(reply)

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def __enter__(self) -> ClientApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
