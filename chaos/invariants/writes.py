"""Invariant 5: with unclean leader election off, no acknowledged (acks=all) write is lost
and acknowledged writes are read in order. Pure; any thread.

The judging is `chaos.checker`'s (docs/workload.md): its verdict over the workload history
and the final read is wrapped into an `InvariantResult`, one violation per anomaly of any
of its checks (lost writes, reordering, non-monotonic offsets, duplicates, failed writes
read, unexpected values, vanished reads) and one per partition the final read did not
cover. With unclean election on, losses are allowed, so the invariant is not judged.
"""

from __future__ import annotations

from collections.abc import Sequence

from chaos.checker import FinalRead, check, final_read_from_history, indexed
from chaos.history import FINAL_READ_PROCESS, HistoryOp
from chaos.invariants.events import EventLogs, events_of_kind
from chaos.invariants.names import ACKNOWLEDGED_WRITES
from chaos.invariants.results import InvariantResult, Violation
from eventlog import EventKind

__all__ = ["ACKNOWLEDGED_WRITES", "acknowledged_writes"]


def acknowledged_writes(
    history: Sequence[HistoryOp] | None,
    final: FinalRead | None = None,
    *,
    unclean_leader_election: bool = False,
    logs: EventLogs | None = None,
) -> InvariantResult:
    """Invariant 5 over the workload `history` and its `final` read (rebuilt from the
    history's `final-read` process when not given). `logs`, when given, only add a note
    about unclean elections they record."""
    if unclean_leader_election:
        return InvariantResult(
            ACKNOWLEDGED_WRITES,
            note="unclean leader election is enabled: acknowledged writes may be lost",
            judged=False,
        )
    if not history:
        return InvariantResult(ACKNOWLEDGED_WRITES, note="no workload history", judged=False)
    history = indexed(history)
    if final is None:
        final = final_read_from_history(history, FINAL_READ_PROCESS)
    verdict = check(history, final)
    violations: list[Violation] = []
    for result in verdict.results:
        for anomaly in result.anomalies:
            value = f" {anomaly.value!r}" if anomaly.value is not None else ""
            by = f" ({anomaly.process})" if anomaly.process else ""
            violations.append(
                Violation(
                    f"{anomaly.topic_partition}{value}",
                    f"{result.name}: {anomaly.detail} at offsets {list(anomaly.offsets)}{by}",
                )
            )
    violations.extend(
        Violation(str(tp), "acknowledged writes not judged: the final read did not cover it")
        for tp in verdict.unread
    )
    notes = [verdict.result("lost_writes").note]
    if logs is not None:
        unclean = [
            e for e in events_of_kind(logs, EventKind.LEADER_ELECTED) if e.fields.get("unclean")
        ]
        if unclean:
            notes.append(f"{len(unclean)} unclean elections in the event logs")
    checked = sum(r.checked for r in verdict.results)
    return InvariantResult(ACKNOWLEDGED_WRITES, tuple(violations), checked, "; ".join(notes))
