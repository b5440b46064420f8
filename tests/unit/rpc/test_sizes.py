"""`rpc.sizes` computes what protobuf's own `ByteSize()` says of every control request,
for any well-typed request (hostile values included), and its cheap bound of StopReplica
entries is a bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rpc import messages as m
from rpc import sizes, wire
from rpc import strategies as rt

PROPERTY = settings(max_examples=200, deadline=None)


@PROPERTY
@given(request=rt.leader_and_isr_requests())
def test_leader_and_isr_size_is_protobufs(request: m.LeaderAndIsrRequest) -> None:
    assert sizes.leader_and_isr_size(request) == (
        wire.leader_and_isr_request_to_pb(request).ByteSize()
    )


@PROPERTY
@given(request=rt.update_metadata_requests)
def test_update_metadata_size_is_protobufs(request: m.UpdateMetadataRequest) -> None:
    assert sizes.update_metadata_size(request) == (
        wire.update_metadata_request_to_pb(request).ByteSize()
    )


@PROPERTY
@given(request=rt.stop_replica_requests)
def test_stop_replica_size_is_protobufs(request: m.StopReplicaRequest) -> None:
    assert sizes.stop_replica_size(request) == wire.stop_replica_request_to_pb(request).ByteSize()
    states = request.partition_states
    assert sum(map(sizes.stop_replica_entry_size, states)) <= sizes.stop_replica_entries_bound(
        states
    )


@PROPERTY
@given(value=st.integers(-(2**63), 2**64 - 1))
def test_varint_size_matches_the_encoding(value: int) -> None:
    """Unsigned values take 7 bits a byte; negative ones are sign-extended to ten bytes."""
    raw = value if value >= 0 else value + 2**64
    expected = max(1, -(-raw.bit_length() // 7))
    assert sizes.varint_size(value) == expected


SIZE_OF: dict[type, tuple[Callable[[Any], int], Callable[[Any], Any]]] = {
    m.LeaderAndIsrRequest: (sizes.leader_and_isr_size, wire.leader_and_isr_request_to_pb),
    m.UpdateMetadataRequest: (sizes.update_metadata_size, wire.update_metadata_request_to_pb),
    m.StopReplicaRequest: (sizes.stop_replica_size, wire.stop_replica_request_to_pb),
}


def test_an_empty_request_is_its_header() -> None:
    for request in (
        m.LeaderAndIsrRequest(m.ControlHeader(0, 0, 0), ()),
        m.UpdateMetadataRequest(m.ControlHeader(1, 2, -1), (), ()),
        m.StopReplicaRequest(m.ControlHeader(1, 2, 2**40), ()),
    ):
        size, to_pb = SIZE_OF[type(request)]
        assert size(request) == to_pb(request).ByteSize()


def test_many_ordinary_states_are_counted_exactly_in_columns() -> None:
    """100,000 partitions of 100 topics, with a few replica lists: counted as protobuf
    encodes them, each partition's share a dozen bytes (the topic and the lists travel
    once), so the request fits gRPC's limit whole."""
    leaders = (1, 2, 3, -1)
    lai = tuple(
        m.LeaderAndIsrPartitionState(
            f"topic-{i // 1000}", i % 1000, 3, leaders[i % 4], 5, (1, 2), 300 + i % 7, (1, 2, 3)
        )
        for i in range(100_000)
    )
    request = m.LeaderAndIsrRequest(m.ControlHeader(1, 3, 7), lai)
    size = sizes.leader_and_isr_size(request)
    assert size == wire.leader_and_isr_request_to_pb(request).ByteSize()
    assert size < 16 * len(lai)
    update = tuple(
        m.UpdateMetadataPartitionState(*s[:8], offline_replicas=(3,) if i % 3 else ())
        for i, s in enumerate(lai)
    )
    um = m.UpdateMetadataRequest(m.ControlHeader(1, 3, 7), update, ())
    size = sizes.update_metadata_size(um)
    assert size == wire.update_metadata_request_to_pb(um).ByteSize()
    assert size < 16 * len(update)
