"""A lost-reply spell (`perform_spell`), the mechanism of `zk-lost-reply`
(`chaos.faults.lost_reply`): one freeze of the ensemble's leader during which the
targets' unanswered ZooKeeper requests are caught and their answers dropped, and
`perform_spells`, a series of them for up to `window_s` until one catches a write.

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

The spell acts on the network through a `SpellWire` (`chaos.faults.lost_reply.NetnsWire`
in the targets' network namespaces; a fake in tests). Runs on the injector's thread and
blocks it while the spells last.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from chaos.faults.base import Check, FaultTarget
from chaos.faults.process import unpause_paused
from chaos.faults.tcp_watch import (
    SETTLE_MS,
    TcpConnection,
    UnansweredWatch,
)
from chaos.faults.zookeeper import ensemble_leader

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
    writes_only: bool = False,
) -> SpellReport:
    """One spell (module docstring); what it saw is appended to `trace`. With
    `writes_only`, a connection is caught only by what its server holds (a write waiting
    for the frozen leader), never by its bytes alone: a TLS handshake or a new session's
    handshake also waits unanswered, and a connection to the frozen leader itself is
    not caught at all. The leader is thawed and the rules deleted however the spell
    ends."""
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
                    if writes_only:
                        conn = None
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
    writes_only: bool = False,
) -> tuple[SpellReport, ...]:
    """Spells one after another until one catches a request (a write, with
    `writes_only`) or `window_s` has passed (one spell when it is 0; the last one's hold
    cut to what is left, but never below `MIN_HOLD_S`); the reports in order. Each spell
    appends to `trace`."""
    started = clock()
    spell = functools.partial(perform_spell, writes_only=writes_only)
    reports = [spell(cluster, targets, hold_s, wire, clock, sleep, trace)]
    while not reports[-1].caught:
        left = window_s - (clock() - started) - BREATHER_S
        if left < MIN_HOLD_S:
            break
        sleep(BREATHER_S)
        hold = min(hold_s, left)
        reports.append(spell(cluster, targets, hold, wire, clock, sleep, trace))
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
