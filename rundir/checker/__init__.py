"""The history checker: pure checks of a workload history against its final read
(docs/workload.md), each returning an `InvariantResult` whose violations carry the
offending records; `check` runs them all into a `RunVerdict` with its text report. The
checks and their definitions are `checks`; the history's pairing of sends and polls and
the final read are `index`. Pure; any thread."""

from rundir.checker.checks import (
    check,
    duplicates,
    failed_writes_read,
    lost_writes,
    offsets_monotonic,
    reordering,
    unexpected_values,
    unread_partitions,
    vanished_reads,
)
from rundir.checker.index import FinalRead, final_read_from_history, indexed

__all__ = [
    "FinalRead",
    "check",
    "duplicates",
    "failed_writes_read",
    "final_read_from_history",
    "indexed",
    "lost_writes",
    "offsets_monotonic",
    "reordering",
    "unexpected_values",
    "unread_partitions",
    "vanished_reads",
]
