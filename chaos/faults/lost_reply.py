"""`zk-lost-reply` (`ZkLostReply`): a broker's write reaches the ZooKeeper ensemble and is
applied, and its answer never comes back, the way a partition leader's conditional ISR
write went astray in KAFKA-2729. Its client retries the write on a new connection, and
the retry, conditional on the version the first attempt already replaced, meets
BADVERSION.

The kind has no duration: `start` performs spells, one after another for up to
`window_s` until one catches a write (a single spell when `window_s` is 0), and by the
time it returns nothing of them is left. One spell (`perform_spell`,
`chaos.faults.lost_reply_spell`) freezes the ensemble's leader, catches each target's
request that goes unanswered meanwhile, drops its answer, thaws the leader and closes the
caught connection, so that the client reconnects within its session and retries.

The caught connection stays open until the leader has applied the write. A client that
reconnected elsewhere first would move its session, and the leader would then refuse
the forwarded write (SESSIONMOVED) instead of applying it.

The hold is bounded by what the freeze costs everyone else: sessions are touched at the
followers but expire at the leader, which hears of those touches only after the thaw,
and the followers give the leader up after `syncLimit` ticks (5 s here); `MAX_HOLD_S`
keeps both far off for the cluster's 6 s sessions, and `BREATHER_S` between spells lets
the leader catch up.

The fault keeps a trace (`trace()`, written to the run's `traces/`): per spell, the
leader frozen, every sample of the targets' connections during the hold (bytes sent and
received, milliseconds since the last send and receive, what the watch counts as
unanswered), what was caught or lost, and the thaw.

Runs on the injector's thread and blocks it while the spells last (at most `window_s`,
or one spell's `hold_s`, plus `ANSWER_WAIT_S` and the commands around them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, no_extra_fields, number_from, targets_from
from chaos.faults.links import ZK_PORT, addresses, of_role, running_netns
from chaos.faults.lost_reply_spell import (
    DEFAULT_HOLD_S,
    MAX_HOLD_S,
    MAX_WINDOW_S,
    SpellReport,
    perform_spells,
    series_check,
)
from chaos.faults.netfault import NetworkFault
from chaos.faults.params import ParamRule, Scalar, number
from chaos.faults.process import PAUSED, frozen, thawed, unpause_paused
from chaos.faults.rules import drop_replies_to, packet_counts
from chaos.faults.tcp_watch import TcpConnection, parse_cons, parse_ss
from chaos.faults.zookeeper import ensemble


class NetnsWire:
    """`SpellWire` in the targets' network namespaces, its rules tagged `fault_id`."""

    def __init__(self, cluster: FaultTarget, fault_id: str) -> None:
        self._cluster = cluster
        self._fault_id = fault_id
        zks = addresses(cluster, of_role(cluster.services(), "zk"))
        self._server_of = {ip: zk for zk, ip in zks.items()}
        self._zk_ips = set(self._server_of)
        self._ruled: list[str] = []

    def connections(self, broker: str) -> list[TcpConnection]:
        """The broker's connections to a zk server's client port."""
        listing = running_netns(self._cluster, broker).established(ZK_PORT)
        return [c for c in parse_ss(listing) if c.peer_ip in self._zk_ips]

    def drop_replies(self, broker: str, conn: TcpConnection) -> None:
        """One tagged INPUT drop on the connection's local port."""
        rule = drop_replies_to(conn.peer_ip, conn.peer_port, conn.local_port)
        self._ruled.append(broker)
        running_netns(self._cluster, broker).add_rules(self._fault_id, (rule,))

    def dropped(self, broker: str) -> int:
        """The packet counters of the broker's tagged rules, summed."""
        listing = running_netns(self._cluster, broker).listing("filter", verbose=True)
        return sum(packet_counts(listing, self._fault_id))

    def close(self, broker: str, conn: TcpConnection) -> None:
        """`ss -K` the one connection."""
        netns = running_netns(self._cluster, broker)
        netns.kill_connections(conn.peer_ip, conn.peer_port, conn.local_port)

    def lift(self) -> None:
        """Delete the tagged rules from the brokers they were added to."""
        while self._ruled:
            running_netns(self._cluster, self._ruled[-1]).remove_rules(self._fault_id)
            self._ruled.pop()

    def frozen(self, server: str) -> Check:
        """The server is paused and its cgroup FROZEN."""
        return frozen(self._cluster, (server,))

    def outstanding(self, broker: str, conn: TcpConnection) -> int | None:
        """`queued` of the connection in its server's `cons`; None for a server that does
        not answer."""
        server = self._server_of.get(conn.peer_ip)
        if server is None:
            return None
        listing = self._cluster.zk_connections(server)
        if listing is None:
            return None
        return parse_cons(listing).get((self._cluster.ip(broker), conn.local_port), 0)


def _hold(value: Scalar) -> bool:
    found = number(value)
    return found is not None and 0 < found <= MAX_HOLD_S


def _window(value: Scalar) -> bool:
    found = number(value)
    return found is not None and 0 <= found <= MAX_WINDOW_S


