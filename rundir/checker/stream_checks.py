"""The checks of `rundir.checker.checks` folded over a history as it is read, against a
final read known before the history (`FinalIndex`): `ChecksFold.feed` takes each operation
in history order and judges it at once where the final read is enough, `results` gives
the same `InvariantResult`s, in the same order, as the checks over the whole history.
Pure; one thread (the caller's).

What it keeps besides the final read (nothing per operation once it completed):

- every send still in flight, by `(process, op_id)`, until it completes (and the keys of
  send completions that came before their invoke, none in a history its writer made; an
  op id invoked again after its completion is taken as a new send);
- per (process, partition) the last acknowledgement (`offsets_monotonic`) and the last
  one placed in the final read (`reordering`);
- per partition a byte per value of the final read: never sent, only sent by sends that
  definitely failed, or sent with some chance of landing;
- for values the final read does not hold: whether they were sent (and may have landed),
  and the offsets polls read them at; and the offsets where polls read something other
  than what the final read holds there (so nothing, in a clean history);
- the anomalies found so far, and per value the final read holds at several offsets,
  what its sends may have written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from domain import TopicPartition
from rundir.checker.final_index import FinalIndex, FinalRecords
from rundir.checker.index import UNBOUNDED
from rundir.history import HistoryOp
from rundir.results import InvariantResult, Violation

__all__ = ["ChecksFold", "lost_writes_note"]

#: What the sends of a final read's value may have done, one byte per value.
_UNSENT, _FAILED, _SENT = 0, 1, 2

_Key = tuple[TopicPartition, str]


def _violation(
    tp: TopicPartition,
    value: str,
    offsets: tuple[int, ...],
    process: str | None,
    detail: str,
    ops: tuple[str, ...] = (),
) -> Violation:
    return Violation(str(tp), detail, value=value, offsets=offsets, process=process, ops=ops)


class ChecksFold:
    """`rundir.checker.checks`' checks in one pass; `feed`, then `end`, then `results`."""

    def __init__(self, final: FinalIndex) -> None:
        self.final = final
        self._tps: dict[tuple[str, int], TopicPartition] = {}
        self._codes = {tp: bytearray(len(records)) for tp, records in final.partitions.items()}
        #: the sends in flight by (process, op_id): their invokes (an op id invoked again
        #: before its completion, the earlier ones too), and the op ids of completions
        #: before any invoke; `feed` keeps them, or `rundir.checker.history_fold`
        self.pending: dict[tuple[str, int], HistoryOp] = {}
        self.twice: dict[tuple[str, int], list[HistoryOp]] = {}
        self.orphans: set[tuple[str, int]] = set()
        self._absent_sent: dict[_Key, bool] = {}  # sent, not in the final read -> may land
        self._multi_allowance: dict[_Key, int] = defaultdict(int)
        self._deviant: dict[_Key, set[int]] = defaultdict(set)  # reads not where final has
        self._polled_absent: dict[_Key, tuple[int, str]] = {}  # offset, poll
        self._reads = 0
        self._lost: list[tuple[TopicPartition, str, int | None, str, int]] = []
        #: the position in the history of the operation being fed, and of each lost write's
        #: acknowledgement, for a caller that judges a history in parts (else unused)
        self.at: object = None
        self.lost_at: list[object] = []
        self._judged = self._late = self._unsafe = self._unread = 0
        self._unread_tps: set[TopicPartition] = set()
        self._vanished: dict[tuple[TopicPartition, int], Violation] = {}
        self._vanished_checked = 0
        self._last_ack: dict[tuple[str, TopicPartition], tuple[str, int]] = {}
        self._last_placed: dict[tuple[str, TopicPartition], tuple[str, int]] = {}
        self._monotonic: dict[tuple[str, TopicPartition], list[Violation]] = defaultdict(list)
        self._reordered: dict[tuple[str, TopicPartition], list[Violation]] = defaultdict(list)
        self._monotonic_checked = self._reorder_checked = 0

    def _tp(self, op: HistoryOp) -> TopicPartition:
        tp = self._tps.get((op.topic, op.partition))
        if tp is None:
            tp = self._tps[(op.topic, op.partition)] = TopicPartition(op.topic, op.partition)
        return tp

    def feed(self, op: HistoryOp) -> None:
        """Take the next operation of the history."""
        kind, f, process = op[:3]
        key = (process, op.op_id)
        if kind == "invoke":
            if f == "send" and op.value is not None and key not in self.orphans:
                earlier = self.pending.get(key)
                if earlier is not None:  # an op id invoked twice before its completion
                    self.twice.setdefault(key, []).append(earlier)
                self.pending[key] = op
            return
        if self.pending.pop(key, None) is None and f == "send":
            self.orphans.add(key)
        if self.twice:
            self.twice.pop(key, None)
        if f == "send" and op.value is not None:
            self.send(op)
        elif f == "poll" and kind == "ok":
            self.poll(op)

    def end(self) -> None:
        """The sends still in flight: they may have been retried any number of times."""
        for ops in (*self.twice.values(), self.pending.values()):
            for op in ops:
                assert op.value is not None
                tp = self._tp(op)
                self._sent(tp, op.value, UNBOUNDED, self.final.partitions.get(tp))
        self.pending.clear()
        self.twice.clear()

    def _sent(
        self,
        tp: TopicPartition,
        value: str,
        allowance: int,
        records: FinalRecords | None,
    ) -> None:
        """A send of `value` that may have written it `allowance` times (`records`: the
        final read's records of `tp`)."""
        position = records.where.get(value) if records is not None else None
        if position is None:
            self._absent_sent[(tp, value)] = self._absent_sent.get((tp, value), False) or (
                allowance > 0
            )
            return
        assert records is not None
        codes = self._codes[tp]
        if allowance > 0:
            codes[position] = _SENT
        elif codes[position] == _UNSENT:
            codes[position] = _FAILED
        if records.more and value in records.more:
            self._multi_allowance[(tp, value)] += allowance

    def send(self, op: HistoryOp) -> None:
        """Take the completion `op` of a send of a value (after its invoke's pairing)."""
        # once per send: the fields unpacked at once, the value looked up once
        (kind, _, process, time_ns, _, topic, partition, offset, value, _, _, acks) = op[:12]
        assert value is not None
        tp, unknown = self._tps.get((topic, partition)) or self._tp(op), op.attempts_unknown
        records = self.final.partitions.get(tp)
        if kind != "ok":
            self._sent(tp, value, max(unknown, 1) if kind == "info" else unknown, records)
            return
        allowance = unknown + 1
        position = records.where.get(value) if records is not None else None
        if position is None or allowance <= 0:
            self._sent(tp, value, allowance, records)
        else:
            assert records is not None
            self._codes[tp][position] = _SENT
            if records.more and value in records.more:
                self._multi_allowance[(tp, value)] += allowance
        if acks is None:
            acks = -1
        if acks != -1:
            self._unsafe += 1
        elif time_ns >= self.final.started_ns:
            self._late += 1
        elif records is None:
            self._unread += 1
            self._unread_tps.add(tp)
        else:
            self._judged += 1
            if position is None:
                self._lost.append((tp, value, offset, process, op.op_id))
                self.lost_at.append(self.at)
        if acks == -1 and offset is not None:
            self._acked(process, tp, value, offset, records, position)

    def _acked(
        self,
        process: str,
        tp: TopicPartition,
        value: str,
        offset: int,
        records: FinalRecords | None,
        position: int | None,
    ) -> None:
        """`offsets_monotonic` and `reordering` for one acks=all acknowledgement (of the
        record at `position` of `records`, the final read's, when it holds it)."""
        key = (process, tp)
        last = self._last_ack.get(key)
        self._last_ack[key] = (value, offset)
        if last is not None:
            self._monotonic_checked += 1
            if offset <= last[1]:
                self._monotonic[key].append(
                    _violation(
                        tp,
                        value,
                        (last[1], offset),
                        process,
                        f"acked at {offset} after {last[0]!r} was acked at {last[1]}",
                    )
                )
        if position is None:
            return
        assert records is not None
        offsets = records.more.get(value) if records.more else None
        if offsets is None:  # one offset: where it is, acked there or not
            placed = records.offset_at(position)
        else:
            placed = offset if offset in offsets else min(offsets)
        before = self._last_placed.get(key)
        self._last_placed[key] = (value, placed)
        if before is None:
            return
        self._reorder_checked += 1
        if before[1] >= placed:
            self._reordered[key].append(
                _violation(
                    tp,
                    value,
                    (before[1], placed),
                    process,
                    f"acked after {before[0]!r} but read at {placed}, not after {before[1]}",
                )
            )

    def poll(self, op: HistoryOp) -> None:
        """Take the completion `op` of a poll that returned (`ok`)."""
        tp = self._tp(op)
        records = self.final.partitions.get(tp)
        judged = records is not None and op.time_ns < self.final.started_ns
        read = op.records or ()
        self._reads += len(read)
        if judged:
            self._vanished_checked += len(read)
        dense = records.dense_values() if records is not None else None
        for offset, value in read:
            if dense is not None:  # value_at, inline: once per record read
                now = dense[offset] if 0 <= offset < len(dense) else None
            else:
                now = records.value_at(offset) if records is not None else None
            if now != value:
                self._deviant[(tp, value)].add(offset)
                if records is not None and value not in records.where:
                    self._polled_absent[(tp, value)] = (offset, f"{op.process}#{op.op_id}")
            if judged and now != value and (tp, offset) not in self._vanished:
                holds = "nothing" if now is None else repr(now)
                self._vanished[(tp, offset)] = _violation(
                    tp,
                    value,
                    (offset,),
                    op.process,
                    f"read by a poll; the final read holds {holds} there",
                )

    # -- the results -------------------------------------------------------------------

    def results(self) -> tuple[InvariantResult, ...]:
        """Each check's result, in `rundir.checker.checks.CHECKS` order."""
        return (
            self._lost_writes(),
            self._duplicates(),
            self._read_values("failed_writes_read"),
            self._read_values("unexpected_values"),
            InvariantResult(
                "vanished_reads",
                tuple(self._vanished[k] for k in sorted(self._vanished)),
                self._vanished_checked,
            ),
            InvariantResult(
                "reordering",
                tuple(v for k in sorted(self._reordered) for v in self._reordered[k]),
                self._reorder_checked,
            ),
            InvariantResult(
                "offsets_monotonic",
                tuple(v for k in sorted(self._monotonic) for v in self._monotonic[k]),
                self._monotonic_checked,
            ),
        )

    def unread_partitions(self) -> tuple[TopicPartition, ...]:
        """Partitions with acks=all writes acked before the final read it did not cover."""
        return tuple(sorted(self._unread_tps))

    def _lost_writes(self) -> InvariantResult:
        anomalies = []
        for tp, value, offset, process, op_id in self._lost:
            seen = self._polled_absent.get((tp, value))
            earlier = f"; a poll had read it at offset {seen[0]}" if seen else ""
            ack = f"{process}#{op_id}"
            anomalies.append(
                _violation(
                    tp,
                    value,
                    (offset,) if offset is not None else (),
                    process,
                    f"acknowledged, absent from the final read{earlier}",
                    (ack, seen[1]) if seen else (ack,),
                )
            )
        note = lost_writes_note(self._late, self._unsafe, self._unread)
        return InvariantResult("lost_writes", tuple(anomalies), self._judged, note)

    def not_judged(self) -> tuple[int, int, int]:
        """The acknowledgements `lost_writes` left out: after the final read began, with
        acks other than all, on partitions the final read did not cover."""
        return self._late, self._unsafe, self._unread

    def _duplicates(self) -> InvariantResult:
        anomalies = []
        checked = 0
        for tp, records in sorted(self.final.partitions.items()):
            checked += len(records.where)
            for value in sorted(records.more, key=records.where.__getitem__):
                offsets = sorted(set(records.more[value]))
                allowance = self._multi_allowance.get((tp, value), 0)
                if 0 < allowance < len(offsets):
                    anomalies.append(
                        _violation(
                            tp,
                            value,
                            tuple(offsets),
                            None,
                            f"at {len(offsets)} offsets, may be written {allowance}x",
                        )
                    )
        return InvariantResult("duplicates", tuple(anomalies), checked)

    def _read_values(self, name: str) -> InvariantResult:
        """`failed_writes_read` (values read whose every send definitely failed) or
        `unexpected_values` (values read that were never sent to their partition)."""
        wanted, absent_ok = (_FAILED, False) if name == "failed_writes_read" else (_UNSENT, None)
        found: dict[_Key, set[int]] = {}
        for tp, records in self.final.partitions.items():
            for position in _positions(self._codes[tp], wanted):
                value = records[position][1]
                if records.where[value] == position:  # a value's first record holds its code
                    found[(tp, value)] = set(records.offsets_of(value) or ())
        for key, offsets in self._deviant.items():
            tp, value = key
            held = self.final.partitions.get(tp)
            if held is not None and value in held.where:
                if key in found:
                    found[key] |= offsets
            elif self._absent_sent.get(key) is absent_ok:
                found[key] = set(offsets)
        checked = self._reads + sum(len(r) for r in self.final.partitions.values())
        detail = (
            "read, but its send definitely failed"
            if name == "failed_writes_read"
            else "read, but never sent to this partition"
        )
        anomalies = tuple(
            _violation(tp, value, tuple(sorted(found[(tp, value)])), None, detail)
            for tp, value in sorted(found)
        )
        return InvariantResult(name, anomalies, checked)


def lost_writes_note(late: int, unsafe: int, unread: int) -> str:
    """What `lost_writes` left out, counted by `ChecksFold.not_judged`."""
    return (
        f"not judged: {late} acked after the final read began, {unsafe} "
        f"acks!=all, {unread} on unread partitions"
    )


def _positions(codes: bytearray, code: int) -> Iterator[int]:
    """The positions in `codes` holding `code`."""
    i = codes.find(code)
    while i >= 0:
        yield i
        i = codes.find(code, i + 1)
