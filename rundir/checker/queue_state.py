"""What the queue pass (`rundir.checker.queue_fold`) keeps per partition, held compact: no
object per value or per offset, but columns of machine integers (`array`) indexed by a
value's *slot* (its number in the partition, in the order values were first mentioned)
or by an offset, and operations named by an integer code (`Labels`) rather than by their
`"<process>#<op_id>"` text. Pure; one thread (the caller's).

Per value, a partition keeps: the value itself (once, as the key of its slot; a value
that the final read, given beforehand, holds is found by its position there instead, in
4 bytes, and kept as the final read's string), how many
sends it had and what they may have written, its acknowledged send (which, when, with
which acks, at which offset), its first read and how many polls returned it, whether the
final read holds it, and the first offset it was seen at (further offsets, and a
definitely failed send, in small dicts: a clean history has none). Per offset: the slot of
the first value seen there and the operation that showed it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "ACK_LOOSE",
    "NONE",
    "OP_LIMIT",
    "FinalValues",
    "Found",
    "Gap",
    "Labels",
    "PartitionState",
]

#: A column's "no value" (an offset or a time that was never given).
NONE = -(1 << 63)
#: `PartitionState.ack_flags`: the acknowledged send had acks other than all (-1) ...
ACK_LOOSE = 1
#: ... and an acknowledgement of the value gave an offset.
_ACK_AT = 2
#: The largest op id packed into a code with its process (beyond: a label of its own).
_OP_BITS = 40
#: The op ids below it are packed into a code with their process (`Labels.bases`).
OP_LIMIT = 1 << _OP_BITS
_LABELED = 1 << 60


class Labels:
    """Integer codes for operation labels: `(process number << 40) | op_id`, or a code of
    its own for any other label (a final read given apart, an op id out of range)."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self._processes: list[str] = []
        self._others: list[str] = []
        #: each process named so far whose codes are packed, to `number << 40`: the code
        #: of an op id below `OP_LIMIT` is that `| op_id` (`of`, inline for a hot caller)
        self.bases: dict[str, int] = {}

    def of(self, process: str, op_id: int) -> int:
        """The code of `"<process>#<op_id>"`."""
        number = self._numbers.get(process)
        if number is None:
            number = self._numbers[process] = len(self._processes)
            self._processes.append(process)
            if number < 1 << 19:
                self.bases[process] = number << _OP_BITS
        if 0 <= op_id < 1 << _OP_BITS and number < 1 << 19:
            return (number << _OP_BITS) | op_id
        return self.named(f"{process}#{op_id}")

    def named(self, label: str) -> int:
        """A code for the label `label` itself."""
        self._others.append(label)
        return _LABELED + len(self._others) - 1

    def text(self, code: int) -> str:
        """The label a code stands for."""
        if code >= _LABELED:
            return self._others[code - _LABELED]
        return f"{self._processes[code >> _OP_BITS]}#{code & ((1 << _OP_BITS) - 1)}"


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


class FinalValues(Protocol):
    """A partition's records known before the pass (the final read's
    `rundir.checker.final_index.FinalRecords`): each value's first position, and the
    value at a position."""

    @property
    def where(self) -> Mapping[str, int]:
        """Each value held, to the position of its first record."""
        ...

    def __len__(self) -> int: ...

    def value_of(self, position: int) -> str:
        """The value at `position`."""
        ...


def _column() -> array[int]:
    return array("q")


