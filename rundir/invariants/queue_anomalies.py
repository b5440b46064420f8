"""Jepsen's Kafka queue anomaly classes (`rundir.checker.queue`) as invariants of a run:
one result per class, named as Jepsen names it, with what the scenario's configuration
allows (unclean leader election, a power loss's losses) apart. Pure; any thread."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rundir.checker import (
    QUEUE_CLASSES,
    FinalRead,
    QueuePolicy,
    QueueVerdict,
    final_read_from_history,
    queue_classes,
)
from rundir.history import FINAL_READ_PROCESS, HistoryOp
from rundir.results import InvariantResult, RunVerdict

__all__ = ["queue_anomalies"]


def queue_anomalies(
    history: Collection[HistoryOp] | None,
    final: FinalRead | None = None,
    *,
    policy: QueuePolicy | None = None,
    verdict: RunVerdict | None = None,
) -> QueueVerdict:
    """Every queue class over the workload `history` and its `final` read (rebuilt from
    the history's `final-read` process when not given), from the history checker's
    `verdict` (judged with the same policy) when it was already judged; without a
    history, each class not judged."""
    if not history:
        return QueueVerdict(
            tuple(
                InvariantResult(name, note="no workload history", judged=False)
                for name in QUEUE_CLASSES
            ),
            {},
        )
    if verdict is not None:
        own = tuple(r for r in verdict.results if r.name in QUEUE_CLASSES)
        return QueueVerdict(own, dict(verdict.stats))
    ops = history if isinstance(history, Sequence) else list(history)
    if final is None:
        final = final_read_from_history(ops, FINAL_READ_PROCESS)
    return queue_classes(ops, final, policy)
