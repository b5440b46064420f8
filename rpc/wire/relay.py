"""A gRPC relay between the controller and one broker: a server that forwards every unary
call of the broker's services (`BrokerControl`, `ClientApi`) as raw bytes to one upstream
broker, and hands the controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica) to
a `RelayPolicy`, which may forward them, drop them, hold them or send them twice.

Both sides speak the cluster's mutual TLS: the relay serves with a certificate of the
cluster's CA and demands one from its callers, and dials the upstream broker with the same
identity, naming it by its service name (`ssl_target_name_override`), since it reaches it
by address.

A dropped request (`RelayDropped`) is answered `UNAVAILABLE`, as a connection lost on the
way is; the caller's transport retry sees what it sees when a network drops a call.
`summarize` reads a control request's header and the leader epochs of its partitions for a
record of what the relay did; `empty_answer` is the success answer of a kind, with no
partition error, for a request answered before it is delivered.

Thread-safety: one grpc.aio event loop; every coroutine here, and the policy's, runs on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import grpc

from rpc import messages as m
from rpc.errors import Errors
from rpc.wire.control import (
    leader_and_isr_request_from_pb,
    leader_and_isr_response_from_pb,
    stop_replica_request_from_pb,
    stop_replica_response_from_pb,
    update_metadata_request_from_pb,
)
from rpc.wire.options import CHANNEL_OPTIONS
from rpc.wire.tls import ChannelIdentity, server_credentials
from testbed_rpc import control_pb2 as pb

__all__ = [
    "CONTROL_KINDS",
    "ControlSummary",
    "Forward",
    "Relay",
    "RelayDropped",
    "RelayPolicy",
    "UpstreamFailed",
    "answer_errors",
    "empty_answer",
    "summarize",
]

_SERVICE = "/testbed.control.v1.BrokerControl/"
#: The controller's requests by full method name -> their kind (Kafka's API name).
CONTROL_KINDS = {
    f"{_SERVICE}LeaderAndIsr": "LeaderAndIsr",
    f"{_SERVICE}UpdateMetadata": "UpdateMetadata",
    f"{_SERVICE}StopReplica": "StopReplica",
}
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "LeaderAndIsr": lambda body: leader_and_isr_request_from_pb(
        pb.LeaderAndIsrRequest.FromString(body)
    ),
    "UpdateMetadata": lambda body: update_metadata_request_from_pb(
        pb.UpdateMetadataRequest.FromString(body)
    ),
    "StopReplica": lambda body: stop_replica_request_from_pb(
        pb.StopReplicaRequest.FromString(body)
    ),
}
_ANSWERS = {
    "LeaderAndIsr": pb.LeaderAndIsrResponse,
    "UpdateMetadata": pb.UpdateMetadataResponse,
    "StopReplica": pb.StopReplicaResponse,
}

#: Sends a request's bytes upstream; answers the upstream broker's reply bytes.
Forward = Callable[[bytes], Awaitable[bytes]]


class UpstreamFailed(Exception):
    """A call the broker did not answer (its gRPC status and details)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


class RelayDropped(Exception):
    """Raised by a policy for a request that must not reach the broker: the caller is
    answered `UNAVAILABLE`, as for a lost connection."""


@dataclass(frozen=True, slots=True)
class ControlSummary:
    """What a record names of one control request: its kind, header and, per partition,
    `(topic, partition, leader_epoch)`; for a StopReplica, the `(topic, partition)` it
    deletes."""

    kind: str
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partitions: tuple[tuple[str, int, int], ...]
    deleted: tuple[tuple[str, int], ...] = ()


def summarize(kind: str, body: bytes) -> ControlSummary:
    """Decode one control request of `kind` (a value of `CONTROL_KINDS`); `ValueError` for
    an unknown kind or bytes that do not decode."""
    decode = _DECODERS.get(kind)
    if decode is None:
        raise ValueError(f"not a control request kind: {kind!r}")
    try:
        request = decode(body)
    except Exception as exc:  # protobuf's DecodeError or a malformed column
        raise ValueError(f"{kind} does not decode: {exc}") from exc
    header = request.header
    return ControlSummary(
        kind,
        header.controller_id,
        header.controller_epoch,
        header.broker_epoch,
        tuple((s.topic, s.partition, s.leader_epoch) for s in request.partition_states),
        tuple(
            (s.topic, s.partition)
            for s in request.partition_states
            if getattr(s, "delete_partition", False)
        ),
    )


