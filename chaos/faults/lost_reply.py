"""`zk-lost-reply` (`ZkLostReply`): a broker's write reaches the ZooKeeper ensemble and is
applied, and its answer never comes back, the way a partition leader's conditional ISR
write went astray in KAFKA-2729. Its client retries the write on a new connection, and
the retry, conditional on the version the first attempt already replaced, meets
BADVERSION.

The kind has no duration: `start` performs spells, one after another for up to
`window_s` until one catches a write (a single spell when `window_s` is 0), and by the
time it returns nothing of them is left. One spell (`perform_spell`):

1. freeze the server that leads the ensemble (`docker pause`): writes wait at it, while
   the followers go on answering reads and pings, so every session lives on;
2. watch each target's ZooKeeper connection for a request that goes unanswered: by its
   bytes (`ss -ti` in its network namespace, `chaos.faults.tcp_watch`), and, on a
   connection to a follower, by the requests the follower itself holds for it (`cons`:
   a forwarded write waits there for the frozen leader), for at most `hold_s`
   (a target connected to the frozen leader itself drops that connection once a ping
   goes unanswered, and nothing it sends leaves until the thaw: the hold ends early
   when every target is caught or so lost);
3. drop what ZooKeeper sends to each connection caught so (one rule on its local port:
   a new connection passes), then thaw the leader: the write is applied, and its answer
   is dropped, which the rule's packet counter proves;
4. close the caught connections (`ss -K`) and delete the rules: the client reconnects at
   once, within its session, and retries.

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

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self

from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, no_extra_fields, number_from, targets_from
from chaos.faults.links import ZK_PORT, of_role, running_netns
from chaos.faults.netfault import NetworkFault
from chaos.faults.process import PAUSED, frozen, thawed, unpause_paused
from chaos.faults.rules import drop_replies_to, packet_counts
from chaos.faults.tcp_watch import (
    SETTLE_MS,
    TcpConnection,
    UnansweredWatch,
    parse_cons,
    parse_ss,
)
from chaos.faults.zookeeper import ensemble, ensemble_leader

#: The longest freeze of the ensemble's leader a spell may ask for.
MAX_HOLD_S = 3.0
DEFAULT_HOLD_S = 2.5
#: How often the targets' connections are sampled during the hold.
POLL_S = 0.05
#: How far past the hold the freeze may go for a request sent near its end.
SETTLE_GRACE_S = 0.2
#: How long after the thaw the dropped answer may take to arrive.
ANSWER_WAIT_S = 2.0
#: The longest series of spells a step may ask for.
MAX_WINDOW_S = 20.0
#: The pause between two spells of a series, for the thawed leader to catch up.
BREATHER_S = 0.3
#: The shortest hold worth a spell at the end of a series.
MIN_HOLD_S = 0.5


class SpellWire(Protocol):
    """What a spell does to the targets' network (`NetnsWire`; a fake in tests)."""

    def connections(self, broker: str) -> list[TcpConnection]:
        """The broker's established connections to the ensemble's client port."""
        ...

    def drop_replies(self, broker: str, conn: TcpConnection) -> None:
        """Drop what the server sends to `conn` from now on."""
        ...

    def dropped(self, broker: str) -> int:
        """Packets the broker's drop rules have dropped so far."""
        ...

    def close(self, broker: str, conn: TcpConnection) -> None:
        """Close `conn` under the broker's feet."""
        ...

    def lift(self) -> None:
        """Delete every drop rule of the spell."""
        ...

    def frozen(self, server: str) -> Check:
        """Measure that `server` is frozen."""
        ...

    def outstanding(self, broker: str, conn: TcpConnection) -> int | None:
        """How many of `conn`'s requests its server holds unanswered (`cons`); None when
        the server does not say (the frozen leader, or not reachable)."""
        ...


@dataclass(frozen=True, slots=True)
class Caught:
    """A request caught unanswered: whose, on which connection, how big, when."""

    broker: str
    server_ip: str
    local_port: int
    unanswered_bytes: int
    after_ms: int


@dataclass(frozen=True, slots=True)
class SpellReport:
    """What a spell did: the leader it froze, the freeze measured, how long it held, the
    requests caught, the answers dropped per broker, and when the freeze began (the
    clock's seconds)."""

    leader: str
    froze: Check
    held_ms: int
    caught: tuple[Caught, ...]
    answers_dropped: Mapping[str, int]
    started_at: float = 0.0
    lost: tuple[str, ...] = ()

    def check(self) -> Check:
        """Holds when the leader was frozen and every caught request's answer was dropped;
        the detail says what was caught (nothing caught is a spell that still held)."""
        parts = [f"froze {self.leader} for {self.held_ms} ms ({self.froze.detail})"]
        answers_gone = []
        for c in self.caught:
            dropped = self.answers_dropped.get(c.broker, 0)
            answers_gone.append(dropped > 0)
            parts.append(
                f"{c.broker}: {c.unanswered_bytes} bytes to {c.server_ip} unanswered "
                f"{c.after_ms} ms into the freeze, {dropped} packets of the answer dropped, "
                "connection closed"
            )
        if self.lost:
            parts.append(f"{', '.join(self.lost)}: connection closed during the hold")
        if not self.caught:
            parts.append("no request went unanswered during the hold")
        return Check(self.froze.ok and all(answers_gone), "; ".join(parts))


