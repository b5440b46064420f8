"""The replica audit from the client side: ask each broker (ClientApi `ReplicaAudit`) what
its replicas of some topics hold, per leader epoch. A broker that cannot be reached is
answered with its `TransportError`, never an exception, so one dead broker leaves the
others' answers. Calls block the calling thread, one broker after another, each on its own
short-lived channel (plaintext, or mutual TLS with the caller's identity).
"""

from __future__ import annotations

from collections.abc import Mapping

from client.errors import TransportError
from rpc import messages as m
from rpc.errors import RpcError
from rpc.wire import ChannelIdentity, ClientApiClient

#: Reading whole logs takes longer than other calls: the deadline of one broker's answer.
AUDIT_TIMEOUT_S = 60.0


def audit_broker(
    address: str,
    topics: tuple[str, ...],
    tls: ChannelIdentity | None = None,
    timeout_s: float = AUDIT_TIMEOUT_S,
) -> m.ReplicaAuditResponse:
    """One broker's replicas of `topics` (all when empty); `TransportError` on the wire."""
    with ClientApiClient(address, timeout_s, tls) as api:
        try:
            return api.replica_audit(m.ReplicaAuditRequest(topics), timeout_s)
        except RpcError as exc:
            raise TransportError(exc) from exc


def audit_brokers(
    addresses: Mapping[int, str],
    topics: tuple[str, ...],
    tls: ChannelIdentity | None = None,
    timeout_s: float = AUDIT_TIMEOUT_S,
) -> dict[int, m.ReplicaAuditResponse | TransportError]:
    """Every broker's answer (broker id -> answer, or the error that kept it), by id."""
    out: dict[int, m.ReplicaAuditResponse | TransportError] = {}
    for broker in sorted(addresses):
        try:
            out[broker] = audit_broker(addresses[broker], topics, tls, timeout_s)
        except TransportError as exc:
            out[broker] = exc
    return out
