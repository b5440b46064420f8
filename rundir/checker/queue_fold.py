"""One pass over a workload history for Jepsen's Kafka queue anomalies
(`jepsen.tests.kafka`), per partition: `QueueFold.feed` takes the operations in history
order, `QueueFold.final` the final read; `rundir.checker.queue` turns what it gathered
into one result per anomaly class. Pure; one thread (the caller's).

What it keeps, and nothing else (memory bounded by the partitions, the operations in
flight and each partition's records, never by the number of polls or sends):

- the invoke of every operation in flight, by `(process, op_id)`, until it completes;
- per partition, the offset map (offset -> the first value seen there and the operation
  that showed it) and the value map (value -> a `Record`: its offsets, its send's
  outcome, acknowledgement and allowance, its first read, how often polls returned it);
- per (consumer, partition) the last offset its last non-empty poll returned, and per
  (producer, partition) its last acknowledged offset;
- the anomalies found so far (the `pending` gaps of `poll-skip` and `int-poll-skip`
  are confirmed at the end, when every offset known to exist is known);
- the count of acknowledged values no poll has read yet, sampled at most `SAMPLES` times.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

from rundir.history import HistoryOp

__all__ = ["SAMPLES", "UNBOUNDED", "Found", "Gap", "PartitionState", "QueueFold", "Record", "label"]

#: The allowance of a send that never completed: retried any number of times.
UNBOUNDED = 1 << 30
#: How many (time, count) samples of the unseen count are kept at most.
SAMPLES = 64


def label(op: HistoryOp) -> str:
    """How a witness names an operation: `"<process>#<op_id>"`."""
    return f"{op.process}#{op.op_id}"


class Record:
    """What one partition's value is known to be: where it was seen, how it was sent,
    when first read and how often polls returned it."""

    __slots__ = (
        "ack",
        "ack_acks",
        "ack_ns",
        "ack_offset",
        "allowance",
        "failed",
        "first_read",
        "first_read_ns",
        "in_final",
        "offsets",
        "reads",
        "sent",
    )

    def __init__(self) -> None:
        self.offsets: set[int] = set()
        self.sent = 0  # completed or open sends of the value
        self.allowance = 0  # how often its sends may have written it
        self.failed: str | None = None  # a definitely failed send of it
        self.ack: str | None = None  # its acknowledged send, with where and when
        self.ack_offset: int | None = None
        self.ack_acks = -1
        self.ack_ns = 0
        self.first_read: str | None = None  # the first poll that returned it
        self.first_read_ns = 0
        self.reads = 0  # how many polls returned it
        self.in_final = False


@dataclass(frozen=True, slots=True)
class Gap:
    """Offsets `(after, before)` exclusive that a consumer stepped over: `inside` one
    poll (`int-poll-skip`), from the offset it asked to `fetch` to the poll's first
    record, or `between` its `previous` poll's end and the offset it sought (both
    `poll-skip`)."""

    kind: Literal["inside", "fetch", "between"]
    process: str
    previous: str | None
    poll: str
    after: int
    before: int
    allowed: bool


@dataclass(frozen=True, slots=True)
class Found:
    """One anomaly found during the pass, before it becomes a `Violation`."""

    value: str | None
    offsets: tuple[int, ...]
    process: str | None
    ops: tuple[str, ...]
    explanation: str
    allowed: bool = False


@dataclass
class PartitionState:
    """Everything the pass keeps about one partition."""

    #: offset -> (value, op that showed it, whether that was an acks=1 acknowledgement)
    at: dict[int, tuple[str, str, bool]] = field(default_factory=dict)
    values: dict[str, Record] = field(default_factory=dict)
    max_read: int = -1
    max_read_op: str = ""
    inconsistent: dict[tuple[int, str], Found] = field(default_factory=dict)
    gaps: list[Gap] = field(default_factory=list)
    found: dict[str, list[Found]] = field(default_factory=dict)  # by anomaly class
    checked: dict[str, int] = field(default_factory=dict)

    def record(self, value: str) -> Record:
        """The record of `value`, made on first mention."""
        rec = self.values.get(value)
        if rec is None:
            rec = self.values[value] = Record()
        return rec

    def add(self, name: str, found: Found) -> None:
        """Note an anomaly of class `name`."""
        self.found.setdefault(name, []).append(found)

    def count(self, name: str, n: int = 1) -> None:
        """Note that `n` more things were judged for class `name`."""
        self.checked[name] = self.checked.get(name, 0) + n

    def seen_at(
        self, offset: int, value: str, op: str, *, acked: bool = False, loose: bool = False
    ) -> None:
        """`value` is at `offset` (read there, or acknowledged there when `acked`; `loose`:
        with acks=1, which may lose it and hand the offset out again)."""
        first = self.at.get(offset)
        if first is None:
            self.at[offset] = (value, op, loose)
            self.count("inconsistent-offsets")
        elif first[0] != value and (offset, value) not in self.inconsistent:
            how = "acknowledged" if acked else "read"
            self.inconsistent[(offset, value)] = Found(
                value,
                (offset,),
                None,
                (first[1], op),
                f"{how} at offset {offset}, which {first[1]} showed holding {first[0]!r}",
                allowed=loose or first[2],
            )
        self.record(value).offsets.add(offset)


class QueueFold:
    """The single pass: `feed` each operation in history order, then `final` once."""

    def __init__(self) -> None:
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self.invokes: dict[tuple[str, int], HistoryOp] = {}
        self.last_poll: dict[tuple[str, str, int], tuple[int, str]] = {}  # -> (offset, op)
        self.last_send: dict[tuple[str, str, int], tuple[int, str, int]] = {}
        self.unseen = 0
        self.unseen_max = 0
        self.samples: list[tuple[int, int]] = []
        self._stride = 1
        self._changes = 0
        self.worst_lag: tuple[int, str, str, str, str] | None = None  # ns, tp, value, ack, read

    def partition(self, op: HistoryOp) -> PartitionState:
        """The state of `op`'s partition."""
        key = (op.topic, op.partition)
        state = self.partitions.get(key)
        if state is None:
            state = self.partitions[key] = PartitionState()
        return state

    def feed(self, op: HistoryOp) -> None:
        """Take the next operation of the history."""
        key = (op.process, op.op_id)
        if op.type == "invoke":
            self.invokes[key] = op
            return
        invoke = self.invokes.pop(key, None)
        if op.f == "send":
            self._send(op)
        elif op.type == "ok":
            self._poll(op, invoke)

    def open_sends(self) -> None:
        """Count the sends still in flight at the end: their values may be anywhere."""
        for op in self.invokes.values():
            if op.f == "send" and op.value is not None:
                rec = self.partition(op).record(op.value)
                rec.sent += 1
                rec.allowance = UNBOUNDED
        self.invokes.clear()

    def _send(self, op: HistoryOp) -> None:
        if op.value is None:
            return
        state = self.partition(op)
        rec = state.record(op.value)
        rec.sent += 1
        if op.type == "fail":
            rec.allowance += op.attempts_unknown
            if op.attempts_unknown == 0:
                rec.failed = label(op)
            return
        if op.type == "info":
            rec.allowance += max(op.attempts_unknown, 1)
            return
        rec.allowance += op.attempts_unknown + 1
        acks = op.acks if op.acks is not None else -1
        rec.ack, rec.ack_ns, rec.ack_acks = label(op), op.time_ns, acks
        if rec.first_read is None:
            self._unseen(+1, op.time_ns)
        if op.offset is None:
            return
        rec.ack_offset = op.offset
        state.seen_at(op.offset, op.value, label(op), acked=True, loose=acks != -1)
        self._nonmonotonic_send(state, op, acks)

    def _nonmonotonic_send(self, state: PartitionState, op: HistoryOp, acks: int) -> None:
        assert op.offset is not None
        assert op.value is not None
        key = (op.process, op.topic, op.partition)
        last = self.last_send.get(key)
        self.last_send[key] = (op.offset, label(op), acks)
        if last is None:
            return
        state.count("nonmonotonic-send")
        if op.offset <= last[0]:
            state.add(
                "nonmonotonic-send",
                Found(
                    op.value,
                    (last[0], op.offset),
                    op.process,
                    (last[1], label(op)),
                    f"acknowledged at {op.offset} after {last[1]} was acknowledged at {last[0]}",
                    allowed=acks != -1 or last[2] != -1,
                ),
            )

    def _poll(self, op: HistoryOp, invoke: HistoryOp | None) -> None:
        records = op.records or ()
        state = self.partition(op)
        me = label(op)
        for offset, value in records:
            state.seen_at(offset, value, me)
            rec = state.values[value]
            rec.reads += 1
            if rec.first_read is None:
                rec.first_read, rec.first_read_ns = me, op.time_ns
                if rec.ack is not None:
                    self._unseen(-1, op.time_ns)
                    self._lag(op, value, rec)
            if offset > state.max_read:
                state.max_read, state.max_read_op = offset, me
        if not records:
            return
        self._within(state, op, records)
        fetch = invoke.offset if invoke is not None else None
        self._between(state, op, fetch, records[0])
        self.last_poll[(op.process, op.topic, op.partition)] = (records[-1][0], me)

    def _within(
        self, state: PartitionState, op: HistoryOp, records: tuple[tuple[int, str], ...]
    ) -> None:
        """`int-nonmonotonic-poll` and `int-poll-skip` candidates inside one poll."""
        me = label(op)
        state.count("int-nonmonotonic-poll", len(records) - 1)
        state.count("int-poll-skip", len(records) - 1)
        for (a, _), (b, value) in itertools.pairwise(records):
            if b <= a:
                state.add(
                    "int-nonmonotonic-poll",
                    Found(value, (a, b), op.process, (me,), f"offset {b} returned after {a}"),
                )
            elif b > a + 1:
                state.gaps.append(Gap("inside", op.process, None, me, a, b, False))

    def _between(
        self, state: PartitionState, op: HistoryOp, fetch: int | None, first: tuple[int, str]
    ) -> None:
        """`nonmonotonic-poll` and `poll-skip` candidates against the process's previous
        poll of the partition. The consumer asked for `fetch`: when it is not just past
        the previous poll's end the consumer moved on its own (a seek), and the jump to
        `fetch` is allowed; a poll that starts past `fetch` skipped by itself."""
        me = label(op)
        start, value = first
        last = self.last_poll.get((op.process, op.topic, op.partition))
        previous = last[1] if last else None
        if fetch is not None and start > fetch:
            state.gaps.append(Gap("fetch", op.process, previous, me, fetch - 1, start, False))
        if last is None:
            return
        end, previous = last
        sought = fetch is not None and fetch != end + 1
        state.count("nonmonotonic-poll")
        state.count("poll-skip")
        if start <= end:
            state.add(
                "nonmonotonic-poll",
                Found(
                    value,
                    (end, start),
                    op.process,
                    (previous, me),
                    f"starts at {start}, at or before {end} where {previous} ended"
                    + (f" (the consumer sought {fetch})" if sought else ""),
                    allowed=sought,
                ),
            )
        elif fetch is None and start > end + 1:
            state.gaps.append(Gap("between", op.process, previous, me, end, start, False))
        elif fetch is not None and sought and fetch > end + 1:
            state.gaps.append(
                Gap("between", op.process, previous, me, end, min(fetch, start), True)
            )

    def _unseen(self, delta: int, time_ns: int) -> None:
        self.unseen += delta
        self.unseen_max = max(self.unseen_max, self.unseen)
        self._changes += 1
        if self._changes % self._stride == 0:
            self.samples.append((time_ns, self.unseen))
            if len(self.samples) >= SAMPLES:
                del self.samples[1::2]
                self._stride *= 2

    def _lag(self, op: HistoryOp, value: str, rec: Record) -> None:
        lag = max(0, op.time_ns - rec.ack_ns)
        if self.worst_lag is None or lag > self.worst_lag[0]:
            assert rec.ack is not None
            tp = f"{op.topic}-{op.partition}"
            self.worst_lag = (lag, tp, value, rec.ack, label(op))