def empty_answer(kind: str) -> bytes:
    """The serialized success answer of a control request kind, with no partition error."""
    return bytes(_ANSWERS[kind](error_code=0).SerializeToString())


def answer_errors(kind: str, body: bytes) -> tuple[str, dict[tuple[str, int], str]]:
    """A control answer's request-level error name and its partition errors (those other
    than NONE); `ValueError` for bytes that do not decode."""
    try:
        if kind == "LeaderAndIsr":
            answer: Any = leader_and_isr_response_from_pb(pb.LeaderAndIsrResponse.FromString(body))
        elif kind == "StopReplica":
            answer = stop_replica_response_from_pb(pb.StopReplicaResponse.FromString(body))
        else:
            code = pb.UpdateMetadataResponse.FromString(body).error_code
            return Errors.from_code(code).name, {}
    except Exception as exc:  # protobuf's DecodeError
        raise ValueError(f"{kind} answer does not decode: {exc}") from exc
    partitions = {
        (e.topic_partition.topic, e.topic_partition.partition): e.error.name
        for e in m.failed_entries(answer.partition_errors)
    }
    return answer.error.name, partitions


class RelayPolicy(Protocol):
    """What the relay asks about each control request (runs on the relay's loop)."""

    async def control(self, summary: ControlSummary, body: bytes, forward: Forward) -> bytes:
        """The answer to give the caller; `forward` delivers bytes to the broker (any number
        of times, now or later; `UpstreamFailed` when the broker does not answer); raise
        `RelayDropped` to drop the request."""
        ...


class _Handler(grpc.GenericRpcHandler):  # type: ignore[type-arg]  # generic only in the stubs
    """Every method: raw bytes in, raw bytes out."""

    def __init__(self, relay: Relay) -> None:
        self._relay = relay

    def service(
        self, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        method = str(details.method)

        async def behave(body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            return await self._relay.call(method, body, context)

        return grpc.unary_unary_rpc_method_handler(behave)


class Relay:
    """The relay to one upstream broker (`target` `host:port`, named `server_name` in its
    certificate). `start` binds a loopback port; `stop` ends it."""

    def __init__(
        self, target: str, server_name: str, identity: ChannelIdentity, policy: RelayPolicy
    ) -> None:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=identity.ca_pem,
            private_key=identity.key_pem,
            certificate_chain=identity.cert_pem,
        )
        options = [*CHANNEL_OPTIONS, ("grpc.ssl_target_name_override", server_name)]
        self._channel = grpc.aio.secure_channel(target, credentials, options=options)
        self._identity = identity
        self._policy = policy
        self._server: grpc.aio.Server | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Serve on `host:port` (0: the kernel picks); answers the port."""
        server = grpc.aio.server(options=CHANNEL_OPTIONS)
        server.add_generic_rpc_handlers((_Handler(self),))
        bound = server.add_secure_port(f"{host}:{port}", server_credentials(self._identity))
        await server.start()
        self._server = server
        return bound

    async def wait(self) -> None:
        """Until the server stops."""
        if self._server is not None:
            await self._server.wait_for_termination()

    async def stop(self) -> None:
        """Stop serving and close the upstream channel."""
        if self._server is not None:
            await self._server.stop(grace=None)
        await self._channel.close(grace=None)

    async def forward(self, method: str, body: bytes, timeout: float | None = None) -> bytes:
        """Send one call upstream; `grpc.aio.AioRpcError` when it fails."""
        call = self._channel.unary_unary(
            method, request_serializer=None, response_deserializer=None
        )
        answer = await call(body, timeout=timeout)
        return bytes(answer)

    async def call(
        self, method: str, body: bytes, context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> bytes:
        """Serve one call: a control request through the policy, anything else straight."""
        timeout = context.time_remaining()
        kind = CONTROL_KINDS.get(method)
        try:
            if kind is None:
                return await self.forward(method, body, timeout)
            try:
                summary = summarize(kind, body)
            except ValueError:
                return await self.forward(method, body, timeout)  # the broker answers it
            return await self._policy.control(
                summary, body, lambda raw: self.forward(method, raw, timeout)
            )
        except RelayDropped:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "connection lost")
        except UpstreamFailed as exc:
            await context.abort(exc.code, exc.details)
        raise AssertionError("unreachable: abort raises")
