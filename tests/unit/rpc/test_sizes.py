"""`rpc.sizes` computes what protobuf's own `ByteSize()` says of every control request,
for any well-typed request (hostile values included), and its cheap bounds are bounds."""

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
    states = request.partition_states
    exact = sum(map(sizes.leader_and_isr_entry_size, states))
    assert exact <= sizes.leader_and_isr_entries_bound(states)


@PROPERTY
@given(request=rt.update_metadata_requests)
def test_update_metadata_size_is_protobufs(request: m.UpdateMetadataRequest) -> None:
    assert sizes.update_metadata_size(request) == (
        wire.update_metadata_request_to_pb(request).ByteSize()
    )
    states = request.partition_states
    exact = sum(map(sizes.update_metadata_entry_size, states))
    assert exact <= sizes.update_metadata_entries_bound(states)


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


def test_the_bound_of_many_ordinary_states_is_close_to_their_size() -> None:
    """A 100,000-partition request of short topic names fits gRPC's limit whole; the
    bound that lets it skip the exact count must not be so loose that it does not."""
    leaders = (1, 2, 3, -1)
    lai = tuple(
        m.LeaderAndIsrPartitionState(
            f"topic-{i // 1000}", i % 1000, 3, leaders[i % 4], 5, (1, 2), 300 + i % 7, (1, 2, 3)
        )
        for i in range(10_000)
    )
    exact = sum(map(sizes.leader_and_isr_entry_size, lai))
    assert exact <= sizes.leader_and_isr_entries_bound(lai) <= exact * 1.1
    update = tuple(
        m.UpdateMetadataPartitionState(*s[:8], offline_replicas=(3,) if i % 3 else ())
        for i, s in enumerate(lai)
    )
    exact = sum(map(sizes.update_metadata_entry_size, update))
    assert exact <= sizes.update_metadata_entries_bound(update) <= exact * 1.1
