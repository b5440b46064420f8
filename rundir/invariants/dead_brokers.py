"""`dead_broker_forgotten`: a broker's death reaches every live broker's metadata. Pure
function of the event logs; any thread.

When a controller handles the loss of a registration (`broker_change` with the id among
`dead`), every broker it still counts as live (`live`) must, within `bound_ms`, hold
metadata that no longer lists the dead broker: its last `live_brokers_changed` at the
deadline leaves the id out. Kafka's controller tells them through the requests of the
elections the failure causes or, when there were none to make, an UpdateMetadata of its
own; KAFKA-13225 skipped both when the dead broker hosted no replica while another
partition was already offline, and the live brokers went on naming a dead broker to
their clients and fetchers.

A pair is not judged when its deadline lies beyond the logs' last event, when the dead
broker registered again before the deadline, when the observing broker's own
registration ended before it (its process started or stopped, it registered again, or
lost its session), when a later `broker_change` counted the observer dead before it,
when a controller was elected before it (the one that handled the failure may have died
before it sent anything; its successor tells every live broker at failover, after a
session timeout), or when the observer never wrote `live_brokers_changed` (a log older
than the event). The
check assumes the controller could reach the observer: a fault that cuts a live broker
off from the controller, drops or delays its requests, or holds up ZooKeeper may fail it
without a bug. So a pair is not judged when one of `disturbances` (the faults that did
more than take broker processes away, `rundir.disturbances`) reaches the controller's
broker or the observer (or ZooKeeper) and its span, lengthened by `bound_ms` after its
end, meets the time from the controller's handling to the deadline; a fault on the dead
broker alone stands between nobody. With no disturbances given (a run whose faults are
unknown, or that only killed brokers) every pair is judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from eventlog import BrokerChange, BrokerRegistered, EventKind, LiveBrokersChanged, ZkSessionState
from rundir.disturbances import Disturbance
from rundir.events import Event, EventLogs
from rundir.invariants.names import DEAD_BROKER_FORGOTTEN
from rundir.results import InvariantResult, Violation

__all__ = ["DEFAULT_BOUND_MS", "dead_broker_forgotten"]

#: How long the live brokers may go on listing a dead broker after the controller handled
#: its failure: the elections' requests or the UpdateMetadata go out within a second.
DEFAULT_BOUND_MS = 10_000

#: Events of a broker's own log after which its registration no longer holds.
_ENDS = {EventKind.NODE_STARTED, EventKind.NODE_STOPPED, EventKind.BROKER_REGISTERED}


@dataclass(frozen=True, slots=True)
class _Broker:
    """What one broker's log says: its node, its id, when each of its registrations ended,
    and its beliefs (time, live ids) in log order."""

    node: str
    broker_id: int
    registered_ms: list[int]
    ended_ms: list[int]
    beliefs: list[tuple[int, frozenset[int] | None, Event]]  # None: a process started

    def belief_at(self, ts: int) -> tuple[frozenset[int], Event] | None:
        """The live ids its metadata held at `ts` and the event that said so; None when
        its process had been told none yet."""
        found = None
        for at, live, event in self.beliefs:
            if at > ts:
                break
            found = None if live is None else (live, event)
        return found


def dead_broker_forgotten(
    logs: EventLogs,
    since_ms: int,
    bound_ms: int = DEFAULT_BOUND_MS,
    disturbances: Sequence[Disturbance] = (),
) -> InvariantResult:
    """See the module docstring."""
    last_ms = max((e.ts for log in logs.values() for e in log), default=0)
    brokers = {b.broker_id: b for b in _brokers(logs)}
    changes = list(_changes(logs, since_ms))
    elected = [e.ts for log in logs.values() for e in log if e.kind == EventKind.CONTROLLER_ELECTED]
    violations = []
    checked = 0
    for event, change in changes:
        deadline = event.ts + bound_ms
        if deadline > last_ms or any(event.ts < t <= deadline for t in elected):
            continue
        near = [d for d in disturbances if d.meets(event.ts, deadline, tail_ms=bound_ms)]
        for dead in change.dead:
            back = brokers.get(dead)
            if back is not None and any(event.ts < t <= deadline for t in back.registered_ms):
                continue
            for live in change.live:
                observer = brokers.get(live)
                if observer is None or live == dead:
                    continue
                if any(event.ts < t <= deadline for t in observer.ended_ms):
                    continue
                if any(d.reaches((event.node, observer.node)) for d in near):
                    continue
                if any(event.ts < e.ts <= deadline and live in c.dead for e, c in changes):
                    continue
                belief = observer.belief_at(deadline)
                if belief is None:
                    continue
                checked += 1
                listed, shown = belief
                if dead in listed:
                    violations.append(
                        Violation(
                            f"broker {live}",
                            f"still listed dead broker {dead} as live "
                            f"{bound_ms / 1000:g} s after the controller on {event.node} "
                            f"handled its failure",
                            (event, shown),
                        )
                    )
    return InvariantResult(DEAD_BROKER_FORGOTTEN, tuple(violations), checked)


def _changes(logs: EventLogs, since_ms: int) -> Iterator[tuple[Event, BrokerChange]]:
    """Every `broker_change` of the run that counted a broker dead, in time order."""
    found = []
    for log in logs.values():
        for e in log:
            if e.kind != EventKind.BROKER_CHANGE or e.ts < since_ms:
                continue
            change = e.decoded()
            if isinstance(change, BrokerChange) and change.dead:
                found.append((e, change))
    yield from sorted(found, key=lambda pair: pair[0].ts)


def _brokers(logs: EventLogs) -> Iterator[_Broker]:
    """One `_Broker` per log that holds a registration."""
    for node, log in logs.items():
        broker_id = None
        registered: list[int] = []
        ended: list[int] = []
        beliefs: list[tuple[int, frozenset[int] | None, Event]] = []
        for e in log:
            if e.kind == EventKind.NODE_STARTED:
                beliefs.append((e.ts, None, e))
            decoded = e.decoded() if e.kind in _READ else None
            if isinstance(decoded, BrokerRegistered):
                broker_id = decoded.broker_id
                registered.append(e.ts)
            if e.kind in _ENDS or (isinstance(decoded, ZkSessionState) and decoded.state == "lost"):
                ended.append(e.ts)
            if isinstance(decoded, LiveBrokersChanged):
                beliefs.append((e.ts, frozenset(decoded.live_brokers), e))
        if broker_id is not None:
            yield _Broker(node, broker_id, registered, ended, beliefs)


_READ = {EventKind.BROKER_REGISTERED, EventKind.ZK_SESSION_STATE, EventKind.LIVE_BROKERS_CHANGED}
