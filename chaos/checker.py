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

`check` runs all of them; the verdict also fails when a partition with judged acks was
not covered by the final read."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from chaos.history import HistoryOp
from chaos.verdict import Anomaly, CheckResult, FinalRead, Verdict
from domain import TopicPartition

__all__ = [
    "Anomaly",
    "CheckResult",
    "FinalRead",
    "Verdict",
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

#: The allowance of a send that never completed: it may have been retried any number of times.
UNBOUNDED = 1 << 30


# -- pairing -----------------------------------------------------------------------------


class _Send(NamedTuple):
    process: str
    tp: TopicPartition
    value: str
    outcome: str  # ok | fail | info | open
    offset: int | None
    acks: int
    done_ns: int
    position: int  # index of the completion (or invoke) in the history
    attempts_unknown: int

    @property
    def allowance(self) -> int:
        if self.outcome == "ok":
            return self.attempts_unknown + 1
        if self.outcome == "info":
            return max(self.attempts_unknown, 1)
        if self.outcome == "open":
            return UNBOUNDED
        return self.attempts_unknown


class _Poll(NamedTuple):
    process: str
    tp: TopicPartition
    fetch_offset: int | None
    high_watermark: int | None
    records: tuple[tuple[int, str], ...]
    done_ns: int


@dataclass(frozen=True)
class _Index:
    sends: tuple[_Send, ...]
    polls: tuple[_Poll, ...]  # ok polls only

    @cached_property
    def sends_by_value(self) -> dict[tuple[TopicPartition, str], list[_Send]]:
        out: dict[tuple[TopicPartition, str], list[_Send]] = defaultdict(list)
        for s in self.sends:
            out[(s.tp, s.value)].append(s)
        return out

    @cached_property
    def allowances(self) -> dict[tuple[TopicPartition, str], int]:
        """How often each sent value may be in the log, summed over its sends."""
        return {key: sum(s.allowance for s in sends) for key, sends in self.sends_by_value.items()}

    def offsets_of(self, final: FinalRead) -> dict[TopicPartition, dict[str, list[int]]]:
        """`_offsets_of(final)`, kept for the last final read asked about (`check` asks
        for one final read several times)."""
        kept = self.__dict__.get("_offsets")
        if kept is None or kept[0] is not final:
            kept = (final, _offsets_of(final))
            self.__dict__["_offsets"] = kept
        return kept[1]

    @cached_property
    def acks_by_process(self) -> dict[tuple[str, TopicPartition], list[_Send]]:
        """acks=all `ok` sends per (process, partition) in ack order."""
        out: dict[tuple[str, TopicPartition], list[_Send]] = defaultdict(list)
        for s in sorted(self.sends, key=lambda s: (s.done_ns, s.position)):
            if s.outcome == "ok" and s.acks == -1 and s.offset is not None:
                out[(s.process, s.tp)].append(s)
        return out


class _IndexedOps(tuple[HistoryOp, ...]):
    """A history carrying its index, built once by `check` for all of its checks."""

    prepared: _Index


def indexed(history: Sequence[HistoryOp]) -> Sequence[HistoryOp]:
    """`history` carrying its index, so that the checks given it do not index it again."""
    if isinstance(history, _IndexedOps):
        return history
    ops = _IndexedOps(history)
    ops.prepared = _build_index(ops)
    return ops


def _index(history: Sequence[HistoryOp]) -> _Index:
    if isinstance(history, _IndexedOps):
        return history.prepared
    return _build_index(history)


def _build_index(history: Sequence[HistoryOp]) -> _Index:
    invokes: dict[tuple[str, int], HistoryOp] = {}
    done: set[tuple[str, int]] = set()
    sends: list[_Send] = []
    polls: list[_Poll] = []
    # one TopicPartition per partition: the checks' lookups then match by identity
    tps: dict[tuple[str, int], TopicPartition] = {}
    for i, op in enumerate(history):
        key = (op.process, op.op_id)
        tp = tps.get((op.topic, op.partition))
        if tp is None:
            tp = tps[(op.topic, op.partition)] = TopicPartition(op.topic, op.partition)
        if op.type == "invoke":
            invokes[key] = op
            continue
        done.add(key)
        invoked = invokes.get(key)
        if op.f == "send" and op.value is not None:
            acks = op.acks if op.acks is not None else -1
            sends.append(
                _Send(
                    op.process,
                    tp,
                    op.value,
                    op.type,
                    op.offset,
                    acks,
                    op.time_ns,
                    i,
                    op.attempts_unknown,
                )
            )
        elif op.f == "poll" and op.type == "ok":
            fetch_offset = invoked.offset if invoked is not None else None
            polls.append(
                _Poll(op.process, tp, fetch_offset, op.offset, op.records or (), op.time_ns)
            )
    for i, op in enumerate(history):
        key = (op.process, op.op_id)
        if op.type == "invoke" and op.f == "send" and op.value is not None and key not in done:
            acks = op.acks if op.acks is not None else -1
            tp = tps[(op.topic, op.partition)]
            sends.append(_Send(op.process, tp, op.value, "open", None, acks, op.time_ns, i, 0))
    return _Index(tuple(sends), tuple(polls))


def _offsets_of(final: FinalRead) -> dict[TopicPartition, dict[str, list[int]]]:
    out: dict[TopicPartition, dict[str, list[int]]] = {}
    for tp, records in final.partitions.items():
        where: dict[str, list[int]] = defaultdict(list)
        for offset, value in records:
            where[value].append(offset)
        out[tp] = where
    return out


def _reads(index: _Index, final: FinalRead) -> Iterable[tuple[TopicPartition, int, str]]:
    for poll in index.polls:
        for offset, value in poll.records:
            yield poll.tp, offset, value
    for tp, records in final.partitions.items():
        for offset, value in records:
            yield tp, offset, value


# -- checks ------------------------------------------------------------------------------


def lost_writes(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Acknowledged (acks=all) writes acked before the final read and absent from it."""
    index = _index(history)
    where = index.offsets_of(final)
    polled = {(p.tp, v): o for p in index.polls for o, v in p.records}
    anomalies: list[Anomaly] = []
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
                earlier = f"; a poll had read it at offset {seen}" if seen is not None else ""
                anomalies.append(
                    Anomaly(
                        s.tp,
                        s.value,
                        (s.offset,) if s.offset is not None else (),
                        s.process,
                        f"acknowledged, absent from the final read{earlier}",
                    )
                )
    note = f"not judged: {late} acked after the final read began, {unsafe} acks!=all, " + (
        f"{unread} on unread partitions"
    )
    return CheckResult("lost_writes", judged, tuple(anomalies), note)


def duplicates(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Values the final read holds more often than their sends could have written them."""
    index = _index(history)
    allowances = index.allowances
    anomalies: list[Anomaly] = []
    checked = 0
    for tp, where in sorted(index.offsets_of(final).items()):
        for value, offsets in where.items():
            checked += 1
            allowance = allowances.get((tp, value), 0)
            if 0 < allowance < len(set(offsets)):
                anomalies.append(
                    Anomaly(
                        tp,
                        value,
                        tuple(sorted(set(offsets))),
                        None,
                        f"at {len(set(offsets))} offsets, may be written {allowance}x",
                    )
                )
    return CheckResult("duplicates", checked, tuple(anomalies))


def failed_writes_read(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Values read although every send of them definitely failed."""
    index = _index(history)
    failed = {key for key, allowance in index.allowances.items() if allowance == 0}
    found: dict[tuple[TopicPartition, str], list[int]] = defaultdict(list)
    checked = 0
    for tp, offset, value in _reads(index, final):
        checked += 1
        if (tp, value) in failed:
            found[(tp, value)].append(offset)
    anomalies = tuple(
        Anomaly(tp, v, tuple(sorted(set(o))), None, "read, but its send definitely failed")
        for (tp, v), o in sorted(found.items())
    )
    return CheckResult("failed_writes_read", checked, anomalies)


def unexpected_values(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Values read on a partition where no send of them was ever invoked."""
    index = _index(history)
    sends = index.sends_by_value
    found: dict[tuple[TopicPartition, str], set[int]] = defaultdict(set)
    checked = 0
    for tp, offset, value in _reads(index, final):
        checked += 1
        if (tp, value) not in sends:
            found[(tp, value)].add(offset)
    anomalies = tuple(
        Anomaly(tp, v, tuple(sorted(o)), None, "read, but never sent to this partition")
        for (tp, v), o in sorted(found.items())
    )
    return CheckResult("unexpected_values", checked, anomalies)


def vanished_reads(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Records read before the final read (committed) that it no longer holds there."""
    index = _index(history)
    at = {tp: dict(records) for tp, records in final.partitions.items()}
    found: dict[tuple[TopicPartition, int], Anomaly] = {}
    checked = 0
    for poll in index.polls:
        if poll.done_ns >= final.started_ns or poll.tp not in at:
            continue
        for offset, value in poll.records:
            checked += 1
            now = at[poll.tp].get(offset)
            if now != value and (poll.tp, offset) not in found:
                holds = "nothing" if now is None else repr(now)
                found[(poll.tp, offset)] = Anomaly(
                    poll.tp,
                    value,
                    (offset,),
                    poll.process,
                    f"read by a poll; the final read holds {holds} there",
                )
    return CheckResult("vanished_reads", checked, tuple(found[k] for k in sorted(found)))


def reordering(history: Sequence[HistoryOp], final: FinalRead) -> CheckResult:
    """Successive acks of one process on one partition read back in the opposite order."""
    index = _index(history)
    where = index.offsets_of(final)
    anomalies: list[Anomaly] = []
    checked = 0
    for (process, tp), acks in sorted(index.acks_by_process.items()):
        if tp not in where:
            continue
        placed: list[tuple[_Send, int]] = []
        for s in acks:
            offsets = where[tp].get(s.value)
            if offsets:
                placed.append((s, s.offset if s.offset in offsets else min(offsets)))
        for (a, pa), (b, pb) in itertools.pairwise(placed):
            checked += 1
            if pa >= pb:
                anomalies.append(
                    Anomaly(
                        tp,
                        b.value,
                        (pa, pb),
                        process,
                        f"acked after {a.value!r} but read at {pb}, not after {pa}",
                    )
                )
    return CheckResult("reordering", checked, tuple(anomalies))


def offsets_monotonic(history: Sequence[HistoryOp]) -> CheckResult:
    """Successive acks (acks=all) of one process on one partition with non-increasing offsets."""
    anomalies: list[Anomaly] = []
    checked = 0
    for (process, tp), acks in sorted(_index(history).acks_by_process.items()):
        for a, b in itertools.pairwise(acks):
            checked += 1
            if a.offset is not None and b.offset is not None and b.offset <= a.offset:
                anomalies.append(
                    Anomaly(
                        tp,
                        b.value,
                        (a.offset, b.offset),
                        process,
                        f"acked at {b.offset} after {a.value!r} was acked at {a.offset}",
                    )
                )
    return CheckResult("offsets_monotonic", checked, tuple(anomalies))


def unread_partitions(history: Sequence[HistoryOp], final: FinalRead) -> tuple[TopicPartition, ...]:
    """Partitions with acks=all writes acked before the final read that it did not cover."""
    return tuple(
        sorted(
            {
                s.tp
                for s in _index(history).sends
                if s.outcome == "ok" and s.acks == -1 and s.done_ns < final.started_ns
            }
            - set(final.partitions)
        )
    )


def check(history: Sequence[HistoryOp], final: FinalRead) -> Verdict:
    """Every check over one history and its final read."""
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
    return Verdict(results, unread_partitions(history, final), dict(counts))


def final_read_from_history(history: Sequence[HistoryOp], process: str) -> FinalRead:
    """Rebuild the final read from the polls of the process that made it: a partition counts
    only when its polls reached the high watermark the first of them reported."""
    polls = [p for p in _index(history).polls if p.process == process]
    started = min(
        (op.time_ns for op in history if op.process == process and op.type == "invoke"),
        default=0,
    )
    by_tp: dict[TopicPartition, list[_Poll]] = defaultdict(list)
    for p in polls:
        by_tp[p.tp].append(p)
    partitions: dict[TopicPartition, tuple[tuple[int, str], ...]] = {}
    for tp, tp_polls in by_tp.items():
        target = tp_polls[0].high_watermark or 0
        records: dict[int, str] = {}
        reached = 0
        for p in tp_polls:
            records.update(p.records)
            after = p.records[-1][0] + 1 if p.records else (p.fetch_offset or 0)
            reached = max(reached, after)
        if reached >= target:
            partitions[tp] = tuple(sorted((o, v) for o, v in records.items() if o < target))
    return FinalRead(started, partitions)
