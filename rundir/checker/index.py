"""The history checker's view of a history: each send paired with its completion and the
number of times it may be in the log, each successful poll, and the final read they are
judged against (`FinalRead`, also rebuilt from the history by `final_read_from_history`).
Built once per history (`indexed`) and shared by every check. Pure; any thread."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from domain import TopicPartition
from rundir.history import HistoryOp

__all__ = [
    "FinalRead",
    "Index",
    "Poll",
    "Send",
    "final_from_polls",
    "final_read_from_history",
    "index_of",
    "indexed",
    "offsets_of",
    "reads",
]


@dataclass(frozen=True, slots=True)
class FinalRead:
    """The consumers' last full read of each partition, begun at `started_ns` (monotonic)."""

    started_ns: int
    partitions: Mapping[TopicPartition, tuple[tuple[int, str], ...]]


#: The allowance of a send that never completed: it may have been retried any number of times.
UNBOUNDED = 1 << 30


class Send(NamedTuple):
    """One send as judged: its completion's outcome (`open`: none) and where it landed."""

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
        """How often this send may be in the log."""
        if self.outcome == "ok":
            return self.attempts_unknown + 1
        if self.outcome == "info":
            return max(self.attempts_unknown, 1)
        if self.outcome == "open":
            return UNBOUNDED
        return self.attempts_unknown


class Poll(NamedTuple):
    """One successful poll: what it asked for, the high watermark and the records read."""

    process: str
    tp: TopicPartition
    fetch_offset: int | None
    high_watermark: int | None
    records: tuple[tuple[int, str], ...]
    done_ns: int
    op_id: int = -1


@dataclass(frozen=True)
class Index:
    """A history's sends and successful polls, with lookups built on first use."""

    sends: tuple[Send, ...]
    polls: tuple[Poll, ...]  # ok polls only

    @cached_property
    def sends_by_value(self) -> dict[tuple[TopicPartition, str], list[Send]]:
        """Every send of each value, by partition and value."""
        out: dict[tuple[TopicPartition, str], list[Send]] = defaultdict(list)
        for s in self.sends:
            out[(s.tp, s.value)].append(s)
        return out

    @cached_property
    def allowances(self) -> dict[tuple[TopicPartition, str], int]:
        """How often each sent value may be in the log, summed over its sends."""
        return {key: sum(s.allowance for s in sends) for key, sends in self.sends_by_value.items()}

    def offsets_of(self, final: FinalRead) -> dict[TopicPartition, dict[str, list[int]]]:
        """`offsets_of(final)`, kept for the last final read asked about (`check` asks
        for one final read several times)."""
        kept = self.__dict__.get("_offsets")
        if kept is None or kept[0] is not final:
            kept = (final, offsets_of(final))
            self.__dict__["_offsets"] = kept
        return kept[1]

    @cached_property
    def acks_by_process(self) -> dict[tuple[str, TopicPartition], list[Send]]:
        """acks=all `ok` sends per (process, partition) in ack order."""
        out: dict[tuple[str, TopicPartition], list[Send]] = defaultdict(list)
        for s in sorted(self.sends, key=lambda s: (s.done_ns, s.position)):
            if s.outcome == "ok" and s.acks == -1 and s.offset is not None:
                out[(s.process, s.tp)].append(s)
        return out


class _IndexedOps(tuple[HistoryOp, ...]):
    """A history carrying its index, built once by `check` for all of its checks."""

    prepared: Index


def indexed(history: Sequence[HistoryOp]) -> Sequence[HistoryOp]:
    """`history` carrying its index, so that the checks given it do not index it again."""
    if isinstance(history, _IndexedOps):
        return history
    ops = _IndexedOps(history)
    ops.prepared = _build_index(ops)
    return ops


def index_of(history: Sequence[HistoryOp]) -> Index:
    """The index of `history`: the one it carries (`indexed`), else built now."""
    if isinstance(history, _IndexedOps):
        return history.prepared
    return _build_index(history)


def _build_index(history: Sequence[HistoryOp]) -> Index:
    invokes: dict[tuple[str, int], HistoryOp] = {}
    done: set[tuple[str, int]] = set()
    sends: list[Send] = []
    polls: list[Poll] = []
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
                Send(
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
                Poll(
                    op.process,
                    tp,
                    fetch_offset,
                    op.offset,
                    op.records or (),
                    op.time_ns,
                    op.op_id,
                )
            )
    for i, op in enumerate(history):
        key = (op.process, op.op_id)
        if op.type == "invoke" and op.f == "send" and op.value is not None and key not in done:
            acks = op.acks if op.acks is not None else -1
            tp = tps[(op.topic, op.partition)]
            sends.append(Send(op.process, tp, op.value, "open", None, acks, op.time_ns, i, 0))
    return Index(tuple(sends), tuple(polls))


def offsets_of(final: FinalRead) -> dict[TopicPartition, dict[str, list[int]]]:
    """The offsets at which the final read holds each value, per partition."""
    out: dict[TopicPartition, dict[str, list[int]]] = {}
    for tp, records in final.partitions.items():
        where: dict[str, list[int]] = defaultdict(list)
        for offset, value in records:
            where[value].append(offset)
        out[tp] = where
    return out


def reads(index: Index, final: FinalRead) -> Iterable[tuple[TopicPartition, int, str]]:
    """Every record read, by the polls and then by the final read."""
    for poll in index.polls:
        for offset, value in poll.records:
            yield poll.tp, offset, value
    for tp, records in final.partitions.items():
        for offset, value in records:
            yield tp, offset, value


def final_read_from_history(history: Sequence[HistoryOp], process: str) -> FinalRead:
    """Rebuild the final read from the polls of the process that made it: a partition counts
    only when its polls reached the high watermark the first of them reported."""
    polls = [p for p in index_of(history).polls if p.process == process]
    started = min(
        (op.time_ns for op in history if op.process == process and op.type == "invoke"),
        default=0,
    )
    return final_from_polls(polls, started)


def final_from_polls(polls: Iterable[Poll], started_ns: int) -> FinalRead:
    """The final read made by `polls` (one process's, in history order) begun at
    `started_ns`: a partition counts only when its polls reached the high watermark the
    first of them reported."""
    by_tp: dict[TopicPartition, list[Poll]] = defaultdict(list)
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
    return FinalRead(started_ns, partitions)
