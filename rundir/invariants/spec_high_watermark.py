"""The replication specifications' high-watermark invariants over the event logs
(docs/invariants.md, "Specification invariants"): `valid_high_watermark`
(KafkaReplication's ValidHighWatermark) and `leader_completeness` (a newly elected clean
leader holds every committed record). Within one node the lines are ordered by the node's
own line order; across nodes only by leader epochs, never by clocks, except where a
partition was created again under its name (see `leader_completeness`). Pure functions;
any thread.
"""

from __future__ import annotations

from collections import defaultdict

from eventlog import EventKind, HighWatermarkMoved, LeaderElected, ReplicasDeleted
from rundir.events import Event, EventLogs, events_of_kind, processes
from rundir.invariants.names import LEADER_COMPLETENESS, VALID_HIGH_WATERMARK
from rundir.results import InvariantResult, Violation

__all__ = ["leader_completeness", "valid_high_watermark"]


def valid_high_watermark(logs: EventLogs) -> InvariantResult:
    """In every `high_watermark_moved` line the leader's high watermark is at most the log
    end it knows of every ISR member (a member it has no fetch from yet, -1, is not
    judged), and within one leader epoch of one leader process it never moves back (line
    order), unless a StopReplica deleted the replica between (`replicas_deleted`): a
    LeaderAndIsr arriving after that, a late copy of one the proxy of a `request` fault
    delivered again, say, creates the replica again, empty, at an epoch it may have had
    (Kafka 2.x forgets a deleted replica's epoch), a new replica whose high watermark
    starts over. Approximated: the lines are samples (`skipped` moves are not seen), so
    a move back between two samples that came forward again is missed."""
    violations: list[Violation] = []
    checked = 0
    for node in sorted(logs):
        for life in processes(logs[node]):
            last: dict[tuple[str, int, int], tuple[Event, HighWatermarkMoved]] = {}
            for event in life:
                if event.kind == EventKind.REPLICAS_DELETED:
                    _forget(last, event.decoded())
                    continue
                moved = event.decoded() if event.kind == EventKind.HIGH_WATERMARK_MOVED else None
                if not isinstance(moved, HighWatermarkMoved):
                    continue
                checked += 1
                tp = f"{moved.topic}-{moved.partition}"
                for member, end in zip(moved.isr, moved.isr_log_end_offsets, strict=False):
                    if 0 <= end < moved.high_watermark:
                        violations.append(
                            Violation(
                                f"{tp} leader epoch {moved.leader_epoch}",
                                f"high watermark {moved.high_watermark} above ISR member "
                                f"{member}'s log end {end}",
                                (event,),
                            )
                        )
                key = (moved.topic, moved.partition, moved.leader_epoch)
                before = last.get(key)
                if before is not None and moved.high_watermark < before[1].high_watermark:
                    violations.append(
                        Violation(
                            f"{tp} leader epoch {moved.leader_epoch}",
                            f"high watermark moved back from {before[1].high_watermark} to "
                            f"{moved.high_watermark}",
                            (before[0], event),
                        )
                    )
                last[key] = (event, moved)
    return InvariantResult(VALID_HIGH_WATERMARK, tuple(violations), checked)


def _forget(
    last: dict[tuple[str, int, int], tuple[Event, HighWatermarkMoved]], deleted: object
) -> None:
    """Drop from `last` every leader epoch of the replicas `deleted` names."""
    if not isinstance(deleted, ReplicasDeleted):
        return
    gone = set(zip(deleted.topics, deleted.partitions, strict=False))
    for key in [k for k in last if (k[0], k[1]) in gone]:
        del last[key]


def leader_completeness(logs: EventLogs, *, unclean_leader_election: bool) -> InvariantResult:
    """Every leader, when it became leader (its `high_watermark_moved` line with reason
    `"leader"`), held every record committed before: its log end then (the line's
    `epoch_start_offset`) is at least every high watermark any leader of an earlier leader
    epoch of the partition logged. Approximated: the committed offsets are known only
    from the sampled high-watermark lines, so the bound is a lower one (a loss above the
    last logged high watermark is missed); a first leader of an empty log writes no line.
    A partition created again under its name starts over at its `leader_elected` with
    strategy `"initial"` (cut by the wall clock, as invariant 4 does). An election the
    controller logged as unclean, or any under unclean leader election, may lose
    committed records: its violations are allowed."""
    created: dict[tuple[str, int], list[int]] = defaultdict(list)
    unclean_epochs: set[tuple[str, int, int]] = set()
    for event in events_of_kind(logs, EventKind.LEADER_ELECTED):
        elected = event.decoded()
        if not isinstance(elected, LeaderElected):
            continue
        if elected.strategy == "initial":
            created[(elected.topic, elected.partition)].append(event.ts)
        if elected.unclean:
            unclean_epochs.add((elected.topic, elected.partition, elected.leader_epoch))
    lines: dict[tuple[str, int, int], list[tuple[Event, HighWatermarkMoved]]] = defaultdict(list)
    for event in events_of_kind(logs, EventKind.HIGH_WATERMARK_MOVED):
        moved = event.decoded()
        if isinstance(moved, HighWatermarkMoved):
            starts = created[(moved.topic, moved.partition)]
            incarnation = sum(1 for ts in starts if ts <= event.ts)
            lines[(moved.topic, moved.partition, incarnation)].append((event, moved))
    clean: list[Violation] = []
    allowed: list[Violation] = []
    checked = 0
    for key in sorted(lines):
        for violation, epoch in _incomplete_leaders(lines[key]):
            checked += 1
            if violation is None:
                continue
            unclean = (key[0], key[1], epoch) in unclean_epochs
            (allowed if unclean else clean).append(violation)
    note = f"{len(allowed)} by elections logged as unclean" if allowed else ""
    return InvariantResult(
        LEADER_COMPLETENESS,
        tuple(clean + allowed),
        checked,
        note,
        allowed=unclean_leader_election or (bool(allowed) and not clean),
    )


def _incomplete_leaders(
    lines: list[tuple[Event, HighWatermarkMoved]],
) -> list[tuple[Violation | None, int]]:
    """For each leader's first line of its epoch: a violation when its log end was below
    the highest high watermark of an earlier epoch (None when not), and the epoch."""
    highest: dict[int, tuple[Event, HighWatermarkMoved]] = {}
    for event, moved in lines:
        seen = highest.get(moved.leader_epoch)
        if seen is None or moved.high_watermark > seen[1].high_watermark:
            highest[moved.leader_epoch] = (event, moved)
    out: list[tuple[Violation | None, int]] = []
    best: tuple[Event, HighWatermarkMoved] | None = None
    became = {m.leader_epoch: (e, m) for e, m in reversed(lines) if m.reason == "leader"}
    for epoch in sorted(set(highest) | set(became)):
        if epoch in became:
            event, moved = became[epoch]
            if best is not None and moved.epoch_start_offset < best[1].high_watermark:
                out.append((_lost(event, moved, best), epoch))
            else:
                out.append((None, epoch))
        top = highest.get(epoch)
        if top is not None and (best is None or top[1].high_watermark >= best[1].high_watermark):
            best = top
    return out


def _lost(
    event: Event, moved: HighWatermarkMoved, committed: tuple[Event, HighWatermarkMoved]
) -> Violation:
    return Violation(
        f"{moved.topic}-{moved.partition} leader epoch {moved.leader_epoch}",
        f"leader {event.node} became leader at log end {moved.epoch_start_offset}, below "
        f"the high watermark {committed[1].high_watermark} of leader epoch "
        f"{committed[1].leader_epoch}",
        (committed[0], event),
    )
