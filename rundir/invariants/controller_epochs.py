"""Invariants over controller epochs. Pure functions of the event logs; any thread.

- `one_controller_per_epoch` (invariant 1): no two brokers won the same controller epoch
  (`controller_elected` across every log); a broker only wins an epoch larger than every
  controller epoch its log showed before (ZooKeeper's `/controller_epoch` only grows); and
  a `controller_resigned` names the epoch its process last won.
- `controller_epoch_fencing` (invariant 2): within one broker process, no request is
  accepted (`request_accepted`) from a controller epoch older than one accepted before.
  A restarted process starts from nothing, as Kafka's broker does, so the order is judged
  per process (the log is cut at `node_started`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from eventlog import EventKind
from rundir.events import Event, EventLogs, events_of_kind, processes
from rundir.invariants.names import CONTROLLER_EPOCH_FENCING, ONE_CONTROLLER_PER_EPOCH
from rundir.results import InvariantResult, Violation

__all__ = [
    "CONTROLLER_EPOCH_FENCING",
    "ONE_CONTROLLER_PER_EPOCH",
    "controller_epoch_fencing",
    "one_controller_per_epoch",
]


#: The kinds and fields that show a controller epoch the node has seen.
_SEEN_EPOCH_FIELDS: dict[str, tuple[str, ...]] = {
    EventKind.CONTROLLER_ELECTED: ("controller_epoch",),
    EventKind.CONTROLLER_RESIGNED: ("controller_epoch",),
    EventKind.REQUEST_ACCEPTED: ("controller_epoch",),
    EventKind.REQUEST_REJECTED: ("controller_epoch", "highest_controller_epoch"),
}


def one_controller_per_epoch(logs: EventLogs) -> InvariantResult:
    """Invariant 1: one controller per controller epoch, and each broker's controller
    epochs only grow. Judges `controller_elected`, `controller_resigned`,
    `request_accepted` and `request_rejected`."""
    violations: list[Violation] = []
    elected: dict[int, list[Event]] = defaultdict(list)
    missing = 0
    for event in events_of_kind(logs, EventKind.CONTROLLER_ELECTED):
        epoch = event.int_field("controller_epoch")
        if epoch is None:
            missing += 1
        else:
            elected[epoch].append(event)
    for epoch, events in sorted(elected.items()):
        winners = sorted({_winner(e) for e in events})
        if len(winners) > 1:
            violations.append(
                Violation(
                    f"controller epoch {epoch}",
                    f"brokers {', '.join(winners)} were each elected with epoch {epoch}",
                    tuple(events),
                )
            )
    for node in sorted(logs):
        violations.extend(_epochs_grow(logs[node]))
        for life in processes(logs[node]):
            violations.extend(_resigned_what_it_held(life))
    checked = sum(len(v) for v in elected.values())
    note = f"{missing} controller_elected without controller_epoch" if missing else ""
    return InvariantResult(ONE_CONTROLLER_PER_EPOCH, tuple(violations), checked, note)


def _winner(event: Event) -> str:
    controller = event.int_field("controller_id")
    return f"broker {controller}" if controller is not None else event.node


def _epochs_grow(events: Sequence[Event]) -> list[Violation]:
    """A won epoch must exceed every controller epoch the node's log showed before it,
    across restarts: the epoch comes from ZooKeeper, which never goes back."""
    out: list[Violation] = []
    highest: tuple[int, Event] | None = None
    for event in events:
        if event.kind == EventKind.CONTROLLER_ELECTED:
            won = event.int_field("controller_epoch")
            if won is not None and highest is not None and won <= highest[0]:
                out.append(
                    Violation(
                        f"{event.node} controller epoch {won}",
                        f"won controller epoch {won} after its log had shown epoch {highest[0]}",
                        (highest[1], event),
                    )
                )
        for name in _SEEN_EPOCH_FIELDS.get(event.kind, ()):
            epoch = event.int_field(name)
            if epoch is not None and (highest is None or epoch > highest[0]):
                highest = (epoch, event)
    return out


def _resigned_what_it_held(life: list[Event]) -> list[Violation]:
    """Within one process, each `controller_resigned` names the epoch last won."""
    out: list[Violation] = []
    held: Event | None = None
    for event in life:
        if event.kind == EventKind.CONTROLLER_ELECTED:
            held = event
        elif event.kind == EventKind.CONTROLLER_RESIGNED:
            epoch = event.int_field("controller_epoch")
            if held is None:
                out.append(
                    Violation(
                        f"{event.node} controller epoch {epoch}",
                        f"resigned controller epoch {epoch} without having won one",
                        (event,),
                    )
                )
            elif epoch != held.int_field("controller_epoch"):
                out.append(
                    Violation(
                        f"{event.node} controller epoch {epoch}",
                        f"resigned controller epoch {epoch} but had won epoch "
                        f"{held.int_field('controller_epoch')}",
                        (held, event),
                    )
                )
            held = None
    return out


def controller_epoch_fencing(logs: EventLogs) -> InvariantResult:
    """Invariant 2: per broker process, in log order, no `request_accepted` carries a
    controller epoch older than one accepted before it."""
    violations: list[Violation] = []
    checked = missing = 0
    for node in sorted(logs):
        for life in processes(logs[node]):
            highest: tuple[int, Event] | None = None
            for event in life:
                if event.kind != EventKind.REQUEST_ACCEPTED:
                    continue
                epoch = event.int_field("controller_epoch")
                if epoch is None:
                    missing += 1
                    continue
                checked += 1
                if highest is not None and epoch < highest[0]:
                    violations.append(
                        Violation(
                            f"{node} controller epoch {epoch}",
                            f"accepted {event.fields.get('api')} from controller epoch "
                            f"{epoch} after accepting epoch {highest[0]}",
                            (highest[1], event),
                        )
                    )
                elif highest is None or epoch > highest[0]:
                    highest = (epoch, event)
    note = f"{missing} request_accepted without controller_epoch" if missing else ""
    return InvariantResult(CONTROLLER_EPOCH_FENCING, tuple(violations), checked, note)
