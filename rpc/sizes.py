"""Encoded sizes of the control requests, computed from `rpc.messages` by protobuf's wire
rules (proto3, `proto/testbed_rpc/control.proto`) without building a protobuf message, so
that the controller can split requests by size without importing protobuf. Pure; any
thread.

Each `*_entry_size` is what one partition state adds to its request (tag, length prefix
and body), and `*_base_size` the rest of the request, so a request's size is its base plus
the sum of its entries. Two costs: `*_entries_bound` is an upper bound of the sum for a
whole sequence of states, a few passes in C over its columns (about a third of the exact
count's time), used to skip the exact count for requests below a limit. A unit test holds
every function to protobuf's own `ByteSize()`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any

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


def _text(value: str) -> int:
    """A string field with a one-byte tag (proto3 omits the empty string)."""
    if not value:
        return 0
    n = len(value) if value.isascii() else len(value.encode("utf-8"))
    return 1 + varint_size(n) + n


def _packed(values: tuple[int, ...]) -> int:
    """A packed repeated int32 field with a one-byte tag."""
    if not values:
        return 0
    if min(values) >= 0 and max(values) < 0x80:  # broker ids: one byte each
        n = len(values)
    else:
        n = sum(varint_size(v) for v in values)
    return 1 + varint_size(n) + n


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


def _shared_state_fields(
    s: m.LeaderAndIsrPartitionState | m.UpdateMetadataPartitionState,
) -> int:
    """Fields 1-8, which LeaderAndIsr and UpdateMetadata partition states share."""
    return (
        _text(s.topic)
        + _scalar(s.partition)
        + _scalar(s.controller_epoch)
        + _scalar(s.leader)
        + _scalar(s.leader_epoch)
        + _packed(s.isr)
        + _scalar(s.zk_version)
        + _packed(s.replicas)
    )


def leader_and_isr_entry_size(s: m.LeaderAndIsrPartitionState) -> int:
    """One `partition_states` entry of a LeaderAndIsr."""
    body = (
        _shared_state_fields(s)
        + _packed(s.adding_replicas)
        + _packed(s.removing_replicas)
        + (2 if s.is_new else 0)
    )
    return _framed(body)


def live_leaders_size(leaders: Iterable[m.LiveLeader]) -> int:
    """The `live_leaders` entries of a LeaderAndIsr."""
    return sum(_framed(_scalar(x.broker_id) + _text(x.host) + _scalar(x.port)) for x in leaders)


def update_metadata_entry_size(s: m.UpdateMetadataPartitionState) -> int:
    """One `partition_states` entry of an UpdateMetadata."""
    return _framed(_shared_state_fields(s) + _packed(s.offline_replicas))


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
        + sum(leader_and_isr_entry_size(s) for s in r.partition_states)
        + live_leaders_size(r.live_leaders)
    )


def update_metadata_size(r: m.UpdateMetadataRequest) -> int:
    """The encoded size of an UpdateMetadata request."""
    return (
        header_size(r.header)
        + sum(update_metadata_entry_size(s) for s in r.partition_states)
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
    """The exact sum of `size` over a column with few distinct values (topics, replica
    lists), and the largest one."""
    counts = Counter(column)
    sizes_of = {value: size(value) for value in counts}
    return sum(sizes_of[v] * n for v, n in counts.items()), max(sizes_of.values())


def _bounded(
    states: Sequence[object], ints: tuple[str, ...], lists: tuple[str, ...], flags: int
) -> int:
    """A bound of the summed entry sizes of `states`: exact text and list fields (they
    repeat: a few topics, a few replica lists), each int field at its largest value, and
    every entry framed as its largest body would be."""
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
    for name in lists:
        column = list(map(attrgetter(name), states))
        if any(column):
            total, largest = _column_total(column, _packed)
            body, widest = body + total, widest + largest
    body += 2 * flags
    widest += 2 if flags else 0
    return body + (1 + varint_size(widest)) * len(states)


def leader_and_isr_entries_bound(states: Sequence[m.LeaderAndIsrPartitionState]) -> int:
    """At least the sum of `leader_and_isr_entry_size` over `states`."""
    news = sum(map(attrgetter("is_new"), states))
    return _bounded(
        states,
        ("partition", "controller_epoch", "leader", "leader_epoch", "zk_version"),
        ("isr", "replicas", "adding_replicas", "removing_replicas"),
        news,
    )


def update_metadata_entries_bound(states: Sequence[m.UpdateMetadataPartitionState]) -> int:
    """At least the sum of `update_metadata_entry_size` over `states`."""
    return _bounded(
        states,
        ("partition", "controller_epoch", "leader", "leader_epoch", "zk_version"),
        ("isr", "replicas", "offline_replicas"),
        0,
    )


def stop_replica_entries_bound(states: Sequence[m.StopReplicaPartitionState]) -> int:
    """At least the sum of `stop_replica_entry_size` over `states`."""
    deletes = sum(map(attrgetter("delete_partition"), states))
    return _bounded(states, ("partition", "leader_epoch"), (), deletes)
