"""`registration_served`: every broker registration made during the run is answered by a
controller; `reregistration_completes`: a broker that lost its session registers again.
Pure functions of the event logs; any thread.

A broker that registers (`broker_registered`, with its broker epoch) is one the
controller must bring in: a start-up (or a bounce: a failure, then a start-up) sends it
UpdateMetadata and LeaderAndIsr addressed to that broker epoch, and a new controller
sends every registered broker UpdateMetadata at failover. So within `bound_ms` of the
registration some controller must have queued a request to that broker and epoch
(`control_request_sent` with `broker_id` and `broker_epoch`; sent at any time before the
deadline: the broker epoch is the registration znode's czxid, so a request addressed to
it was sent once the registration existed, and a broker whose reply from ZooKeeper is
slow logs its registration after the controller has already served it), unless the
registration ended first: the broker's process started again or stopped
(`node_started`, `node_stopped`), it registered again, or its session was lost
(`zk_session_state` `lost`). A registration whose deadline lies beyond what the run saw
(the last event of the logs, or `until_ms` when later: the logs of a quiet cluster end
long before the run) is not judged.

`reregistration_completes`: a broker whose ZooKeeper session was lost (`zk_session_state`
`lost`) and that opened a new one (`connected` after it) must log its new registration
(`broker_registered`) within `bound_ms` of the new session, unless that session was
lost too, or its process stopped or started again, first. Registering again is what the
new session is for (Kafka registers from its new-session handler and retries until it is
connected): a broker that did not went on without a registration it knows of, its
broker epoch that of its previous session (a controlled shutdown it asks for is refused
as stale), and not running for controller. A new session whose deadline lies beyond
what the run saw is not judged.

A controller that took a registered broker for dead (it decided on a listing read before
the registration, and no notification told it of the registration since) or for its
previous incarnation (it kept the old broker epoch) addresses nothing to the new
registration: the broker stays without leaderships and metadata while it is registered.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from eventlog import BrokerRegistered, ControlRequestSent, EventKind, ZkSessionState
from rundir.events import Event, EventLogs
from rundir.invariants.names import REGISTRATION_SERVED, REREGISTRATION_COMPLETES
from rundir.results import InvariantResult, Violation

__all__ = [
    "DEFAULT_BOUND_MS",
    "REGISTRATION_SERVED",
    "REREGISTRATION_COMPLETES",
    "registration_served",
    "reregistration_completes",
]

#: How long a registration may wait for its first request: a controller frozen across
#: it (a few seconds), or elected after the previous one's session expired (6 s), serves
#: it well within this.
DEFAULT_BOUND_MS = 15_000

#: Events of a broker's own log after which its registration no longer holds.
_ENDS = {EventKind.NODE_STARTED, EventKind.NODE_STOPPED, EventKind.BROKER_REGISTERED}


@dataclass(frozen=True, slots=True)
class _Registration:
    event: Event
    broker_id: int
    epoch: int
    ended_ms: int | None  # when the registration stopped holding, if it did


def registration_served(
    logs: EventLogs, since_ms: int, until_ms: int = 0, bound_ms: int = DEFAULT_BOUND_MS
) -> InvariantResult:
    """See the module docstring."""
    last_ms = max((e.ts for log in logs.values() for e in log), default=until_ms)
    last_ms = max(last_ms, until_ms)
    served: dict[tuple[int, int], list[int]] = {}
    for log in logs.values():
        for e in log:
            request = e.decoded() if e.kind == EventKind.CONTROL_REQUEST_SENT else None
            if isinstance(request, ControlRequestSent):
                served.setdefault((request.broker_id, request.broker_epoch), []).append(e.ts)
    violations = []
    checked = 0
    for reg in _registrations(logs, since_ms):
        deadline = reg.event.ts + bound_ms
        if deadline > last_ms or (reg.ended_ms is not None and reg.ended_ms <= deadline):
            continue
        checked += 1
        sent = served.get((reg.broker_id, reg.epoch), ())
        if not any(ts <= deadline for ts in sent):
            violations.append(
                Violation(
                    f"broker {reg.broker_id} broker epoch {reg.epoch}",
                    f"registered and sent no request by any controller within "
                    f"{bound_ms / 1000:g} s",
                    (reg.event,),
                )
            )
    return InvariantResult(REGISTRATION_SERVED, tuple(violations), checked)


def _registrations(logs: EventLogs, since_ms: int) -> Iterator[_Registration]:
    """Each registration of the run, with when it stopped holding."""
    for log in logs.values():
        open_: tuple[Event, int, int] | None = None
        for e in log:
            session = e.decoded() if e.kind == EventKind.ZK_SESSION_STATE else None
            ends = e.kind in _ENDS or (
                isinstance(session, ZkSessionState) and session.state == "lost"
            )
            if ends and open_ is not None:
                yield _Registration(*open_, e.ts)
                open_ = None
            if e.kind == EventKind.BROKER_REGISTERED and e.ts >= since_ms:
                registered = e.decoded()
                if isinstance(registered, BrokerRegistered):
                    open_ = (e, registered.broker_id, registered.broker_epoch)
        if open_ is not None:
            yield _Registration(*open_, None)


def reregistration_completes(
    logs: EventLogs, since_ms: int, until_ms: int = 0, bound_ms: int = DEFAULT_BOUND_MS
) -> InvariantResult:
    """See the module docstring."""
    last_ms = max((e.ts for log in logs.values() for e in log), default=until_ms)
    last_ms = max(last_ms, until_ms)
    violations = []
    checked = 0
    for log in logs.values():
        lost = False  # a session was lost during the run and no registration followed
        session: Event | None = None  # the new session opened after it
        for e in log:
            if session is not None and e.ts > session.ts + bound_ms:
                checked += 1
                violations.append(_not_registered(session, bound_ms))
                lost, session = False, None
            state = e.decoded() if e.kind == EventKind.ZK_SESSION_STATE else None
            if isinstance(state, ZkSessionState) and state.state == "lost":
                lost, session = e.ts >= since_ms, None
            elif isinstance(state, ZkSessionState) and state.state == "connected":
                if lost and session is None:
                    session = e
            elif e.kind == EventKind.BROKER_REGISTERED:
                checked += session is not None
                lost, session = False, None
            elif e.kind in (EventKind.NODE_STARTED, EventKind.NODE_STOPPED):
                lost, session = False, None
        if session is not None and session.ts + bound_ms <= last_ms:
            checked += 1
            violations.append(_not_registered(session, bound_ms))
    return InvariantResult(REREGISTRATION_COMPLETES, tuple(violations), checked)


def _not_registered(session: Event, bound_ms: int) -> Violation:
    state = session.decoded()
    sid = state.session_id if isinstance(state, ZkSessionState) else None
    return Violation(
        f"broker {session.node} session {sid}",
        f"opened after its session was lost, and no registration within {bound_ms / 1000:g} s",
        (session,),
    )
