"""Pure checks over a workload history and its final read (no I/O, any thread).

The *final read* (`FinalRead`) is every record of each partition from offset 0 to the high
watermark, read after the producers stopped and the faults healed; `started_ns` is when it
began. Sends are paired with their completions by `(process, op_id)`; an invoke without a
completion is treated as `info`. A send *may be in the log* up to `allowance` times:
`attempts_unknown + 1` for `ok`, `max(attempts_unknown, 1)` for `info`, unbounded for an
unfinished op, `attempts_unknown` (normally 0) for `fail`.

Definitions (per topic-partition; values are unique per send):

- `lost_writes`: a send acknowledged `ok` with acks=all, whose ack came before the final
  read began, on a partition the final read covers, whose value is absent from the final
  read. `info` and `fail` sends are never lost; acks=1 sends are not judged.
- `duplicates`: a value the final read holds at more offsets than its sends' allowance (at
  least one; zero is `failed_writes_read`).
- `failed_writes_read`: a value read (by any poll or the final read) whose every send
  definitely failed.
- `unexpected_values`: a value read on a partition where no send of it was ever invoked.
- `vanished_reads`: a record a consumer read before the final read (so below the high
  watermark: committed) that the final read no longer holds at that offset.
- `reordering`: two successive acks (acks=all) of one process on one partition whose values
  the final read holds in the opposite order (each value placed at its acked offset when
  it is there, else at its first offset).
- `offsets_monotonic`: successive acks (acks=all) of one process on one partition whose
  offsets do not increase.

`check` runs all of them and then Jepsen's queue classes (`rundir.checker.queue`); the
verdict also fails when a partition with judged acks was not covered by the final read."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Sequence

from domain import TopicPartition
from rundir.checker.index import FinalRead, Send, index_of, indexed, reads
from rundir.checker.queue import QueuePolicy, queue_classes
from rundir.history import HistoryOp
from rundir.results import (
    InvariantResult,
    RunVerdict,
    Violation,
)

__all__ = [
    "CHECKS",
    "check",
    "duplicates",
    "failed_writes_read",
    "lost_writes",
    "offsets_monotonic",
    "reordering",
    "unexpected_values",
    "unread_partitions",
    "vanished_reads",
]


def _violation(
    tp: TopicPartition,
    value: str,
    offsets: tuple[int, ...],
    process: str | None,
    detail: str,
    ops: tuple[str, ...] = (),
) -> Violation:
    """A check's violation: about one partition's record `value` at `offsets`, proved by
    the history operations `ops`."""
    return Violation(str(tp), detail, value=value, offsets=offsets, process=process, ops=ops)


# -- checks ------------------------------------------------------------------------------


def lost_writes(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Acknowledged (acks=all) writes acked before the final read and absent from it."""
    index = index_of(history)
    where = index.offsets_of(final)
    polled = {(p.tp, v): (o, f"{p.process}#{p.op_id}") for p in index.polls for o, v in p.records}
    anomalies: list[Violation] = []
    judged = late = unsafe = unread = 0
    for s in index.sends:
        if s.outcome != "ok":
            continue
        if s.acks != -1:
            unsafe += 1
        elif s.done_ns >= final.started_ns:
            late += 1
        elif s.tp not in where:
            unread += 1
        else:
            judged += 1
            if s.value not in where[s.tp]:
                seen = polled.get((s.tp, s.value))
                earlier = f"; a poll had read it at offset {seen[0]}" if seen else ""
                ack = f"{s.process}#{history[s.position].op_id}"
                anomalies.append(
                    _violation(
                        s.tp,
                        s.value,
                        (s.offset,) if s.offset is not None else (),
                        s.process,
                        f"acknowledged, absent from the final read{earlier}",
                        (ack, seen[1]) if seen else (ack,),
                    )
                )
    note = f"not judged: {late} acked after the final read began, {unsafe} acks!=all, " + (
        f"{unread} on unread partitions"
    )
    return InvariantResult("lost_writes", tuple(anomalies), judged, note)


