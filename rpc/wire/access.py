"""Who may call what on a broker's mutual-TLS server, checked before any handler runs.

The TLS handshake already admits only certificates of the cluster's CA. Among those, the
certificate's common name is the caller's principal (`principal`): `broker-N` is broker N
(each compose broker has its own certificate), a name in `AccessPolicy.control_roles` (the
shared `broker` certificate, held on the host beside the CA's key: brokers run on the host
and the chaos request proxy) a broker acting for any broker, and anything else (`client`:
the tools) no broker. A broker principal alone may send the controller's requests
(LeaderAndIsr, UpdateMetadata, StopReplica) and AlterIsr, fetch or ask leader epochs as a
follower (`replica_id` >= 0); a ControlledShutdown is accepted only from the broker it
names (or the shared certificate); ElectLeaders and the rest of the ClientApi from any
certificate of the CA. As Kafka answers CLUSTER_AUTHORIZATION_FAILED to a request that
needs the ClusterAction right, a call refused here ends with PERMISSION_DENIED whose details
start with that error's name (or UNAUTHENTICATED: no certificate identity at all, which the
handshake should have made impossible), and `AccessPolicy.on_refused` is told first.

`PeerCheck` is an interceptor of the `grpc.aio` server; the check runs where the call's
handler runs (a worker thread, or the server's loop for a coroutine handler), on the
decoded request."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import grpc

from rpc.errors import Errors

#: BrokerControl methods only brokers call: the controller's three requests, and a
#: broker's ControlledShutdown and a partition leader's AlterIsr to the controller.
BROKER_ONLY_METHODS = frozenset(
    {"LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdown", "AlterIsr"}
)
#: ClientApi methods that only a broker may call as a follower (`replica_id` >= 0).
FOLLOWER_METHODS = frozenset({"Fetch", "OffsetsForLeaderEpoch"})
#: The common name of broker N's own certificate is `broker-N` (`security.tls_files`).
BROKER_NAME_PREFIX = "broker-"
_BROKER_CONTROL = "BrokerControl"
_CLIENT_API = "ClientApi"
_DENIED = Errors.CLUSTER_AUTHORIZATION_FAILED.name


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a certificate says the caller is: `name` its common name ("" without one),
    `broker` whether it is a broker identity, `broker_id` the broker's id when the
    certificate names one (None: not a broker, or the shared broker certificate)."""

    name: str
    broker: bool
    broker_id: int | None


@dataclass(frozen=True, slots=True)
class Refusal:
    """A call refused before its handler: who (`peer` as gRPC names it, `identity` the
    certificate's common name or "" without one), what (`method`, e.g.
    `BrokerControl/LeaderAndIsr`) and why (`status`, `reason`)."""

    peer: str
    identity: str
    method: str
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """The shared roles that act as any broker (`control_roles`), and who hears of
    refusals (called on the refused call's worker thread; it must not block)."""

    control_roles: frozenset[str]
    on_refused: Callable[[Refusal], None]


def short_method(full: str) -> str:
    """`/testbed.control.v1.BrokerControl/LeaderAndIsr` -> `BrokerControl/LeaderAndIsr`."""
    service, _, method = full.rpartition("/")
    return f"{service.rsplit('.', 1)[-1]}/{method}"


def principal(policy: AccessPolicy, common_names: list[str]) -> Principal:
    """The principal of a certificate whose common names are `common_names`. Pure."""
    name = common_names[0] if common_names else ""
    number = name.removeprefix(BROKER_NAME_PREFIX)
    if number != name and number.isascii() and number.isdigit():
        return Principal(name, True, int(number))
    return Principal(name, name in policy.control_roles, None)


def refusal(
    policy: AccessPolicy,
    method: str,
    peer: str,
    common_names: list[str],
    request: Any = None,
) -> Refusal | None:
    """The refusal of a call to `method` (short form) carrying `request` (the decoded
    message; its `broker_id` or `replica_id` is read) by a peer whose certificate has
    `common_names`, or None if the policy allows it. Pure."""
    caller = principal(policy, common_names)
    if not caller.name:
        return Refusal(peer, "", method, "UNAUTHENTICATED", "no client certificate identity")
    reason = _why_not(caller, method, request)
    if reason is None:
        return None
    return Refusal(peer, caller.name, method, "PERMISSION_DENIED", f"{_DENIED}: {reason}")


def _why_not(caller: Principal, method: str, request: Any) -> str | None:
    service, _, name = method.partition("/")
    if service == _BROKER_CONTROL and name in BROKER_ONLY_METHODS:
        if not caller.broker:
            return f"{caller.name!r} is not a broker identity and may not call {method}"
        asked = getattr(request, "broker_id", None)
        named = caller.broker_id
        if name == "ControlledShutdown" and named is not None and asked != named:
            return f"{caller.name!r} may not ask a controlled shutdown for broker {asked}"
    if service == _CLIENT_API and name in FOLLOWER_METHODS and not caller.broker:
        replica = getattr(request, "replica_id", -1)
        if replica >= 0:
            return (
                f"{caller.name!r} is not a broker identity and may not fetch as replica {replica}"
            )
    return None


def _common_names(context: Any) -> list[str]:
    found: Any = context.auth_context().get("x509_common_name", [])
    if isinstance(found, bytes):
        found = [found]
    return [n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n) for n in found]


class PeerCheck(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]  # generic only in the stubs
    """Refuses a call whose caller's certificate does not allow it, before its handler.
    An interceptor of the `grpc.aio` server: a plain handler stays plain (it runs on a
    worker thread with its context), a coroutine handler stays a coroutine."""

    def __init__(self, policy: AccessPolicy) -> None:
        self._policy = policy
        #: each method's checked handler, made at its first call (the server's handlers
        #: are fixed once it serves; the event loop's thread)
        self._checked: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """Wrap the method's handler in the check (every method of ours is unary), once per
        method."""
        checked_handler = self._checked.get(handler_call_details.method)
        if checked_handler is not None:
            return checked_handler
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # type: ignore[return-value]  # an unknown method: gRPC answers it
        method = short_method(handler_call_details.method)
        inner = handler.unary_unary
        policy = self._policy

        def refused_by(request: Any, context: Any) -> Refusal | None:
            found = refusal(policy, method, "", _common_names(context), request)
            if found is not None:  # the peer's address is asked for only when refused
                found = replace(found, peer=context.peer())
                policy.on_refused(found)
            return found

        checked: Callable[[Any, Any], Any]
        if inspect.iscoroutinefunction(inner):

            async def checked_async(request: Any, context: Any) -> Any:
                refused = refused_by(request, context)
                if refused is None:
                    return await inner(request, context)
                await context.abort(getattr(grpc.StatusCode, refused.status), refused.reason)

            checked = checked_async
        else:

            def checked_sync(request: Any, context: Any) -> Any:
                refused = refused_by(request, context)
                if refused is None:
                    return inner(request, context)
                context.abort(getattr(grpc.StatusCode, refused.status), refused.reason)

            checked = checked_sync
        checked_handler = grpc.unary_unary_rpc_method_handler(
            checked,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        self._checked[handler_call_details.method] = checked_handler
        return checked_handler