def perform_spell(
    cluster: FaultTarget,
    targets: Sequence[str],
    hold_s: float,
    wire: SpellWire,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    trace: list[dict[str, Any]] | None = None,
) -> SpellReport:
    """One spell (module docstring); what it saw is appended to `trace`. The leader is
    thawed and the rules deleted however the spell ends."""
    trace = [] if trace is None else trace
    leader = ensemble_leader(cluster)
    watches = {broker: UnansweredWatch() for broker in targets}
    before: dict[str, set[tuple[str, int, int]]] = {}
    for broker in targets:
        sample = wire.connections(broker)
        before[broker] = _keys(sample)
        watches[broker].update(sample)
    caught: dict[str, Caught] = {}
    conns: dict[str, TcpConnection] = {}
    lost: set[str] = set()
    queued_since: dict[tuple[str, int], int] = {}
    leader_ip = cluster.ip(leader)
    try:
        cluster.pause(leader)
        started = clock()
        trace.append({"t": 0, "freeze": leader, "wall_ms": int(time.time() * 1000)})
        try:
            froze = wire.frozen(leader)
            while len(caught) + len(lost) < len(targets) and _holding(
                clock() - started, hold_s, watches
            ):
                for broker in targets:
                    if broker in caught or broker in lost:
                        continue
                    sample = wire.connections(broker)
                    at_ms = int((clock() - started) * 1000)
                    if before[broker] and not before[broker] & _keys(sample):
                        lost.add(broker)  # its connection closed: nothing more leaves
                        trace.append({"t": at_ms, "broker": broker, "lost": True})
                        continue
                    conn = watches[broker].update(sample)
                    queued = _queued(wire, broker, sample, at_ms, queued_since, leader_ip)
                    trace.append(_sampled(at_ms, broker, sample, watches[broker], queued))
                    conn = conn or _held_long_enough(broker, sample, at_ms, queued_since)
                    if conn is None:
                        continue
                    wire.drop_replies(broker, conn)
                    conns[broker] = conn
                    caught[broker] = Caught(
                        broker,
                        conn.peer_ip,
                        conn.local_port,
                        watches[broker].unanswered_bytes(conn),
                        int((clock() - started) * 1000),
                    )
                sleep(POLL_S)
            held_ms = int((clock() - started) * 1000)
        finally:
            unpause_paused(cluster, (leader,))
        trace.append({"t": int((clock() - started) * 1000), "thaw": leader})
        dropped = _await_drops(wire, tuple(caught), clock, sleep)
        if caught:
            trace.append({"t": int((clock() - started) * 1000), "dropped": dropped})
        for broker, conn in conns.items():
            wire.close(broker, conn)
    finally:
        wire.lift()
    return SpellReport(
        leader, froze, held_ms, tuple(caught.values()), dropped, started, tuple(sorted(lost))
    )


def perform_spells(
    cluster: FaultTarget,
    targets: Sequence[str],
    hold_s: float,
    window_s: float,
    wire: SpellWire,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    trace: list[dict[str, Any]] | None = None,
) -> tuple[SpellReport, ...]:
    """Spells one after another until one catches a request or `window_s` has passed
    (one spell when it is 0; the last one's hold cut to what is left, but never below
    `MIN_HOLD_S`); the reports in order. Each spell appends to `trace`."""
    started = clock()
    reports = [perform_spell(cluster, targets, hold_s, wire, clock, sleep, trace)]
    while not reports[-1].caught:
        left = window_s - (clock() - started) - BREATHER_S
        if left < MIN_HOLD_S:
            break
        sleep(BREATHER_S)
        hold = min(hold_s, left)
        reports.append(perform_spell(cluster, targets, hold, wire, clock, sleep, trace))
    return tuple(reports)


def series_check(reports: Sequence[SpellReport]) -> Check:
    """One check over a series: every spell held; the detail gives when each spell froze
    the leader (seconds after the first) and how long, then the spell that caught a
    request (or the last)."""
    if not reports:
        return Check(False, "no spell was performed")
    first = reports[0].started_at
    spells = ", ".join(f"+{r.started_at - first:.1f} s for {r.held_ms} ms" for r in reports)
    last = reports[-1].check()
    held = all(r.check().ok for r in reports)
    return Check(held, f"{len(reports)} spell(s) ({spells}); the last: {last.detail}")


