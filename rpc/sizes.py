"""Encoded sizes of the control requests, computed from `rpc.messages` by protobuf's wire
rules (proto3, `proto/testbed_rpc/control.proto`) without building a protobuf message, so
that the controller can split requests by size without importing protobuf. Pure; any
thread.

Each `*_entry_size` is what one partition state adds to its request (tag, length prefix
and body), and `*_base_size` the rest of the request, so a request's size is its base plus
the sum of its entries. Two costs: `*_entry_bound` is a cheap upper bound (no per-integer
work), used to skip the exact count for requests far below a limit. A unit test holds every
function to protobuf's own `ByteSize()`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rpc import messages as m

#: An int32 or int64 field at its largest: a one-byte tag and a ten-byte varint (every
#: negative number takes ten).
_MAX_SCALAR = 11
#: A length-delimited field's tag and length prefix for bodies under 2 MiB.
_MAX_FRAME = 4


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


def leader_and_isr_entry_bound(s: m.LeaderAndIsrPartitionState) -> int:
    """An upper bound of `leader_and_isr_entry_size`, without per-integer work."""
    ints = len(s.isr) + len(s.replicas) + len(s.adding_replicas) + len(s.removing_replicas)
    return _MAX_FRAME * 6 + 4 * len(s.topic) + 5 * _MAX_SCALAR + 10 * ints + 2


def live_leaders_size(leaders: Iterable[m.LiveLeader]) -> int:
    """The `live_leaders` entries of a LeaderAndIsr."""
    return sum(_framed(_scalar(x.broker_id) + _text(x.host) + _scalar(x.port)) for x in leaders)


def update_metadata_entry_size(s: m.UpdateMetadataPartitionState) -> int:
    """One `partition_states` entry of an UpdateMetadata."""
    return _framed(_shared_state_fields(s) + _packed(s.offline_replicas))


def update_metadata_entry_bound(s: m.UpdateMetadataPartitionState) -> int:
    """An upper bound of `update_metadata_entry_size`, without per-integer work."""
    ints = len(s.isr) + len(s.replicas) + len(s.offline_replicas)
    return _MAX_FRAME * 5 + 4 * len(s.topic) + 5 * _MAX_SCALAR + 10 * ints


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


def stop_replica_entry_bound(s: m.StopReplicaPartitionState) -> int:
    """An upper bound of `stop_replica_entry_size`, without per-integer work."""
    return _MAX_FRAME * 2 + 4 * len(s.topic) + 2 * _MAX_SCALAR + 2


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
