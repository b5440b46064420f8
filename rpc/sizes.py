"""Encoded sizes of the control requests, computed from `rpc.messages` by protobuf's wire
rules (proto3, `proto/testbed_rpc/control.proto`) without building a protobuf message, so
that the controller can split requests by size without importing protobuf. Pure; any
thread.

LeaderAndIsr and UpdateMetadata carry their partition states in columns (`rpc.columns`),
so their size is counted from the same layout the wire encodes (`*_states_size`, a few
passes in C over each column: tens of milliseconds for 100,000 states). A StopReplica
lists one entry per partition: `stop_replica_entry_size` is what one adds (tag, length
prefix and body) and `stop_replica_entries_bound` a cheap upper bound of the sum for a
whole sequence. A unit test holds every function to protobuf's own `ByteSize()`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any

from rpc import columns
from rpc import messages as m

#: An int32 or int64 field at its largest: a one-byte tag and a ten-byte varint (every
#: negative number takes ten).
_MAX_SCALAR = 11


def varint_size(value: int) -> int:
    """Bytes of `value` as a protobuf varint (negative int32/int64 take ten)."""
    if value < 0:
        return 10
    if value < 0x80:
        return 1
    if value < 0x4000:
        return 2
    if value < 0x200000:
        return 3
    if value < 0x10000000:
        return 4
    return (value.bit_length() + 6) // 7


def _scalar(value: int) -> int:
    """An int32/int64/bool field with a one-byte tag (proto3 omits zero)."""
    return 0 if value == 0 else 1 + varint_size(value)


def _utf8_length(text: str) -> int:
    """Bytes of `text` in UTF-8."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _text(value: str) -> int:
    """A string field with a one-byte tag (proto3 omits the empty string)."""
    if not value:
        return 0
    n = _utf8_length(value)
    return 1 + varint_size(n) + n


def _packed(values: Sequence[int]) -> int:
    """A packed repeated int32 (or bool) field with a one-byte tag, counted by passes in C
    (a column of 100,000 values as cheaply as a replica list): each value takes one byte,
    plus one for each 7-bit step it passes (a negative one takes ten)."""
    if not values:
        return 0
    n = len(values)
    if min(values) < 0:
        negative = n - sum(map((0).__le__, values))
        n += 9 * negative
    largest = max(values)
    for step in _VARINT_STEPS:
        if largest < step:
            break
        n += sum(map(step.__le__, values))
    return 1 + varint_size(n) + n


#: The values at which an int32 varint takes one more byte.
_VARINT_STEPS = (1 << 7, 1 << 14, 1 << 21, 1 << 28)


def _framed(body: int) -> int:
    """An embedded message (or repeated entry) with a one-byte tag: tag, length, body."""
    return 1 + varint_size(body) + body


def header_size(header: m.ControlHeader) -> int:
    """The `header` field of a control request (always present)."""
    body = (
        _scalar(header.controller_id)
        + _scalar(header.controller_epoch)
        + _scalar(header.broker_epoch)
    )
    return _framed(body)


def _states_size(states: Sequence[Any], shape: columns.Shape) -> int:
    """The `topic_names`, `replica_lists` and `states` fields of a request holding
    `states`."""
    if not states:
        return 0
    layout = columns.lay_out(states, shape)
    names = sum(1 + varint_size(n) + n for n in map(_utf8_length, layout.topics))
    lists = sum(_framed(_packed(ids)) for ids in layout.lists)
    block = sum(_packed(column) for column in layout.columns.values() if column is not None)
    return names + lists + _framed(block)


def leader_and_isr_states_size(states: Sequence[m.LeaderAndIsrPartitionState]) -> int:
    """What the partition states of a LeaderAndIsr add to it."""
    return _states_size(states, columns.LEADER_AND_ISR)


def update_metadata_states_size(states: Sequence[m.UpdateMetadataPartitionState]) -> int:
    """What the partition states of an UpdateMetadata add to it."""
    return _states_size(states, columns.UPDATE_METADATA)


def live_leaders_size(leaders: Iterable[m.LiveLeader]) -> int:
    """The `live_leaders` entries of a LeaderAndIsr."""
    return sum(_framed(_scalar(x.broker_id) + _text(x.host) + _scalar(x.port)) for x in leaders)


def live_brokers_size(brokers: Iterable[m.LiveBroker]) -> int:
    """The `live_brokers` entries of an UpdateMetadata."""
    total = 0
    for b in brokers:
        endpoints = sum(
            _framed(
                _text(e.listener) + _text(e.host) + _scalar(e.port) + _text(e.security_protocol)
            )
            for e in b.endpoints
        )
        total += _framed(_scalar(b.id) + endpoints + _text(b.rack or ""))
    return total


def stop_replica_entry_size(s: m.StopReplicaPartitionState) -> int:
    """One `partition_states` entry of a StopReplica."""
    body = (
        _text(s.topic)
        + _scalar(s.partition)
        + _scalar(s.leader_epoch)
        + (2 if s.delete_partition else 0)
    )
    return _framed(body)


def leader_and_isr_size(r: m.LeaderAndIsrRequest) -> int:
    """The encoded size of a LeaderAndIsr request."""
    return (
        header_size(r.header)
        + leader_and_isr_states_size(r.partition_states)
        + live_leaders_size(r.live_leaders)
    )


def update_metadata_size(r: m.UpdateMetadataRequest) -> int:
    """The encoded size of an UpdateMetadata request."""
    return (
        header_size(r.header)
        + update_metadata_states_size(r.partition_states)
        + live_brokers_size(r.live_brokers)
    )


def stop_replica_size(r: m.StopReplicaRequest) -> int:
    """The encoded size of a StopReplica request."""
    return header_size(r.header) + sum(stop_replica_entry_size(s) for s in r.partition_states)


# -- bounds of whole sequences of states -------------------------------------------------


def _scalar_column(column: Sequence[int]) -> tuple[int, int]:
    """A bound of one int field's size summed over every entry (each non-negative value at
    the largest one's size, each negative one at ten bytes), and of its size in any one."""
    largest = 1 + varint_size(max(max(column), 0))
    if min(column) >= 0:
        return largest * len(column), largest
    negative = len(column) - sum(map((0).__le__, column))
    return negative * _MAX_SCALAR + (len(column) - negative) * largest, _MAX_SCALAR


def _column_total(column: Sequence[object], size: Callable[[Any], int]) -> tuple[int, int]:
    """The exact sum of `size` over a column with few distinct values (topics), and the
    largest one."""
    counts = Counter(column)
    sizes_of = {value: size(value) for value in counts}
    return sum(sizes_of[v] * n for v, n in counts.items()), max(sizes_of.values())


def _bounded(states: Sequence[object], ints: tuple[str, ...], flags: int) -> int:
    """A bound of the summed entry sizes of `states`: the exact text field (a few topics
    repeat), each int field at its largest value, and every entry framed as its largest
    body would be."""
    if not states:
        return 0
    body = 0
    widest = 0
    total, largest = _column_total(list(map(attrgetter("topic"), states)), _text)
    body, widest = body + total, widest + largest
    for name in ints:
        column = list(map(attrgetter(name), states))
        total, largest = _scalar_column(column)
        body, widest = body + total, widest + largest
    body += 2 * flags
    widest += 2 if flags else 0
    return body + (1 + varint_size(widest)) * len(states)


def stop_replica_entries_bound(states: Sequence[m.StopReplicaPartitionState]) -> int:
    """At least the sum of `stop_replica_entry_size` over `states`."""
    deletes = sum(map(attrgetter("delete_partition"), states))
    return _bounded(states, ("partition", "leader_epoch"), deletes)