def _flag(value: Scalar) -> bool:
    return isinstance(value, bool)


#: The params of `zk-lost-reply` (`chaos.faults.registry`): how long a spell may freeze
#: the leader, how long spells may follow one another, and whether only a write its
#: server holds is caught (`perform_spell`), not a handshake or a read waiting
#: unanswered.
LOST_REPLY_PARAMS = (
    ParamRule("hold_s", DEFAULT_HOLD_S, _hold, f"in (0, {MAX_HOLD_S:g}]"),
    ParamRule("window_s", 0, _window, f"in [0, {MAX_WINDOW_S:g}]"),
    ParamRule("writes_only", False, _flag, "true or false"),
)


@dataclass(frozen=True, slots=True)
class ZkLostReply(NetworkFault):
    """Lost-reply spells on the target brokers (module docstring); took effect when each
    spell froze the leader and dropped the answer of every request it caught, undone
    when no rule is left and no ZooKeeper server is frozen by it."""

    hold_s: float = DEFAULT_HOLD_S
    window_s: float = 0.0
    writes_only: bool = False
    KIND: ClassVar[str] = "zk-lost-reply"
    _spells: list[SpellReport] = field(default_factory=list, compare=False, hash=False, repr=False)
    _trace: list[dict[str, Any]] = field(
        default_factory=list, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        NetworkFault.__post_init__(self)
        hold = number_from({"hold_s": self.hold_s}, "hold_s", DEFAULT_HOLD_S, self.KIND)
        if not 0 < hold <= MAX_HOLD_S:
            raise BadFaultData(f"{self.KIND}: hold_s must be in (0, {MAX_HOLD_S}], got {hold}")
        window = self.window_s
        if isinstance(window, bool) or not isinstance(window, int | float):
            raise BadFaultData(f"{self.KIND}: window_s must be a number, got {window!r}")
        if not 0 <= window <= MAX_WINDOW_S:
            raise BadFaultData(
                f"{self.KIND}: window_s must be in [0, {MAX_WINDOW_S}], got {window}"
            )
        if not isinstance(self.writes_only, bool):
            raise BadFaultData(f"{self.KIND}: writes_only must be true or false")

    @classmethod
    def from_params(cls, targets: tuple[str, ...], params: Mapping[str, Scalar]) -> Self:
        """Build from a step's targets and normalized params (`LOST_REPLY_PARAMS`)."""
        hold, window = (number(params[name]) for name in ("hold_s", "window_s"))
        writes_only = params.get("writes_only", False)
        if hold is None or window is None or not isinstance(writes_only, bool):
            raise BadFaultData(f"{cls.KIND}: bad params {dict(params)}")
        return cls(targets, float(hold), float(window), writes_only)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "hold_s", "window_s", "writes_only"}, cls.KIND)
        hold = number_from(data, "hold_s", DEFAULT_HOLD_S, cls.KIND)
        window = data.get("window_s", 0.0)
        writes_only = data.get("writes_only", False)
        return cls(targets_from(data, cls.KIND), hold, window, writes_only)

    def params(self) -> dict[str, Any]:
        """The hold, the window and whether only writes are caught."""
        return {"hold_s": self.hold_s, "window_s": self.window_s, "writes_only": self.writes_only}

    def start(self, cluster: FaultTarget) -> None:
        """Perform the spells (this blocks while they last)."""
        wire = NetnsWire(cluster, self.fault_id)
        self._trace.clear()
        self._spells[:] = perform_spells(
            cluster,
            self.targets,
            self.hold_s,
            self.window_s,
            wire,
            trace=self._trace,
            writes_only=self.writes_only,
        )

    def trace(self) -> list[dict[str, Any]]:
        """What the spells saw (module docstring)."""
        return list(self._trace)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """What the spells measured while they ran (`series_check`)."""
        return series_check(self._spells)

    def stop(self, cluster: FaultTarget) -> None:
        """Delete the rules and thaw the server the spells froze (every frozen server when
        the fault was rebuilt after its process died mid-spell: it may have frozen any)."""
        self.remove_rules(cluster)
        unpause_paused(cluster, self._frozen_by_it(cluster))

    def undone(self, cluster: FaultTarget) -> Check:
        """No rule of the fault on any service; the servers it froze run, thawed (no
        server is paused, when the fault was rebuilt)."""
        if self._spells:
            return Check.all([self.no_rules_left(cluster), thawed(cluster, self._leaders())])
        paused = [s for s in ensemble(cluster) if cluster.status(s) == PAUSED]
        none_paused = Check(not paused, f"paused: {paused}" if paused else "no server paused")
        return Check.all([self.no_rules_left(cluster), none_paused])

    def _leaders(self) -> tuple[str, ...]:
        """The servers this fault's spells froze."""
        return tuple(sorted({r.leader for r in self._spells}))

    def _frozen_by_it(self, cluster: FaultTarget) -> tuple[str, ...]:
        if self._spells:
            return self._leaders()
        return tuple(s for s in ensemble(cluster) if cluster.status(s) == PAUSED)
