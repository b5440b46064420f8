"""Invariant 3 (KIP-380): no broker accepted a control request addressed to an older broker
epoch of its own. Pure function of the event logs; any thread.

Each broker's log is read in order, across restarts (a restarted broker appends to the
same file). `broker_registered` gives each registration's epoch (the czxid of
`/brokers/ids/N`); `node_started` ends the previous process, whose registration is then
superseded. A `request_accepted` carries the epoch it was addressed to
(`request_broker_epoch`, -1 = unknown, which passes by design) and the broker's epoch as
its fencing check read it (`broker_epoch`). It breaks the invariant when:

1. it was addressed to an epoch older than the one its own check read;
2. it was addressed to an epoch older than the broker's current registration, unless the
   check read the registration that the current one replaced (the request was checked
   just before the new registration took effect and logged just after it);
3. the process had not registered yet and it was addressed to a registration of an
   earlier process (a request meant for the broker's previous life).

A `request_rejected` as STALE_BROKER_EPOCH breaks it too when it was addressed to an epoch
newer than the one the check read: only an older epoch is stale. The controller learns of
a re-registration from its watch, possibly before the broker has the answer to its own
create, and a broker that refuses that newer epoch refuses the controller that serves its
new registration (KAFKA-9839).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domain import UNKNOWN_BROKER_EPOCH
from eventlog import EventKind
from rpc.errors import Errors
from rundir.events import Event, EventLogs
from rundir.invariants.names import BROKER_EPOCH_FENCING
from rundir.results import InvariantResult, Violation

__all__ = ["BROKER_EPOCH_FENCING", "broker_epoch_fencing"]


@dataclass(slots=True)
class _Registrations:
    """One broker's registrations as its log has shown them so far."""

    current: Event | None = None
    replaced: int | None = None  # the epoch `current` replaced within the same process
    superseded: tuple[int, Event] | None = None  # the newest registration no longer held

    def supersede(self) -> None:
        epoch = self.current.int_field("broker_epoch") if self.current else None
        newer = epoch is not None and (self.superseded is None or epoch > self.superseded[0])
        if self.current is not None and epoch is not None and newer:
            self.superseded = (epoch, self.current)

    def restart(self) -> None:
        self.supersede()
        self.current = None
        self.replaced = None

    def register(self, event: Event) -> None:
        self.replaced = self.current.int_field("broker_epoch") if self.current else None
        self.supersede()
        self.current = event


def broker_epoch_fencing(logs: EventLogs) -> InvariantResult:
    """Invariant 3: every `request_accepted` addressed to a known broker epoch was
    addressed to the broker's current registration (see the module docstring)."""
    violations: list[Violation] = []
    checked = unknown = missing = 0
    for node in sorted(logs):
        found, judged, unaddressed, incomplete = _judge_node(logs[node])
        violations.extend(found)
        checked += judged
        unknown += unaddressed
        missing += incomplete
    notes = []
    if unknown:
        notes.append(f"{unknown} requests addressed to epoch -1 (unknown) pass by design")
    if missing:
        notes.append(f"{missing} request_accepted without request_broker_epoch")
    return InvariantResult(BROKER_EPOCH_FENCING, tuple(violations), checked, "; ".join(notes))


def _judge_node(events: Sequence[Event]) -> tuple[list[Violation], int, int, int]:
    out: list[Violation] = []
    regs = _Registrations()
    checked = unknown = missing = 0
    for event in events:
        if event.kind == EventKind.NODE_STARTED:
            regs.restart()
        elif event.kind == EventKind.BROKER_REGISTERED:
            regs.register(event)
        elif event.kind == EventKind.REQUEST_ACCEPTED:
            addressed = event.int_field("request_broker_epoch")
            if addressed is None:
                missing += 1
            elif addressed == UNKNOWN_BROKER_EPOCH:
                unknown += 1
            else:
                checked += 1
                found = _judge_request(event, addressed, regs)
                if found is not None:
                    out.append(found)
        elif event.kind == EventKind.REQUEST_REJECTED:
            refused = _judge_rejection(event)
            if refused is not None:
                out.append(refused)
    return out, checked, unknown, missing


def _judge_rejection(event: Event) -> Violation | None:
    """A rejection as STALE_BROKER_EPOCH of a request addressed to a newer epoch than
    the one the check read."""
    if event.fields.get("error") != Errors.STALE_BROKER_EPOCH.name:
        return None
    addressed = event.int_field("request_broker_epoch")
    read = event.int_field("broker_epoch")
    if addressed is None or read is None or addressed <= read:
        return None
    return Violation(
        f"{event.node} broker epoch {addressed}",
        f"refused {event.fields.get('api')} addressed to broker epoch {addressed} as stale, "
        f"newer than the epoch {read} its own check read",
        (event,),
    )


def _judge_request(event: Event, addressed: int, regs: _Registrations) -> Violation | None:
    api = event.fields.get("api")
    subject = f"{event.node} broker epoch {addressed}"
    read = event.int_field("broker_epoch")
    current = regs.current.int_field("broker_epoch") if regs.current else None
    evidence = (regs.current, event) if regs.current is not None else (event,)
    if read is not None and addressed < read:
        return Violation(
            subject,
            f"accepted {api} addressed to broker epoch {addressed}, older than the epoch "
            f"{read} its own check read",
            evidence,
        )
    if regs.current is not None and current is not None and addressed < current:
        if read == addressed == regs.replaced:
            return None  # checked just before the new registration took effect
        return Violation(
            subject,
            f"accepted {api} addressed to broker epoch {addressed}, older than its "
            f"registration with epoch {current}",
            evidence,
        )
    if regs.current is None and regs.superseded is not None and addressed <= regs.superseded[0]:
        return Violation(
            subject,
            f"accepted {api} addressed to broker epoch {addressed} of an earlier "
            "registration before this process registered",
            (regs.superseded[1], event),
        )
    return None
