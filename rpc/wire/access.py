"""Who may call what on a broker's mutual-TLS server, checked before any handler runs.

The TLS handshake already admits only certificates of the cluster's CA. Among those, the
common name is the caller's role: the controller's requests (LeaderAndIsr, UpdateMetadata,
StopReplica), ControlledShutdown and AlterIsr, which only brokers send, are served only to
the roles in `AccessPolicy.control_roles` (the broker certificate); ElectLeaders and the
ClientApi to any certificate of the CA. A call refused here ends with PERMISSION_DENIED (a
role that may not call the method) or UNAUTHENTICATED (no certificate identity at all, which
the handshake should have made impossible), and `AccessPolicy.on_refused` is told first.

`PeerCheck` is an interceptor of the `grpc.aio` server; the check runs where the call's
handler runs (a worker thread, or the server's loop for a coroutine handler)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import grpc

#: BrokerControl methods only brokers call: the controller's three requests, and a
#: broker's ControlledShutdown and a partition leader's AlterIsr to the controller.
BROKER_ONLY_METHODS = frozenset(
    {"LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdown", "AlterIsr"}
)
_BROKER_CONTROL = "BrokerControl"


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
    """The roles that may call the broker-only methods, and who hears of refusals
    (called on the refused call's worker thread; it must not block)."""

    control_roles: frozenset[str]
    on_refused: Callable[[Refusal], None]


def short_method(full: str) -> str:
    """`/testbed.control.v1.BrokerControl/LeaderAndIsr` -> `BrokerControl/LeaderAndIsr`."""
    service, _, method = full.rpartition("/")
    return f"{service.rsplit('.', 1)[-1]}/{method}"


def refusal(
    policy: AccessPolicy, method: str, peer: str, common_names: list[str]
) -> Refusal | None:
    """The refusal of a call to `method` (short form) by a peer whose certificate has
    `common_names`, or None if the policy allows it. Pure."""
    identity = common_names[0] if common_names else ""
    if not identity:
        return Refusal(peer, "", method, "UNAUTHENTICATED", "no client certificate identity")
    service, _, name = method.partition("/")
    broker_only = service == _BROKER_CONTROL and name in BROKER_ONLY_METHODS
    if broker_only and identity not in policy.control_roles:
        allowed = ", ".join(sorted(policy.control_roles))
        reason = f"{identity!r} may not call {method}; only {allowed}"
        return Refusal(peer, identity, method, "PERMISSION_DENIED", reason)
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

        def refused_by(context: Any) -> Refusal | None:
            found = refusal(policy, method, "", _common_names(context))
            if found is not None:  # the peer's address is asked for only when refused
                found = replace(found, peer=context.peer())
                policy.on_refused(found)
            return found

        checked: Callable[[Any, Any], Any]
        if inspect.iscoroutinefunction(inner):

            async def checked_async(request: Any, context: Any) -> Any:
                refused = refused_by(context)
                if refused is None:
                    return await inner(request, context)
                await context.abort(getattr(grpc.StatusCode, refused.status), refused.reason)

            checked = checked_async
        else:

            def checked_sync(request: Any, context: Any) -> Any:
                refused = refused_by(context)
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
