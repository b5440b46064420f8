"""The replication specifications' invariants over the end-of-run replica audit
(`audit.json`, `rundir.audit`; docs/invariants.md, "Specification invariants"):
`log_matching`, `weak_isr` and `strong_isr` (KafkaReplication's WeakIsr and StrongIsr).
The audit holds no ISR: a partition's ISR at the end is the last one its leader logged at
the audited leader epoch (`isr_changed`, `high_watermark_moved`, in the leader's line
order), else the last one a controller wrote at that epoch (`leader_elected`,
`isr_changed`). Pure functions; any thread.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from eventlog import EventKind, HighWatermarkMoved, IsrChanged, LeaderElected
from rundir.audit import AuditedRange, ReplicaReport, disagreements
from rundir.events import EventLogs, events_of_kind
from rundir.invariants.names import LOG_MATCHING, STRONG_ISR, WEAK_ISR
from rundir.invariants.spec_isr import broker_of_node
from rundir.results import InvariantResult, Violation

__all__ = ["final_isrs", "log_matching", "strong_isr", "weak_isr"]

_Key = tuple[str, int, int]


def _row(r: ReplicaReport) -> str:
    return f"audit row broker {r.broker} {r.topic}-{r.partition}"


def _span(broker: int, e: AuditedRange) -> str:
    return f"broker {broker} [{e.start_offset}, {e.end_offset}) {e.digest[:12]}"


def log_matching(
    audit: Sequence[ReplicaReport], *, unclean_leader_election: bool
) -> InvariantResult:
    """Two replicas that hold the same offsets of a leader epoch hold the same records:
    every `disagreements` row of kind `"digest"`, naming the audit rows. Approximated:
    digests cover a whole epoch's range, so replicas holding different ranges of one epoch
    (a lagging follower) are not compared. Under unclean leader election a replica may
    keep records the new leader never had: allowed."""
    found = [d for d in disagreements(audit) if d.kind == "digest"]
    violations = tuple(
        Violation(
            f"{d.topic}-{d.partition} leader epoch {d.leader_epoch}",
            "the same offsets hold other records: "
            + "; ".join(
                f"audit row broker {b} {r[0]}..{r[1]} {str(r[2])[:12]}"
                for b, r in sorted(d.replicas.items())
                if r is not None
            ),
        )
        for d in found
    )
    judged = {(r.topic, r.partition) for r in audit if not r.error}
    return InvariantResult(
        LOG_MATCHING,
        violations,
        len(judged),
        allowed=unclean_leader_election and bool(violations),
    )


def final_isrs(logs: EventLogs) -> dict[_Key, tuple[int, ...]]:
    """(topic, partition, leader epoch) -> the last ISR logged at that epoch: a leader's
    own lines win over a controller's (see the module docstring)."""
    by_leader: dict[_Key, tuple[int, ...]] = {}
    by_controller: dict[_Key, tuple[int, ...]] = {}
    kinds = (EventKind.LEADER_ELECTED, EventKind.ISR_CHANGED, EventKind.HIGH_WATERMARK_MOVED)
    for event in events_of_kind(logs, *kinds):
        written = event.decoded()
        if isinstance(written, HighWatermarkMoved) or (
            isinstance(written, IsrChanged) and not isinstance(written.by, str)
        ):
            if broker_of_node(event.node) is not None:
                key = (written.topic, written.partition, written.leader_epoch)
                by_leader[key] = tuple(written.isr)
        elif isinstance(written, (LeaderElected, IsrChanged)):
            by_controller[(written.topic, written.partition, written.leader_epoch)] = tuple(
                written.isr
            )
    return {**by_controller, **by_leader}


def _partitions(
    audit: Sequence[ReplicaReport], logs: EventLogs
) -> tuple[list[tuple[ReplicaReport, list[ReplicaReport]]], list[str]]:
    """Each audited partition's leader row and its ISR members' rows; what was left out."""
    isrs = final_isrs(logs)
    rows: dict[tuple[str, int], dict[int, ReplicaReport]] = defaultdict(dict)
    for r in audit:
        if not r.error:
            rows[(r.topic, r.partition)][r.broker] = r
    out, skipped = [], []
    for (topic, partition), replicas in sorted(rows.items()):
        leaders = [r for r in replicas.values() if r.leader == r.broker]
        leader = max(leaders, key=lambda r: r.leader_epoch, default=None)
        if leader is None:
            skipped.append(f"{topic}-{partition} (no leader row)")
            continue
        isr = isrs.get((topic, partition, leader.leader_epoch))
        if isr is None:
            skipped.append(f"{topic}-{partition} (no ISR logged at epoch {leader.leader_epoch})")
            continue
        members = [replicas[b] for b in isr if b in replicas and b != leader.broker]
        out.append((leader, members))
    return out, skipped


def _note(skipped: list[str]) -> str:
    return f"not judged: {', '.join(skipped)}" if skipped else ""


def weak_isr(audit: Sequence[ReplicaReport], logs: EventLogs) -> InvariantResult:
    """Every ISR member of a partition at the end holds the committed records: its audited
    log end is at least the leader's audited high watermark. Approximated: the ISR is the
    last one logged (module docstring); an ISR member without an audit row is not judged."""
    partitions, skipped = _partitions(audit, logs)
    violations = tuple(
        Violation(
            f"{leader.topic}-{leader.partition} leader epoch {leader.leader_epoch}",
            f"ISR member {m.broker} ends at {m.log_end_offset}, below the leader "
            f"{leader.broker}'s high watermark {leader.high_watermark} "
            f"[{_row(m)}; {_row(leader)}]",
        )
        for leader, members in partitions
        for m in members
        if m.log_end_offset < leader.high_watermark
    )
    return InvariantResult(WEAK_ISR, violations, len(partitions), _note(skipped))


def strong_isr(
    audit: Sequence[ReplicaReport], logs: EventLogs, *, unclean_leader_election: bool
) -> InvariantResult:
    """Below the high watermark all ISR members agree: for every leader epoch range the
    leader holds wholly below its high watermark, each ISR member whose log start is not
    past it holds the same range with the same digest. Approximated: a range that
    straddles the high watermark is compared only when the member holds the same span.
    Allowed under unclean leader election."""
    partitions, skipped = _partitions(audit, logs)
    violations: list[Violation] = []
    for leader, members in partitions:
        for m in members:
            held = {e.leader_epoch: e for e in m.epochs}
            for e in leader.epochs:
                theirs = held.get(e.leader_epoch)
                below = e.end_offset <= leader.high_watermark
                same_span = theirs is not None and (theirs.start_offset, theirs.end_offset) == (
                    e.start_offset,
                    e.end_offset,
                )
                if m.log_start_offset > e.start_offset or not (below or same_span):
                    continue
                if theirs is None or theirs != e:
                    violations.append(
                        Violation(
                            f"{leader.topic}-{leader.partition} leader epoch {e.leader_epoch}",
                            f"below the high watermark {leader.high_watermark} ISR member "
                            f"{m.broker} holds "
                            + ("nothing" if theirs is None else _span(m.broker, theirs))
                            + f" of the leader's {_span(leader.broker, e)} "
                            f"[{_row(m)}; {_row(leader)}]",
                        )
                    )
    return InvariantResult(
        STRONG_ISR,
        tuple(violations),
        len(partitions),
        _note(skipped),
        allowed=unclean_leader_election and bool(violations),
    )
