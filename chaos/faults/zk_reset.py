"""`zk-reset` (`ZkReset`): each target broker's ZooKeeper connection is reset under its
feet (`ss -K` in its network namespace), as a firewall or a load balancer dropping the
connection would. Every request in flight on it fails with ConnectionLoss (kazoo does
not resend a request whose answer it lost; a caller's own retry does), the client
reconnects at once and keeps its session, and kazoo forgets its watches, which the
broker sets again.

Instant (duration 0): `start` closes the connections, `took_effect` proves that each
target had one and that none of them is open any more (the client's new connection is
another), and there is nothing to undo. A target that had no connection open when the
fault started (it was reconnecting) has the connection it makes next closed by the first
check that finds it, and the check after proves that one closed: nothing is reset until
there is something to reset.

Thread-safety: the fault value is immutable but for what `start` records; its methods
run on the injector's thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from chaos.faults.base import Check, FaultTarget
from chaos.faults.links import ZK_PORT, addresses, of_role, running_netns
from chaos.faults.netfault import NetworkFault
from chaos.faults.tcp_watch import TcpConnection, parse_ss

#: A connection as `(server ip, server port, local port)`.
Key = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class ZkReset(NetworkFault):
    """Reset the target brokers' ZooKeeper connections (module docstring)."""

    KIND: ClassVar[str] = "zk-reset"
    _closed: dict[str, list[Key]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def start(self, cluster: FaultTarget) -> None:
        """Close every connection from each target to a ZooKeeper server's client port."""
        self._closed.clear()
        for broker in self.targets:
            self._closed[broker] = self._close(cluster, broker)

    def _close(self, cluster: FaultTarget, broker: str) -> list[Key]:
        """Close `broker`'s connections to the ZooKeeper servers; the ones it closed."""
        netns = running_netns(cluster, broker)
        found = _zk_connections(cluster, netns.established(ZK_PORT))
        for conn in found:
            netns.kill_connections(conn.peer_ip, conn.peer_port, conn.local_port)
        return [_key(c) for c in found]

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Each target had a connection to close, and none of those is open now."""
        checks = []
        for broker in self.targets:
            closed = self._closed.get(broker, [])
            if not closed:
                closed = self._closed[broker] = self._close(cluster, broker)
                said = "reset now" if closed else "no ZooKeeper connection to reset yet"
                checks.append(Check(False, f"{broker}: {said}"))
                continue
            listing = running_netns(cluster, broker).established(ZK_PORT)
            now = {_key(c) for c in _zk_connections(cluster, listing)}
            still = [k for k in closed if k in now]
            names = ", ".join(f"{ip}:{port} from :{local}" for ip, port, local in closed)
            checks.append(
                Check(not still, f"{broker}: {names} " + ("still open" if still else "reset"))
            )
        return Check.all(checks)

    def stop(self, cluster: FaultTarget) -> None:
        """Nothing to undo: the clients reconnected by themselves."""

    def undone(self, cluster: FaultTarget) -> Check:
        """Always holds: a reset leaves nothing behind."""
        return Check(True, "nothing to undo: each client reconnects by itself")


def _zk_connections(cluster: FaultTarget, listing: str) -> list[TcpConnection]:
    # a server another fault stopped has no address and no connection to reset
    servers = set(addresses(cluster, of_role(cluster.services(), "zk")).values())
    return [c for c in parse_ss(listing) if c.peer_ip in servers]


def _key(conn: TcpConnection) -> Key:
    return (conn.peer_ip, conn.peer_port, conn.local_port)
