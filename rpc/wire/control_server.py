"""The BrokerControl service's server side: what a broker does with each control request
(`BrokerControlHandler`) and its adapter to the generated servicer, which decodes each
request (`rpc.wire.control`), refuses a malformed one as INVALID_REQUEST and encodes the
answer. Handlers run on gRPC worker threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

import grpc

from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire.alter_isr import alter_isr_request_from_pb, alter_isr_response_to_pb
from rpc.wire.control import (
    MalformedStates,
    controlled_shutdown_response_to_pb,
    leader_and_isr_request_from_pb,
    leader_and_isr_response_to_pb,
    stop_replica_request_from_pb,
    stop_replica_response_to_pb,
    update_metadata_request_from_pb,
)
from testbed_rpc import control_pb2 as pb
from testbed_rpc import control_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

#: A context for the handling of one large control request (the broker pauses Python's
#: cyclic garbage collector in it: `controller.collector`).
Around = Callable[[], AbstractContextManager[object]]


class ControlRequests(Protocol):
    """What a broker does with each control request but AlterIsr (domain objects in and
    out)."""

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


class BrokerControlHandler(ControlRequests, Protocol):
    """What a broker does with each control request, AlterIsr included."""

    def alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        """Change partitions' ISRs (answered by the controller)."""


def _refuse_malformed(context: Any, exc: MalformedStates) -> None:
    """A request whose state columns do not line up is answered INVALID_REQUEST as a
    whole, applied nowhere; the reason goes to the log and the call's trailing details."""
    log.warning("refused a malformed control request: %s", exc)
    if context is not None:
        context.set_details(str(exc))


class _BrokerControlServicer(pb_grpc.BrokerControlServicer):
    """Adapts protobuf calls to a `BrokerControlHandler` (runs on gRPC worker threads). A
    LeaderAndIsr or UpdateMetadata is decoded, applied and answered inside `around()`."""

    def __init__(self, handler: BrokerControlHandler, around: Around = nullcontext) -> None:
        self._handler = handler
        self._around = around

    def LeaderAndIsr(self, request: pb.LeaderAndIsrRequest, context: Any) -> Any:
        with self._around():
            try:
                decoded = leader_and_isr_request_from_pb(request)
            except MalformedStates as exc:
                _refuse_malformed(context, exc)
                return pb.LeaderAndIsrResponse(error_code=int(Errors.INVALID_REQUEST))
            return leader_and_isr_response_to_pb(self._handler.leader_and_isr(decoded))

    def UpdateMetadata(self, request: pb.UpdateMetadataRequest, context: Any) -> Any:
        with self._around():
            try:
                decoded = update_metadata_request_from_pb(request)
            except MalformedStates as exc:
                _refuse_malformed(context, exc)
                return pb.UpdateMetadataResponse(error_code=int(Errors.INVALID_REQUEST))
            response = self._handler.update_metadata(decoded)
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

    def AlterIsr(self, request: pb.AlterIsrRequest, context: Any) -> Any:
        response = self._handler.alter_isr(alter_isr_request_from_pb(request))
        return alter_isr_response_to_pb(response)


def add_broker_control_service(
    server: grpc.aio.Server, handler: BrokerControlHandler, around: Around = nullcontext
) -> None:
    """Serve `handler` as the BrokerControl service on `server`; each LeaderAndIsr and
    UpdateMetadata runs, from its bytes to its answer's, inside `around()`."""
    servicer = _BrokerControlServicer(handler, around)
    pb_grpc.add_BrokerControlServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