def duplicates(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Values the final read holds more often than their sends could have written them."""
    index = index_of(history)
    allowances = index.allowances
    anomalies: list[Violation] = []
    checked = 0
    for tp, where in sorted(index.offsets_of(final).items()):
        for value, offsets in where.items():
            checked += 1
            allowance = allowances.get((tp, value), 0)
            if 0 < allowance < len(set(offsets)):
                anomalies.append(
                    _violation(
                        tp,
                        value,
                        tuple(sorted(set(offsets))),
                        None,
                        f"at {len(set(offsets))} offsets, may be written {allowance}x",
                    )
                )
    return InvariantResult("duplicates", tuple(anomalies), checked)


def failed_writes_read(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Values read although every send of them definitely failed."""
    index = index_of(history)
    failed = {key for key, allowance in index.allowances.items() if allowance == 0}
    found: dict[tuple[TopicPartition, str], list[int]] = defaultdict(list)
    checked = 0
    for tp, offset, value in reads(index, final):
        checked += 1
        if (tp, value) in failed:
            found[(tp, value)].append(offset)
    anomalies = tuple(
        _violation(tp, v, tuple(sorted(set(o))), None, "read, but its send definitely failed")
        for (tp, v), o in sorted(found.items())
    )
    return InvariantResult("failed_writes_read", anomalies, checked)


def unexpected_values(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Values read on a partition where no send of them was ever invoked."""
    index = index_of(history)
    sends = index.sends_by_value
    found: dict[tuple[TopicPartition, str], set[int]] = defaultdict(set)
    checked = 0
    for tp, offset, value in reads(index, final):
        checked += 1
        if (tp, value) not in sends:
            found[(tp, value)].add(offset)
    anomalies = tuple(
        _violation(tp, v, tuple(sorted(o)), None, "read, but never sent to this partition")
        for (tp, v), o in sorted(found.items())
    )
    return InvariantResult("unexpected_values", anomalies, checked)


def vanished_reads(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Records read before the final read (committed) that it no longer holds there."""
    index = index_of(history)
    at = {tp: dict(records) for tp, records in final.partitions.items()}
    found: dict[tuple[TopicPartition, int], Violation] = {}
    checked = 0
    for poll in index.polls:
        if poll.done_ns >= final.started_ns or poll.tp not in at:
            continue
        for offset, value in poll.records:
            checked += 1
            now = at[poll.tp].get(offset)
            if now != value and (poll.tp, offset) not in found:
                holds = "nothing" if now is None else repr(now)
                found[(poll.tp, offset)] = _violation(
                    poll.tp,
                    value,
                    (offset,),
                    poll.process,
                    f"read by a poll; the final read holds {holds} there",
                )
    return InvariantResult("vanished_reads", tuple(found[k] for k in sorted(found)), checked)


def reordering(history: Sequence[HistoryOp], final: FinalRead) -> InvariantResult:
    """Successive acks of one process on one partition read back in the opposite order."""
    index = index_of(history)
    where = index.offsets_of(final)
    anomalies: list[Violation] = []
    checked = 0
    for (process, tp), acks in sorted(index.acks_by_process.items()):
        if tp not in where:
            continue
        placed: list[tuple[Send, int]] = []
        for s in acks:
            offsets = where[tp].get(s.value)
            if offsets:
                placed.append((s, s.offset if s.offset in offsets else min(offsets)))
        for (a, pa), (b, pb) in itertools.pairwise(placed):
            checked += 1
            if pa >= pb:
                anomalies.append(
                    _violation(
                        tp,
                        b.value,
                        (pa, pb),
                        process,
                        f"acked after {a.value!r} but read at {pb}, not after {pa}",
                    )
                )
    return InvariantResult("reordering", tuple(anomalies), checked)


def offsets_monotonic(history: Sequence[HistoryOp]) -> InvariantResult:
    """Successive acks (acks=all) of one process on one partition with non-increasing offsets."""
    anomalies: list[Violation] = []
    checked = 0
    for (process, tp), acks in sorted(index_of(history).acks_by_process.items()):
        for a, b in itertools.pairwise(acks):
            checked += 1
            if a.offset is not None and b.offset is not None and b.offset <= a.offset:
                anomalies.append(
                    _violation(
                        tp,
                        b.value,
                        (a.offset, b.offset),
                        process,
                        f"acked at {b.offset} after {a.value!r} was acked at {a.offset}",
                    )
                )
    return InvariantResult("offsets_monotonic", tuple(anomalies), checked)


def unread_partitions(history: Sequence[HistoryOp], final: FinalRead) -> tuple[TopicPartition, ...]:
    """Partitions with acks=all writes acked before the final read that it did not cover."""
    return tuple(
        sorted(
            {
                s.tp
                for s in index_of(history).sends
                if s.outcome == "ok" and s.acks == -1 and s.done_ns < final.started_ns
            }
            - set(final.partitions)
        )
    )


#: The names of the checks above, in the order `check` runs them (Jepsen's classes follow).
CHECKS = (
    "lost_writes",
    "duplicates",
    "failed_writes_read",
    "unexpected_values",
    "vanished_reads",
    "reordering",
    "offsets_monotonic",
)


def check(
    history: Sequence[HistoryOp], final: FinalRead, policy: QueuePolicy | None = None
) -> RunVerdict:
    """Every check over one history and its final read, then every Jepsen queue class
    (`rundir.checker.queue`, what is allowed by `policy`), with their measures."""
    counts = Counter(f"{op.f} {op.type}" for op in history)
    history = indexed(history)
    results = (
        lost_writes(history, final),
        duplicates(history, final),
        failed_writes_read(history, final),
        unexpected_values(history, final),
        vanished_reads(history, final),
        reordering(history, final),
        offsets_monotonic(history),
    )
    queue = queue_classes(history, final, policy or QueuePolicy())
    return RunVerdict(
        results + queue.results, unread_partitions(history, final), dict(counts), queue.stats
    )
