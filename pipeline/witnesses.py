"""Each violation or anomaly of a run's verdict as its page shows it: what the invariant
or Jepsen class says, the violation in words (subject, explanation, the workload's
record), and its proof as links into the run's event browser (`events.html`), one per
event (`#node=<node>&line=<line>`) and per history operation (`#op=<process>#<id>`; the
final read, `final-read`, links to its operations on the violation's partition). A lost
write's operations say what they prove: the acknowledging send, the read past it.

A witness's time is that of its proofs: every event's `ts` and every operation's
`wall_ms` (an operation's invoke and completion alike; the final read's operations on
the violation's partition), from the earliest (`since`) to the latest (`at`, when the
proof is complete), which the run's timeline marks. A witness without events or
operations (a cluster snapshot's) has no time. Times are seconds since the run's start.
Pure; the driver's thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pipeline.human import seconds, shown_value
from rundir.checker.queue import FINAL_READ_OP, QUEUE_CLASSES
from rundir.invariants import names

__all__ = ["MEANINGS", "Proof", "Witness", "event_href", "op_href", "proof_times", "witness"]

#: What each invariant and each of Jepsen's queue classes holds, in a sentence.
MEANINGS: Mapping[str, str] = {
    names.ONE_CONTROLLER_PER_EPOCH: "one broker at most wins each controller epoch",
    names.CONTROLLER_EPOCH_FENCING: "brokers refuse requests from an older controller epoch",
    names.BROKER_EPOCH_FENCING: "requests for an older broker epoch are refused (KIP-380)",
    names.ONE_LEADER_PER_LEADER_EPOCH: "one leader at most for each leader epoch of a partition",
    names.ACKNOWLEDGED_WRITES: "every acknowledged write is read back by the final read",
    names.ACKNOWLEDGED_KEPT: "no replica truncates a committed, acknowledged record",
    names.CONVERGES_AFTER_HEAL: "the cluster agrees again within the bound after the heal",
    names.NO_OFFLINE_PARTITIONS: "no partition goes offline",
    names.PAUSED_CONTROLLER_RESIGNS: "a superseded controller logs its resignation",
    names.REASSIGNMENT_COMPLETES: "every reassignment of the run's topics completes",
    names.RESIGNED_CONTROLLER_SILENT: "a controller that resigned sends no more requests",
    names.TOPIC_DELETION_COMPLETES: "every topic deletion requested completes",
    names.CONTROLLER_WRITES_FENCED: "a superseded controller's ZooKeeper writes fail",
    names.REGISTRATION_SERVED: "a registered broker hears from the controller within 15 s",
    names.REREGISTRATION_COMPLETES: "a broker registers again within 15 s of a new session",
    names.DEAD_BROKER_FORGOTTEN: "a dead broker leaves every live broker's metadata in 10 s",
    names.STALE_REQUESTS_FENCED: "a late copy of a control request is fenced by its epoch",
    names.LEADER_IN_ISR: "a partition's leader is a member of its ISR",
    names.VALID_HIGH_WATERMARK: "the high watermark never passes an ISR member's log end",
    names.LEADER_COMPLETENESS: "a new clean leader holds every committed record",
    names.ISR_JOIN_AFTER_EPOCH_START: "a follower joins the ISR only past the epoch's start",
    names.WEAK_ISR: "every ISR member holds the records below the high watermark",
    names.STRONG_ISR: "below the high watermark all ISR members hold the leader's records",
    names.LOG_MATCHING: "replicas holding an offset of a leader epoch hold the same record",
    "inconsistent-offsets": "one offset of a partition holds one value only",
    "duplicate": "a value sent once appears at one offset only",
    "lost-write": "an acknowledged write below what was read is not missing",
    "unseen": "every acknowledged write is eventually seen by a poll",
    "G1a": "no poll reads a value whose send failed (aborted read)",
    "poll-skip": "consecutive polls of a consumer skip no offset",
    "int-poll-skip": "one poll's records skip no offset",
    "nonmonotonic-poll": "consecutive polls of a consumer never go back",
    "int-nonmonotonic-poll": "one poll's offsets never go back",
    "nonmonotonic-send": "a producer's acknowledged offsets only grow",
}
assert set(QUEUE_CLASSES) <= MEANINGS.keys()

#: What each operation of a lost write's proof is, in the order the checker names them:
#: the send whose acknowledgement is lost, then the read that shows the partition went on
#: past it (Jepsen's `lost-write`) or the poll that had read it (`lost_writes`).
_LOST_ROLES: Mapping[str, tuple[str, ...]] = {
    "lost-write": ("the acknowledging send", "the read of a higher offset"),
    "unseen": ("the acknowledging send",),
    names.ACKNOWLEDGED_WRITES: ("the acknowledging send", "a poll that had read it"),
}


@dataclass(frozen=True, slots=True)
class Proof:
    """One event or operation that proves a violation: its words and its browser link."""

    text: str
    href: str


@dataclass(frozen=True, slots=True)
class Witness:
    """One violation as the run's page shows it."""

    invariant: str
    meaning: str
    words: str
    proofs: tuple[Proof, ...]
    anomaly: bool
    #: When its proof began and was complete, in seconds since the run's start; None
    #: when nothing that proves it has a time.
    since: float | None = None
    at: float | None = None


