"""Test doubles for the wire: the real clients joined to the real servicers in-process,
without sockets. Every call is serialized to bytes and parsed back both ways, so a test
exercises every conversion and the handler exactly as a gRPC worker thread would, but on
the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from rpc.wire.clients import BrokerControlClient, ClientApiClient
from rpc.wire.control import BrokerControlHandler, _BrokerControlServicer
from rpc.wire.data import ClientApiHandler, _ClientApiServicer
from testbed_rpc import control_pb2 as pb

_TYPES: dict[str, tuple[type[Message], type[Message]]] = {
    "LeaderAndIsr": (pb.LeaderAndIsrRequest, pb.LeaderAndIsrResponse),
    "UpdateMetadata": (pb.UpdateMetadataRequest, pb.UpdateMetadataResponse),
    "StopReplica": (pb.StopReplicaRequest, pb.StopReplicaResponse),
    "ControlledShutdown": (pb.ControlledShutdownRequest, pb.ControlledShutdownResponse),
    "ElectLeaders": (pb.ElectLeadersRequest, pb.ElectLeadersResponse),
    "Metadata": (pb.MetadataRequest, pb.MetadataResponse),
    "Produce": (pb.ProduceRequest, pb.ProduceResponse),
    "Fetch": (pb.FetchRequest, pb.FetchResponse),
    "OffsetsForLeaderEpoch": (pb.OffsetsForLeaderEpochRequest, pb.OffsetsForLeaderEpochResponse),
}


class LoopbackStub:
    """Stands in for a generated stub: serializes each call to bytes, parses it back, runs
    the real servicer, and does the same with the reply. Records each call's timeout."""

    def __init__(self, servicer: Any) -> None:
        self._servicer = servicer
        self.timeouts: list[float | None] = []

    def __getattr__(self, method: str) -> Callable[..., Message]:
        request_type, response_type = _TYPES[method]

        def call(request: Message, timeout: float | None = None) -> Message:
            self.timeouts.append(timeout)
            parsed = request_type.FromString(request.SerializeToString())
            reply: Message = getattr(self._servicer, method)(parsed, None)
            return response_type.FromString(reply.SerializeToString())

        return call


def loopback_control_client(handler: BrokerControlHandler) -> BrokerControlClient:
    """A `BrokerControlClient` whose calls reach `handler` through the loopback (its
    channel is never used; close the client when done)."""
    client = BrokerControlClient("loopback.invalid:1", timeout_s=3.5)
    client._stub = LoopbackStub(_BrokerControlServicer(handler))  # type: ignore[assignment]
    return client


def loopback_client_api(handler: ClientApiHandler) -> ClientApiClient:
    """A `ClientApiClient` whose calls reach `handler` through the loopback."""
    client = ClientApiClient("loopback.invalid:1", timeout_s=3.5)
    client._stub = LoopbackStub(_ClientApiServicer(handler))  # type: ignore[assignment]
    return client
