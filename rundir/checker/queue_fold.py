"""One pass over a workload history for Jepsen's Kafka queue anomalies
(`jepsen.tests.kafka`), per partition: `QueueFold.feed` takes the operations in history
order, `QueueFold.final` the final read's records; `rundir.checker.queue` turns what it
gathered into one result per anomaly class. Pure; one thread (the caller's).

What it keeps, and nothing else (memory bounded by the partitions, the operations in
flight and each partition's records, never by the number of polls or sends):

- the invoke of every operation in flight, by `(process, op_id)`, until it completes;
- per partition, the columns of `rundir.checker.queue_state.PartitionState`: per value
  its offsets, its sends' outcome, acknowledgement and allowance, its first read and how
  often polls returned it; per offset the first value seen there and what showed it;
- per (consumer, partition) the last offset its last non-empty poll returned, and per
  (producer, partition) its last acknowledged offset;
- the anomalies found so far (the `pending` gaps of `poll-skip` and `int-poll-skip`
  are confirmed at the end, when every offset known to exist is known);
- the count of acknowledged values no poll has read yet, sampled at most `SAMPLES` times.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Mapping

from domain import TopicPartition
from rundir.checker.final_index import FinalRecords
from rundir.checker.queue_state import OP_LIMIT, Found, Gap, Labels, PartitionState
from rundir.history import HistoryOp

__all__ = [
    "SAMPLES",
    "UNBOUNDED",
    "Found",
    "Gap",
    "PartitionState",
    "QueueFold",
    "UnseenCount",
    "label",
]

#: The allowance of a send that never completed: retried any number of times.
UNBOUNDED = 1 << 30
#: How many (time, count) samples of the unseen count are kept at most.
SAMPLES = 64


def label(op: HistoryOp) -> str:
    """How a witness names an operation: `"<process>#<op_id>"`."""
    return f"{op.process}#{op.op_id}"


class UnseenCount:
    """The count of acknowledged values no poll has read yet, as it changes in history
    order: its last value, its maximum and at most `SAMPLES` (time, count) samples, every
    `stride`-th change (the stride doubles when the samples fill up)."""

    def __init__(self) -> None:
        self.unseen = 0
        self.unseen_max = 0
        self.samples: list[tuple[int, int]] = []
        self._stride = 1
        self._changes = 0

    def change(self, delta: int, time_ns: int) -> None:
        """The count moved by `delta` at `time_ns`: as many changes of one, as `delta`
        changes of one would (a poll's first reads of several values come as one)."""
        if delta == 1 or delta == -1:  # the common case, in fewer steps
            self.unseen += delta
            if self.unseen > self.unseen_max:
                self.unseen_max = self.unseen
            self._changes += 1
            if self._changes % self._stride == 0:
                self._sample(time_ns)
            return
        step = 1 if delta > 0 else -1
        left = delta * step
        while left:  # the changes up to the next sample, or all that are left
            stride = self._stride
            take = min(left, stride - self._changes % stride)
            left -= take
            self.unseen += step * take
            if self.unseen > self.unseen_max:
                self.unseen_max = self.unseen
            self._changes += take
            if self._changes % stride == 0:
                self._sample(time_ns)

    def _sample(self, time_ns: int) -> None:
        self.samples.append((time_ns, self.unseen))
        if len(self.samples) >= SAMPLES:
            del self.samples[1::2]
            self._stride *= 2


class QueueFold:
    """The single pass: `feed` each operation in history order, then `final` once."""

    def __init__(self, values: Mapping[TopicPartition, FinalRecords] | None = None) -> None:
        """`values`: the final read's records by partition when they are known
        beforehand; a value they hold is then found by its position there and kept as
        their string, not a copy of it (`PartitionState.final`)."""
        self._values = values or {}
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self.invokes: dict[tuple[str, int], HistoryOp] = {}
        self.last_poll: dict[tuple[str, str, int], tuple[int, str]] = {}  # -> (offset, op)
        self.last_send: dict[tuple[str, str, int], tuple[int, int, int]] = {}  # offset, op
        self.unseen_count = UnseenCount()
        #: where each change of the unseen count goes instead of `unseen_count`, for a
        #: caller that judges a history in parts: `(time_ns, file, line, delta)`, its place
        #: the operation's (`at`)
        self.unseen_log: array[int] | None = None
        #: the position in the history of the operation being fed, `(time_ns, file, line,
        #: op)`, for a caller that judges a history in parts and merges them in history
        #: order (else unused)
        self.at: object = None
        self.worst_lag: tuple[int, str, str, str, str] | None = None  # ns, tp, value, ack, read
        self.worst_lag_at: object = None
        self.labels = Labels()

    @property
    def unseen(self) -> int:
        """Acknowledged values no poll has read yet, now."""
        return self.unseen_count.unseen

    @property
    def unseen_max(self) -> int:
        """The most acknowledged values no poll had read at once."""
        return self.unseen_count.unseen_max

    @property
    def samples(self) -> list[tuple[int, int]]:
        """(time, count) samples of the unseen count."""
        return self.unseen_count.samples

    def partition(self, op: HistoryOp) -> PartitionState:
        """The state of `op`'s partition."""
        key = (op.topic, op.partition)
        state = self.partitions.get(key)
        if state is None:
            state = self.partitions[key] = self._new(key)
        return state

    def _new(self, key: tuple[str, int]) -> PartitionState:
        return PartitionState(final=self._values.get(TopicPartition(*key)))

    def feed(self, op: HistoryOp) -> None:
        """Take the next operation of the history."""
        kind, f, process = op[:3]
        key = (process, op.op_id)
        if kind == "invoke":
            self.invokes[key] = op
            return
        invoke = self.invokes.pop(key, None)
        if f == "send":
            self.send(op)
        elif kind == "ok":
            self.poll(op, invoke)

    def open_sends(self) -> None:
        """Count the sends still in flight at the end: their values may be anywhere."""
        for op in self.invokes.values():
            if op.f == "send" and op.value is not None:
                state = self.partition(op)
                slot = state.record(op.value)
                state.sent[slot] += 1
                state.allowance[slot] = UNBOUNDED
        self.invokes.clear()

    def final(self, key: tuple[str, int], records: Iterable[tuple[int, str]], op: str) -> None:
        """The final read's records of partition `key` (topic, partition), shown by `op`."""
        state = self.partitions.get(key)
        if state is None:
            state = self.partitions[key] = self._new(key)
        code = self.labels.named(op)
        at_slot, names, more, in_final = state.at_slot, state.names, state.more, state.in_final
        for offset, value in records:
            # `state.seen`, inline: once per record of the final read
            slot = at_slot[offset] if 0 <= offset < len(at_slot) else -1
            if slot < 0 or names[slot] != value or slot in more:
                slot = state.seen_at(offset, value, code, self.labels)
            in_final[slot] = 1
            if offset > state.max_read:
                state.max_read, state.max_read_op = offset, op

    def send(self, op: HistoryOp) -> None:
        """Take the completion `op` of a send (after its invoke is popped)."""
        # once per send: the fields unpacked at once, the common case inline
        (kind, _, process, time_ns, _, topic, partition, offset, value, _, op_id, acks) = op[:12]
        if value is None:
            return
        unknown = op.attempts_unknown
        state = self.partitions.get((topic, partition)) or self.partition(op)
        final = state.final  # `state.record`, inline for a value the final read holds
        position = final.where.get(value) if final is not None else None
        slot = state.final_slot[position] if position is not None else -1
        if slot < 0:
            slot = state.record(value)
        state.sent[slot] += 1
        if kind == "fail":
            state.allowance[slot] += unknown
            if unknown == 0:
                state.failed[slot] = self.labels.of(process, op_id)
            return
        if kind == "info":
            state.allowance[slot] += max(unknown, 1)
            return
        state.allowance[slot] += unknown + 1
        if acks is None:
            acks = -1
        loose = acks != -1
        base = self.labels.bases.get(process)  # `labels.of`, inline
        if base is not None and 0 <= op_id < OP_LIMIT:
            code = base | op_id
        else:
            code = self.labels.of(process, op_id)
        state.ack[slot], state.ack_ns[slot] = code, time_ns
        if state.first_read[slot] < 0:  # one more unseen (to the log when given)
            log = self.unseen_log
            if log is None:
                self.unseen_count.change(1, time_ns)
            else:
                at = self.at
                log.extend((time_ns, at[1], at[2], 1))  # type: ignore[index]
        if offset is None:
            state.acknowledged(slot, loose)
            return
        if not state.ack_next(offset, slot, code << 1 | loose):
            state.seen_at(offset, value, code, self.labels, acked=True, loose=loose)
        state.acknowledged_at(slot, offset, loose)
        key = (process, topic, partition)
        last = self.last_send.get(key)
        self.last_send[key] = (offset, code, acks)
        if last is not None:
            checked = state.checked  # `state.count`, inline
            checked["nonmonotonic-send"] = checked.get("nonmonotonic-send", 0) + 1
            if offset <= last[0]:
                self._nonmonotonic_send(state, op, code, acks, last)

    def _nonmonotonic_send(
        self, state: PartitionState, op: HistoryOp, code: int, acks: int, last: tuple[int, ...]
    ) -> None:
        """The acknowledgement `op` (of code `code`) at or before the offset of the last
        one of its producer to its partition (`last`: offset, code, acks)."""
        assert op.offset is not None
        before = self.labels.text(last[1])
        state.add(
            "nonmonotonic-send",
            Found(
                op.value,
                (last[0], op.offset),
                op.process,
                (before, label(op)),
                f"acknowledged at {op.offset} after {before} was acknowledged at {last[0]}",
                allowed=acks != -1 or last[2] != -1,
            ),
        )

    def poll(self, op: HistoryOp, invoke: HistoryOp | None) -> None:
        """Take the completion `op` of a poll that returned (`ok`), invoked by `invoke`."""
        records = op.records or ()
        state = self.partitions.get((op.topic, op.partition)) or self.partition(op)
        code = self.labels.of(op.process, op.op_id)
        me = self.labels.text(code)
        first_read, reads, names, more = state.first_read, state.reads, state.names, state.more
        ack, ack_ns, time_ns, at_slot = state.ack, state.ack_ns, op.time_ns, state.at_slot
        gone = 0  # acknowledged values read for the first time
        for offset, value in records:
            # `state.seen`, inline: once per record read
            slot = at_slot[offset] if 0 <= offset < len(at_slot) else -1
            if slot < 0 or names[slot] != value or slot in more:
                slot = state.seen_at(offset, value, code, self.labels)
            reads[slot] += 1
            if first_read[slot] < 0:
                first_read[slot] = code
                if ack[slot] >= 0:
                    gone += 1
                    lag = time_ns - ack_ns[slot]
                    if self.worst_lag is None or lag > self.worst_lag[0]:
                        self._lag(op, value, state, slot)
            if offset > state.max_read:
                state.max_read, state.max_read_op = offset, me
        if gone:  # that many fewer unseen
            log = self.unseen_log
            if log is None:
                self.unseen_count.change(-gone, time_ns)
            else:
                at = self.at
                log.extend((time_ns, at[1], at[2], -gone))  # type: ignore[index]
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

    def _lag(self, op: HistoryOp, value: str, state: PartitionState, slot: int) -> None:
        lag = max(0, op.time_ns - state.ack_ns[slot])
        if self.worst_lag is None or lag > self.worst_lag[0]:
            tp = f"{op.topic}-{op.partition}"
            ack = self.labels.text(state.ack[slot])
            self.worst_lag = (lag, tp, value, ack, label(op))
            self.worst_lag_at = self.at