def _queued(
    wire: SpellWire,
    broker: str,
    sample: Sequence[TcpConnection],
    at_ms: int,
    since: dict[tuple[str, int], int],
    leader_ip: str,
) -> dict[int, int | None]:
    """Each connection's requests held by its server (by local port; None for one to the
    frozen leader, which says nothing); `since` keeps when each connection was first seen
    holding one, and forgets one seen holding none."""
    found: dict[int, int | None] = {}
    for conn in sample:
        queued = None if conn.peer_ip == leader_ip else wire.outstanding(broker, conn)
        found[conn.local_port] = queued
        key = (broker, conn.local_port)
        if queued:
            since.setdefault(key, at_ms)
        else:
            since.pop(key, None)
    return found


def _held_long_enough(
    broker: str,
    sample: Sequence[TcpConnection],
    at_ms: int,
    since: Mapping[tuple[str, int], int],
) -> TcpConnection | None:
    """A connection whose server has held a request of it for `SETTLE_MS` or more: a
    follower answers a read at once, so that is a write waiting for the leader."""
    for conn in sample:
        first = since.get((broker, conn.local_port))
        if first is not None and at_ms - first >= SETTLE_MS:
            return conn
    return None


def _sampled(
    at_ms: int,
    broker: str,
    sample: Sequence[TcpConnection],
    watch: UnansweredWatch,
    queued: Mapping[int, int | None],
) -> dict[str, Any]:
    """A trace record of one sample: per connection its local port, server, bytes sent
    and received, ms since the last send and receive, the bytes taken as unanswered, and
    the requests its server holds (None: it does not say)."""
    conns = [
        [
            c.local_port,
            c.peer_ip,
            c.bytes_sent,
            c.bytes_received,
            c.last_send_ms,
            c.last_receive_ms,
            watch.unanswered_bytes(c),
            queued.get(c.local_port),
        ]
        for c in sample
    ]
    return {"t": at_ms, "broker": broker, "conns": conns}


def _keys(sample: Sequence[TcpConnection]) -> set[tuple[str, int, int]]:
    return {(c.peer_ip, c.peer_port, c.local_port) for c in sample}


def _holding(elapsed: float, hold_s: float, watches: Mapping[str, UnansweredWatch]) -> bool:
    """Whether the freeze goes on: within the hold, or a little past it while a request
    sent near its end has not waited long enough to tell."""
    if elapsed < hold_s:
        return True
    return elapsed < hold_s + SETTLE_GRACE_S and any(w.settling for w in watches.values())


def _await_drops(
    wire: SpellWire,
    brokers: tuple[str, ...],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> dict[str, int]:
    """Each broker's dropped packets, once all have some or `ANSWER_WAIT_S` has passed."""
    deadline = clock() + ANSWER_WAIT_S
    while True:
        dropped = {broker: wire.dropped(broker) for broker in brokers}
        if all(dropped.values()) or clock() >= deadline:
            return dropped
        sleep(POLL_S)


class NetnsWire:
    """`SpellWire` in the targets' network namespaces, its rules tagged `fault_id`."""

    def __init__(self, cluster: FaultTarget, fault_id: str) -> None:
        self._cluster = cluster
        self._fault_id = fault_id
        self._server_of = {cluster.ip(zk): zk for zk in of_role(cluster.services(), "zk")}
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


@dataclass(frozen=True, slots=True)
class ZkLostReply(NetworkFault):
    """Lost-reply spells on the target brokers (module docstring); took effect when each
    spell froze the leader and dropped the answer of every request it caught, undone
    when no rule is left and no ZooKeeper server is frozen by it."""

    hold_s: float = DEFAULT_HOLD_S
    window_s: float = 0.0
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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "hold_s", "window_s"}, cls.KIND)
        hold = number_from(data, "hold_s", DEFAULT_HOLD_S, cls.KIND)
        window = data.get("window_s", 0.0)
        return cls(targets_from(data, cls.KIND), hold, window)

    def params(self) -> dict[str, Any]:
        """The hold and the window."""
        return {"hold_s": self.hold_s, "window_s": self.window_s}

    def start(self, cluster: FaultTarget) -> None:
        """Perform the spells (this blocks while they last)."""
        wire = NetnsWire(cluster, self.fault_id)
        self._trace.clear()
        self._spells[:] = perform_spells(
            cluster, self.targets, self.hold_s, self.window_s, wire, trace=self._trace
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
