"""The replication specifications' ISR invariants over the event logs (docs/invariants.md,
"Specification invariants"): `leader_in_isr` (KafkaReplication's LeaderInIsr) and
`isr_join_after_epoch_start` (Kip320: a follower joins the ISR only once it reached the
start of the leader's epoch, KAFKA-7128). Each line is judged alone, so no clock is
compared. Pure functions; any thread.
"""

from __future__ import annotations

import re

from eventlog import EventKind, HighWatermarkMoved, IsrChanged, LeaderElected
from rundir.events import Event, EventLogs, events_of_kind
from rundir.invariants.names import ISR_JOIN_AFTER_EPOCH_START, LEADER_IN_ISR
from rundir.results import InvariantResult, Violation

__all__ = ["broker_of_node", "isr_join_after_epoch_start", "leader_in_isr"]

_BROKER_NODE = re.compile(r"broker(\d+)$")


def broker_of_node(node: str) -> int | None:
    """The broker id of node `broker<N>`, None for another node name."""
    match = _BROKER_NODE.match(node)
    return int(match.group(1)) if match else None


def leader_in_isr(logs: EventLogs) -> InvariantResult:
    """Every ISR written with a live leader (`leader_elected`, `isr_changed`) or observed by
    a leader (`high_watermark_moved`, the writing broker's own ISR) contains that leader.
    The controller's write of leader -1 with a shrunk ISR (its leader went offline) names
    no live leader and is not judged."""
    violations: list[Violation] = []
    checked = incomplete = 0
    for event in events_of_kind(
        logs, EventKind.LEADER_ELECTED, EventKind.ISR_CHANGED, EventKind.HIGH_WATERMARK_MOVED
    ):
        written = event.decoded()
        if isinstance(written, (LeaderElected, IsrChanged)):
            leader = written.leader
        elif isinstance(written, HighWatermarkMoved):
            found = broker_of_node(event.node)
            if found is None:
                continue
            leader = found
        else:
            incomplete += 1
            continue
        if leader < 0:
            continue
        checked += 1
        if leader not in written.isr:
            violations.append(_outside(event, written, leader))
    note = f"{incomplete} events without all their fields" if incomplete else ""
    return InvariantResult(LEADER_IN_ISR, tuple(violations), checked, note)


def _outside(
    event: Event, written: LeaderElected | IsrChanged | HighWatermarkMoved, leader: int
) -> Violation:
    return Violation(
        f"{written.topic}-{written.partition} leader epoch {written.leader_epoch}",
        f"leader {leader} is not in its ISR {written.isr} ({event.kind})",
        (event,),
    )


def isr_join_after_epoch_start(logs: EventLogs) -> InvariantResult:
    """Every leader's ISR expansion admitted a follower whose log end had reached both the
    start offset of the leader's epoch and the leader's high watermark: `isr_changed`
    `"expand"` with `follower_log_end_offset >= epoch_start_offset` (and `>=
    high_watermark`). An expansion logged without these fields (an older writer) is
    counted in the note, not judged."""
    violations: list[Violation] = []
    checked = unjudged = 0
    for event in events_of_kind(logs, EventKind.ISR_CHANGED):
        written = event.decoded()
        if not isinstance(written, IsrChanged) or written.reason != "expand":
            continue
        follower = written.follower_log_end_offset
        start = written.epoch_start_offset
        if not isinstance(follower, int) or not isinstance(start, int):
            unjudged += 1
            continue
        checked += 1
        hw = written.high_watermark
        floor = max(start, hw) if isinstance(hw, int) else start
        if follower < floor:
            violations.append(
                Violation(
                    f"{written.topic}-{written.partition} leader epoch {written.leader_epoch}",
                    f"a follower joined the ISR {written.isr} at log end {follower}, below "
                    f"the epoch start {start}"
                    + (f" or the high watermark {hw}" if isinstance(hw, int) else ""),
                    (event,),
                )
            )
    note = f"{unjudged} expansions without the follower's log end" if unjudged else ""
    return InvariantResult(ISR_JOIN_AFTER_EPOCH_START, tuple(violations), checked, note)