@dataclass
class PartitionState:
    """Everything the pass keeps about one partition (see the module docstring)."""

    slots: dict[str, int] = field(default_factory=dict)  # value -> slot, when not in `final`
    names: list[str] = field(default_factory=list)  # slot -> value
    sent: array[int] = field(default_factory=_column)  # sends of the value, open ones too
    allowance: array[int] = field(default_factory=_column)  # how often they may write it
    ack: array[int] = field(default_factory=_column)  # its acknowledged send's code, or -1
    ack_ns: array[int] = field(default_factory=_column)
    ack_flags: bytearray = field(default_factory=bytearray)  # ACK_LOOSE, _ACK_AT
    #: the offset the last acknowledgement giving one gave, where not the first offset
    #: the value was seen at (`acked_at`; a clean history has none)
    ack_elsewhere: dict[int, int] = field(default_factory=dict)
    first_read: array[int] = field(default_factory=_column)  # code of the first poll, or -1
    reads: array[int] = field(default_factory=_column)  # polls that returned it
    offset: array[int] = field(default_factory=_column)  # first offset seen at, or NONE
    in_final: bytearray = field(default_factory=bytearray)
    more: dict[int, set[int]] = field(default_factory=dict)  # slot -> further offsets
    failed: dict[int, int] = field(default_factory=dict)  # slot -> a failed send's code
    #: offset -> slot of the first value seen there (-1: none) and (code << 1 | loose):
    #: the operation that showed it, and whether that was an acks=1 acknowledgement
    at_slot: array[int] = field(default_factory=_column)
    at_op: array[int] = field(default_factory=_column)
    far: dict[int, tuple[int, int]] = field(default_factory=dict)  # offsets beyond the arrays
    known: int = 0  # offsets seen: what `inconsistent-offsets` judged
    max_read: int = -1
    max_read_op: str = ""
    inconsistent: dict[tuple[int, str], Found] = field(default_factory=dict)
    gaps: list[Gap] = field(default_factory=list)
    found: dict[str, list[Found]] = field(default_factory=dict)  # by anomaly class
    checked: dict[str, int] = field(default_factory=dict)
    #: the records known beforehand (the final read's): a value they hold is found by its
    #: position there (`final_slot`) instead of an entry in `slots`, and kept as their string
    final: FinalValues | None = None
    #: position in `final` -> the slot of the value there (-1: not mentioned yet); 4 bytes
    #: each, as a slot counts values held in memory
    final_slot: array[int] = field(default_factory=lambda: array("i"))

    def __post_init__(self) -> None:
        if self.final is not None and not self.final_slot:
            self.final_slot = array("i", [-1]) * len(self.final)

    def slot(self, value: str) -> int:
        """The slot of `value`, -1 when it has none yet."""
        final = self.final
        if final is not None:
            position = final.where.get(value)
            if position is not None:
                return self.final_slot[position]
        return self.slots.get(value, -1)

    def record(self, value: str) -> int:
        """The slot of `value`, made on first mention."""
        final = self.final  # `slot`, inline, with one lookup: once per send
        position = final.where.get(value) if final is not None else None
        if position is not None:
            assert final is not None
            slot = self.final_slot[position]
            if slot >= 0:
                return slot
            value = final.value_of(position)
            slot = self.final_slot[position] = len(self.names)
        else:
            slot = self.slots.get(value, -1)
            if slot >= 0:
                return slot
            slot = self.slots[value] = len(self.names)
        self.names.append(value)
        if slot == len(self.sent):
            self._grow(slot)
        return slot

    def _grow(self, size: int) -> None:
        """Room in the per-value columns for an eighth more values than `size`, at once
        (not a step per column per value); the slots beyond `names` hold the defaults,
        which every reader of a whole column skips."""
        more = max(16, size >> 3)
        zeros, unset, absent = (
            array("q", [0]) * more,
            array("q", [-1]) * more,
            array("q", [NONE]) * more,
        )
        self.sent.extend(zeros)
        self.allowance.extend(zeros)
        self.reads.extend(zeros)
        self.ack.extend(unset)
        self.first_read.extend(unset)
        self.ack_ns.extend(absent)
        self.ack_flags.extend(bytes(more))
        self.offset.extend(absent)
        self.in_final.extend(bytes(more))

    def acknowledged(self, slot: int, loose: bool) -> None:
        """The value of `slot` was acknowledged, with acks other than all when `loose`."""
        self.ack_flags[slot] = (self.ack_flags[slot] & _ACK_AT) | loose

    def acknowledged_at(self, slot: int, offset: int, loose: bool) -> None:
        """The value of `slot` was acknowledged at `offset` (after `seen_at` placed it),
        with acks other than all when `loose`."""
        self.ack_flags[slot] = _ACK_AT | loose
        if offset == self.offset[slot]:
            if self.ack_elsewhere:
                self.ack_elsewhere.pop(slot, None)
        else:
            self.ack_elsewhere[slot] = offset

    def ack_next(self, offset: int, slot: int, op: int) -> bool:
        """`seen_at` for an acknowledgement at the log's next offset, where nothing was
        seen yet (the common case, in fewer steps); False, changing nothing, elsewhere."""
        at_slot = self.at_slot
        if offset != len(at_slot) or offset in self.far:
            return False
        at_slot.append(slot)
        self.at_op.append(op)
        self.known += 1
        first = self.offset[slot]
        if first == NONE:
            self.offset[slot] = offset
        elif first != offset:
            self.more.setdefault(slot, set()).add(offset)
        return True

    def acked_at(self, slot: int) -> int:
        """The offset the value's last acknowledgement that gave one gave, or NONE."""
        if not self.ack_flags[slot] & _ACK_AT:
            return NONE
        return self.ack_elsewhere.get(slot, self.offset[slot])

    def offsets(self, slot: int) -> list[int]:
        """The offsets the value of `slot` was seen at, ascending."""
        first = self.offset[slot]
        if first == NONE:
            return []
        return sorted({first, *self.more.get(slot, ())})

    def seen(self, offset: int, value: str) -> int:
        """The slot of `value` when it was first seen at `offset` and nowhere else before
        (so `seen_at` would change nothing), else -1: a record read again."""
        if 0 <= offset < len(self.at_slot):
            slot = self.at_slot[offset]
            if slot >= 0 and self.names[slot] == value and slot not in self.more:
                return slot
        return -1

    def first_at(self, offset: int) -> tuple[int, int] | None:
        """The slot first seen at `offset` and `code << 1 | loose` of what showed it."""
        if 0 <= offset < len(self.at_slot):
            slot = self.at_slot[offset]
            return None if slot < 0 else (slot, self.at_op[offset])
        return self.far.get(offset)

    def held(self, after: int, before: int) -> list[int]:
        """The offsets strictly between `after` and `before` known to hold a record."""
        if before - after - 1 <= self.known:
            return [o for o in range(after + 1, before) if self.first_at(o) is not None]
        inside = [o for o in self.far if after < o < before]
        low, high = max(after + 1, 0), min(before, len(self.at_slot))
        inside.extend(o for o in range(low, high) if self.at_slot[o] >= 0)
        return sorted(inside)

    def _place(self, offset: int, slot: int, op: int) -> None:
        size = len(self.at_slot)
        if offset == size:  # the log's next offset: the common case
            self.at_slot.append(slot)
            self.at_op.append(op)
        elif 0 <= offset < size + 4096 + size:
            if offset >= size:
                grow = array("q", [-1]) * (offset + 1 - size)
                self.at_slot.extend(grow)
                self.at_op.extend(grow)
            self.at_slot[offset], self.at_op[offset] = slot, op
        else:
            self.far[offset] = (slot, op)
        self.known += 1

    def add(self, name: str, found: Found) -> None:
        """Note an anomaly of class `name`."""
        self.found.setdefault(name, []).append(found)

    def count(self, name: str, n: int = 1) -> None:
        """Note that `n` more things were judged for class `name`."""
        self.checked[name] = self.checked.get(name, 0) + n

    def seen_at(
        self,
        offset: int,
        value: str,
        op: int,
        labels: Labels,
        *,
        acked: bool = False,
        loose: bool = False,
    ) -> int:
        """`value` is at `offset` (read there, or acknowledged there when `acked`; `loose`:
        with acks=1, which may lose it and hand the offset out again), shown by the
        operation of code `op`; the value's slot."""
        if 0 <= offset < len(self.at_slot):  # first_at, inline: once per record seen
            at = self.at_slot[offset]
            first = None if at < 0 else (at, self.at_op[offset])
        else:
            first = self.far.get(offset)
        if first is None:
            slot = self.record(value)
            self._place(offset, slot, op << 1 | loose)
        else:
            first_value = self.names[first[0]]
            if first_value != value and (offset, value) not in self.inconsistent:
                how = "acknowledged" if acked else "read"
                shown = labels.text(first[1] >> 1)
                self.inconsistent[(offset, value)] = Found(
                    value,
                    (offset,),
                    None,
                    (shown, labels.text(op)),
                    f"{how} at offset {offset}, which {shown} showed holding {first_value!r}",
                    allowed=loose or bool(first[1] & 1),
                )
            slot = self.record(value)
        if self.offset[slot] == NONE:
            self.offset[slot] = offset
        elif self.offset[slot] != offset:
            self.more.setdefault(slot, set()).add(offset)
        return slot
