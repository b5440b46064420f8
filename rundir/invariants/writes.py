"""Invariant 5: with unclean leader election off, no acknowledged (acks=all) write is lost
and acknowledged writes are read in order. Pure; any thread.

The judging is `rundir.checker`'s (docs/workload.md): its verdict over the workload history
and the final read is wrapped into an `InvariantResult`, one violation per anomaly of any
of its checks (lost writes, reordering, non-monotonic offsets, duplicates, failed writes
read, unexpected values, vanished reads) and one per partition the final read did not
cover. Jepsen's queue classes, which the same verdict holds, are judged apart
(`rundir.invariants.queue_anomalies`). When the run allows losses (unclean election on,
or a power loss under a flush policy that does not fsync every message), the invariant
is not judged, its note naming why.

`acknowledged_kept` (a scenario-specific invariant) asks more of the replicas: none removes
an acknowledged record from its log at all, even one it fetches back (`log_truncated`'s
`removed_records`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from eventlog import EventKind, LeaderElected, LogTruncated
from rundir.checker import CHECKS, FinalRead, check, final_read_from_history, indexed
from rundir.events import Event, EventLogs, events_of_kind
from rundir.history import FINAL_READ_PROCESS, HistoryOp
from rundir.invariants.names import ACKNOWLEDGED_KEPT, ACKNOWLEDGED_WRITES
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = ["ACKNOWLEDGED_KEPT", "ACKNOWLEDGED_WRITES", "acknowledged_kept", "acknowledged_writes"]


def acknowledged_writes(
    history: Collection[HistoryOp] | None,
    final: FinalRead | None = None,
    *,
    loss_allowed: str | None = None,
    logs: EventLogs | None = None,
    verdict: RunVerdict | None = None,
) -> InvariantResult:
    """Invariant 5 over the workload `history` and its `final` read (rebuilt from the
    history's `final-read` process when not given), from the history checker's `verdict`
    when it was already judged; not judged when `loss_allowed` names why the run may lose
    acknowledged writes (`rundir.checker.QueuePolicy.loss_allowed`). `logs`, when given,
    only add a note about unclean elections they record."""
    if loss_allowed:
        return InvariantResult(
            ACKNOWLEDGED_WRITES,
            note=f"acknowledged writes may be lost (allowed: {loss_allowed})",
            judged=False,
        )
    if not history:
        return InvariantResult(ACKNOWLEDGED_WRITES, note="no workload history", judged=False)
    if verdict is None:
        ops = indexed(list(history) if not isinstance(history, Sequence) else history)
        if final is None:
            final = final_read_from_history(ops, FINAL_READ_PROCESS)
        verdict = check(ops, final)
    violations: list[Violation] = []
    own = [r for r in verdict.results if r.name in CHECKS]
    for result in own:
        for found in result.violations:
            value = f" {found.value!r}" if found.value is not None else ""
            by = f" ({found.process})" if found.process else ""
            violations.append(
                Violation(
                    f"{found.subject}{value}",
                    f"{result.name}: {found.explanation} at offsets {list(found.offsets)}{by}",
                    ops=found.ops,
                )
            )
    violations.extend(
        Violation(str(tp), "acknowledged writes not judged: the final read did not cover it")
        for tp in verdict.unread
    )
    notes = [verdict.result("lost_writes").note]
    if logs is not None:
        elected = (e.decoded() for e in events_of_kind(logs, EventKind.LEADER_ELECTED))
        unclean = [e for e in elected if isinstance(e, LeaderElected) and e.unclean]
        if unclean:
            notes.append(f"{len(unclean)} unclean elections in the event logs")
    checked = sum(r.checked for r in own)
    return InvariantResult(ACKNOWLEDGED_WRITES, tuple(violations), checked, "; ".join(notes))


def acknowledged_kept(
    history: Collection[HistoryOp] | None,
    logs: EventLogs,
    since_ms: int = 0,
    *,
    loss_allowed: str | None = None,
) -> InvariantResult:
    """`acknowledged_kept`: no replica removes an acknowledged record from its log.

    A send acknowledged with acks=all whose every attempt had a known outcome
    (`attempts_unknown` 0) was appended exactly once, at its acknowledged offset, and was
    committed: every later leader holds it there, so truncation by leader epoch (KIP-101)
    never removes it. A `log_truncated` since `since_ms` whose `removed_records` hold that
    `[offset, value]` is a violation, even when the replica fetches it back at once: the
    replica threw away a committed record, which it would have led without had it been
    elected before fetching it again. Events without `removed_records` (older brokers) are
    not judged; the note counts them. Not judged at all when `loss_allowed` names why the
    run may lose acknowledged writes (unclean election on, which may elect a replica
    without committed records, or a power loss). Reads the history once, keeping only
    the acknowledgements of records some truncation removed."""
    if loss_allowed:
        return InvariantResult(
            ACKNOWLEDGED_KEPT,
            note=f"acknowledged records may be truncated (allowed: {loss_allowed})",
            judged=False,
        )
    if not history:
        return InvariantResult(ACKNOWLEDGED_KEPT, note="no workload history", judged=False)
    truncations: list[tuple[Event, LogTruncated]] = []
    removed: set[tuple[str, int, int, str]] = set()
    unnamed = 0
    for event in events_of_kind(logs, EventKind.LOG_TRUNCATED):
        if event.ts < since_ms:
            continue
        truncated = event.decoded()
        if not isinstance(truncated, LogTruncated):
            unnamed += 1
            continue
        truncations.append((event, truncated))
        topic, partition = truncated.topic, truncated.partition
        removed.update(
            (topic, partition, o, v) for o, v in map(_offset_value, truncated.removed_records)
        )
    acked = {key for key in map(_acked_key, history) if key in removed} if removed else set()
    violations: list[Violation] = []
    for event, truncated in truncations:
        topic, partition = truncated.topic, truncated.partition
        lost = [
            (offset, value)
            for offset, value in (_offset_value(r) for r in truncated.removed_records)
            if (topic, partition, offset, value) in acked
        ]
        if lost:
            shown = ", ".join(f"{v!r}@{o}" for o, v in lost[:5])
            more = f" and {len(lost) - 5} more" if len(lost) > 5 else ""
            violations.append(
                Violation(
                    f"{topic}-{partition}",
                    f"{event.node} truncated to {truncated.to_offset} and removed "
                    f"{len(lost)} acknowledged records: {shown}{more}",
                    (event,),
                )
            )
    checked = len(truncations)
    note = f"{unnamed} log_truncated without removed_records (or another field) not judged"
    note = note if unnamed else ""
    return InvariantResult(ACKNOWLEDGED_KEPT, tuple(violations), checked, note)


def _acked_key(op: HistoryOp) -> tuple[str, int, int, str] | None:
    """`(topic, partition, offset, value)` of an acks=all acknowledgement every attempt of
    which had a known outcome; None for any other operation."""
    if (
        op.type == "ok"
        and op.f == "send"
        and op.acks == -1
        and op.attempts_unknown == 0
        and op.offset is not None
        and op.value is not None
    ):
        return (op.topic, op.partition, op.offset, op.value)
    return None


def _offset_value(raw: object) -> tuple[int, str]:
    """One `[offset, value]` of `removed_records`; (-1, "") for anything else."""
    if isinstance(raw, list) and len(raw) == 2:
        offset, value = raw
        if isinstance(offset, int) and isinstance(value, str):
            return offset, value
    return -1, ""