def event_href(node: str, line: int) -> str:
    """The event browser's link to one event."""
    return f"events.html#node={quote(node, safe='')}&line={line}"


def op_href(op: str) -> str:
    """The event browser's link to one history operation (`<process>#<id>`)."""
    return f"events.html#op={quote(op, safe='')}"


def _event_words(event: Mapping[str, Any], started_ms: int) -> str:
    fields = event.get("fields") or {}
    shown = ", ".join(
        f"{k} {shown_value(k, v, started_ms)}"
        for k, v in fields.items()
        if k not in ("v", "ts", "node", "kind", "seq", "mono_ms")
    )
    at = seconds(event.get("ts", started_ms), started_ms)
    return f"{event.get('node')} line {event.get('line')} at {at}: {event.get('kind')}" + (
        f" ({shown})" if shown else ""
    )


def _op_words(op: str, role: str | None) -> str:
    process, _, op_id = op.rpartition("#")
    if op == FINAL_READ_OP:
        words = "the final read"
    else:
        words = f"operation {op_id} of {process}" if process else f"the {op}"
    return f"{role}: {words}" if role else words


def _roles(invariant: str, violation: Mapping[str, Any]) -> tuple[str, ...]:
    """What the operations of a lost write's proof are; () for any other violation."""
    if invariant == names.ACKNOWLEDGED_WRITES and not str(
        violation.get("explanation", "")
    ).startswith("lost_writes:"):
        return ()
    return _LOST_ROLES.get(invariant, ())


def _op_times(op: str, partition: str, ops: Sequence[Mapping[str, Any]]) -> list[int]:
    """The wall-clock times of the history's lines of `op` (`<process>#<id>`); for the
    final read, of its lines on `partition`."""
    if op == FINAL_READ_OP:
        found = [
            o
            for o in ops
            if str(o.get("op", "")).startswith(f"{FINAL_READ_OP}#")
            and f"{o.get('topic')}-{o.get('partition')}" == partition
        ]
    else:
        found = [o for o in ops if o.get("op") == op]
    return [o["wall_ms"] for o in found if type(o.get("wall_ms")) is int]


def proof_times(
    violation: Mapping[str, Any], started_ms: int, ops: Sequence[Mapping[str, Any]] = ()
) -> tuple[float, ...]:
    """The times, in seconds since the run's start and in order, of what proves
    `violation`: its events' and its operations' (looked up in `ops`, the history's lines
    the run's page holds, each with its `op` key `<process>#<id>`)."""
    stamps = [e["ts"] for e in violation.get("events") or () if type(e.get("ts")) is int]
    partition = str(violation.get("subject", "")).split(" ", 1)[0]
    for op in violation.get("ops") or ():
        stamps += _op_times(str(op), partition, ops)
    return tuple(sorted(round((ts - started_ms) / 1000, 3) for ts in stamps))


def witness(
    invariant: str,
    violation: Mapping[str, Any],
    started_ms: int,
    ops: Sequence[Mapping[str, Any]] = (),
) -> Witness:
    """`violation` (one of `verdict.json`'s, `rundir.results.Violation.to_json`) of
    `invariant` as words, proofs and times (its operations' from `ops`, as
    `proof_times`)."""
    words = f"{violation.get('subject')}: {violation.get('explanation')}"
    if violation.get("value") is not None:
        offsets = [str(o) for o in violation.get("offsets") or ()]
        at = f"at offset{'s' if len(offsets) > 1 else ''} {', '.join(offsets)}"
        words += f"; the record {violation['value']!r} " + (at if offsets else "at no offset")
        if violation.get("process"):
            words += f", sent by {violation['process']}"
    times = proof_times(violation, started_ms, ops)
    proofs = [
        Proof(_event_words(e, started_ms), event_href(str(e.get("node")), int(e.get("line", 0))))
        for e in violation.get("events") or ()
    ]
    named = [str(op) for op in violation.get("ops") or ()]
    roles = _roles(invariant, violation)
    proofs += [
        Proof(_op_words(op, roles[i] if i < len(roles) else None), op_href(op))
        for i, op in enumerate(named)
    ]
    return Witness(
        invariant=invariant,
        meaning=MEANINGS.get(invariant, "see docs/invariants.md"),
        words=words,
        proofs=tuple(proofs),
        anomaly=invariant in QUEUE_CLASSES,
        since=times[0] if times else None,
        at=times[-1] if times else None,
    )
