"""Test doubles for the wire: the real clients joined to the real servicers in-process,
without sockets. Every call is serialized to bytes and parsed back both ways, so a test
exercises every conversion and the handler exactly as a gRPC worker thread would, but on
the calling thread (an async servicer method on an event loop of its own).
"""

from __future__ import annotations

import asyncio
import inspect
from concurrent.futures import Future
from typing import Any

from google.protobuf.message import Message

from rpc.wire.clients import BrokerControlClient, ClientApiClient
from rpc.wire.control_server import BrokerControlHandler, _BrokerControlServicer
from rpc.wire.data import ClientApiHandler, _ClientApiServicer
from testbed_rpc import control_pb2 as pb

_TYPES: dict[str, tuple[type[Message], type[Message]]] = {
    "LeaderAndIsr": (pb.LeaderAndIsrRequest, pb.LeaderAndIsrResponse),
    "UpdateMetadata": (pb.UpdateMetadataRequest, pb.UpdateMetadataResponse),
    "StopReplica": (pb.StopReplicaRequest, pb.StopReplicaResponse),
    "ControlledShutdown": (pb.ControlledShutdownRequest, pb.ControlledShutdownResponse),
    "ElectLeaders": (pb.ElectLeadersRequest, pb.ElectLeadersResponse),
    "AlterIsr": (pb.AlterIsrRequest, pb.AlterIsrResponse),
    "Metadata": (pb.MetadataRequest, pb.MetadataResponse),
    "Produce": (pb.ProduceRequest, pb.ProduceResponse),
    "Fetch": (pb.FetchRequest, pb.FetchResponse),
    "OffsetsForLeaderEpoch": (pb.OffsetsForLeaderEpochRequest, pb.OffsetsForLeaderEpochResponse),
    "ReplicaAudit": (pb.ReplicaAuditRequest, pb.ReplicaAuditResponse),
}


class _LoopbackMethod:
    """One method of a `LoopbackStub`: called like a stub's method, or with `future` as
    a stub's `.future` (run at once; the future holds the reply)."""

    def __init__(self, stub: LoopbackStub, method: str) -> None:
        self._stub = stub
        self._method = method

    def __call__(self, request: Message, timeout: float | None = None) -> Message:
        self._stub.timeouts.append(timeout)
        request_type, response_type = _TYPES[self._method]
        parsed = request_type.FromString(request.SerializeToString())
        reply = getattr(self._stub.servicer, self._method)(parsed, None)
        if inspect.iscoroutine(reply):  # an async method of the aio server (Produce)
            reply = asyncio.run(reply)
        return response_type.FromString(reply.SerializeToString())

    def future(self, request: Message, timeout: float | None = None) -> Future[Message]:
        """The call, run now, as a completed future."""
        done: Future[Message] = Future()
        done.set_result(self(request, timeout))
        return done


class LoopbackStub:
    """Stands in for a generated stub: serializes each call to bytes, parses it back, runs
    the real servicer, and does the same with the reply. Records each call's timeout."""

    def __init__(self, servicer: Any) -> None:
        self.servicer = servicer
        self.timeouts: list[float | None] = []

    def __getattr__(self, method: str) -> _LoopbackMethod:
        if method not in _TYPES:
            raise AttributeError(method)
        return _LoopbackMethod(self, method)


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
