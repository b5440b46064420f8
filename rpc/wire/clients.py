"""The client stubs: `BrokerControlClient` and `ClientApiClient`, one gRPC channel to one
broker each. Calls block the calling thread; every transport or codec failure leaves as an
`rpc.errors.RpcError` (`rpc.wire.status`). Channels are safe to share between threads.
"""

from __future__ import annotations

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire.alter_isr import alter_isr_request_to_pb, alter_isr_response_from_pb
from rpc.wire.audit import replica_audit_request_to_pb, replica_audit_response_from_pb
from rpc.wire.control import (
    controlled_shutdown_response_from_pb,
    leader_and_isr_request_to_pb,
    leader_and_isr_response_from_pb,
    stop_replica_request_to_pb,
    stop_replica_response_from_pb,
    update_metadata_request_to_pb,
)
from rpc.wire.data import (
    fetch_request_to_pb,
    fetch_response_from_pb,
    metadata_response_from_pb,
    offsets_for_leader_epoch_request_to_pb,
    offsets_for_leader_epoch_response_from_pb,
)
from rpc.wire.produce import produce_request_to_pb, produce_response_from_pb, unanswered
from rpc.wire.status import mapped
from rpc.wire.tls import ChannelIdentity, open_channel
from testbed_rpc import control_pb2 as pb
from testbed_rpc import control_pb2_grpc as pb_grpc


class BrokerControlClient:
    """A channel to one broker's BrokerControl service, plaintext or (with `tls`) mutual TLS.
    Calls block the calling thread and raise `rpc.errors.RpcError` on transport failure."""

    def __init__(
        self, target: str, timeout_s: float = 10.0, tls: ChannelIdentity | None = None
    ) -> None:
        self._channel = open_channel(target, tls)
        self._stub = pb_grpc.BrokerControlStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout_s
        self.target = target

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Send LeaderAndIsr."""
        with mapped(self.target):
            reply = self._stub.LeaderAndIsr(
                leader_and_isr_request_to_pb(request), timeout=self._timeout
            )
        return leader_and_isr_response_from_pb(reply)

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Send UpdateMetadata."""
        with mapped(self.target):
            reply = self._stub.UpdateMetadata(
                update_metadata_request_to_pb(request), timeout=self._timeout
            )
        return m.UpdateMetadataResponse(Errors.from_code(reply.error_code))

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Send StopReplica."""
        with mapped(self.target):
            reply = self._stub.StopReplica(
                stop_replica_request_to_pb(request), timeout=self._timeout
            )
        return stop_replica_response_from_pb(reply)

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Send ControlledShutdown."""
        with mapped(self.target):
            reply = self._stub.ControlledShutdown(
                pb.ControlledShutdownRequest(
                    broker_id=request.broker_id, broker_epoch=request.broker_epoch
                ),
                timeout=self._timeout,
            )
        return controlled_shutdown_response_from_pb(reply)

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Ask the controller for elections."""
        with mapped(self.target):
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

    def alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        """Ask the controller to change ISRs."""
        with mapped(self.target):
            reply = self._stub.AlterIsr(alter_isr_request_to_pb(request), timeout=self._timeout)
        return alter_isr_response_from_pb(reply)

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def __enter__(self) -> BrokerControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ClientApiClient:
    """A channel to one broker's ClientApi service, plaintext or (with `tls`) mutual TLS.
    Calls block the calling thread and raise `rpc.errors.RpcError` on transport failure."""

    def __init__(
        self, target: str, timeout_s: float = 10.0, tls: ChannelIdentity | None = None
    ) -> None:
        self._channel = open_channel(target, tls)
        self._stub = pb_grpc.ClientApiStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout_s
        self.target = target

    def metadata(self, topics: tuple[str, ...] = ()) -> m.MetadataResponse:
        """Ask for brokers and topics (all topics when `topics` is empty)."""
        with mapped(self.target):
            reply = self._stub.Metadata(pb.MetadataRequest(topics=topics), timeout=self._timeout)
        return metadata_response_from_pb(reply)

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse:
        """Append records to partitions this broker leads (one result per partition). With
        acks=0 the request is sent and the call returns at once, every partition NONE
        without offsets, without waiting for the broker's answer (Kafka's broker sends
        none): a lost or refused request goes unnoticed."""
        timeout = max(self._timeout, request.timeout_ms / 1000 + 5)
        if request.acks == 0:
            with mapped(self.target):
                self._stub.Produce.future(produce_request_to_pb(request), timeout=timeout)
            return unanswered(request)
        with mapped(self.target):
            reply = self._stub.Produce(produce_request_to_pb(request), timeout=timeout)
        return produce_response_from_pb(reply)

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions (waits up to `max_wait_ms` for data on the broker)."""
        timeout = max(self._timeout, request.max_wait_ms / 1000 + 5)
        with mapped(self.target):
            reply = self._stub.Fetch(fetch_request_to_pb(request), timeout=timeout)
        return fetch_response_from_pb(reply)

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Ask where leader epochs ended."""
        with mapped(self.target):
            reply = self._stub.OffsetsForLeaderEpoch(
                offsets_for_leader_epoch_request_to_pb(request), timeout=self._timeout
            )
        return offsets_for_leader_epoch_response_from_pb(reply)

    def replica_audit(
        self, request: m.ReplicaAuditRequest, timeout_s: float | None = None
    ) -> m.ReplicaAuditResponse:
        """Ask what the broker's replicas hold, per leader epoch (reading whole logs may take
        longer than other calls: `timeout_s` overrides the channel's timeout)."""
        with mapped(self.target):
            reply = self._stub.ReplicaAudit(
                replica_audit_request_to_pb(request), timeout=timeout_s or self._timeout
            )
        return replica_audit_response_from_pb(reply)

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def __enter__(self) -> ClientApiClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
