"""The history checker: pure checks of a workload history against its final read
(docs/workload.md), each returning an `InvariantResult` whose violations carry the
offending records; `check` runs them all into a `RunVerdict` with its text report. The
checks and their definitions are `checks`; the history's pairing of sends and polls and
the final read are `index`; Jepsen's Kafka queue classes (`inconsistent-offsets`,
`duplicate`, `lost-write`, `unseen`, `G1a`, the poll skips and the non-monotonic polls
and sends) are `queue`, found in one pass by `queue_fold`. `check_files` and
`check_stream` give `check`'s verdict while reading the history, holding none of its
operations (`stream`); `check_files` judges a long history a bucket of partitions at a
time, split on disk (`spill`, `parts`), for memory that does not follow its length.
Pure but for the files `check_files` reads and writes; any thread."""

from rundir.checker.checks import (
    CHECKS,
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
from rundir.checker.queue import (
    FINAL_READ_OP,
    QUEUE_CLASSES,
    QueuePolicy,
    QueueVerdict,
    queue_classes,
)
from rundir.checker.stream import check_files, check_stream

__all__ = [
    "CHECKS",
    "FINAL_READ_OP",
    "QUEUE_CLASSES",
    "FinalRead",
    "QueuePolicy",
    "QueueVerdict",
    "check",
    "check_files",
    "check_stream",
    "duplicates",
    "failed_writes_read",
    "final_read_from_history",
    "indexed",
    "lost_writes",
    "offsets_monotonic",
    "queue_classes",
    "reordering",
    "unexpected_values",
    "unread_partitions",
    "vanished_reads",
]
