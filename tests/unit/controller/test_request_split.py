"""Control requests under gRPC's message limit: `controller.request_split` cuts a request
whose encoded size would pass `rpc.limits.CONTROL_REQUEST_MAX_BYTES` into parts, and
`RequestBatch` sends every part. Sizes are measured with protobuf's own `ByteSize()`.

Setup for the large cases: one live broker (1) and 100,000 partitions it leads, each the
only partition of a topic with a long name, so that one LeaderAndIsr would pass gRPC's
default 4 MiB (partition states travel in columns per topic: every topic name is on the
wire once, and here each partition brings its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.context import ControllerContext
from controller.request_batch import RequestBatch
from controller.request_split import split_by_size
from controller.testing.brokers import RecordingSend, make_broker
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from rpc import messages as m
from rpc import strategies as rt
from rpc import wire
from rpc.limits import CONTROL_REQUEST_MAX_BYTES, GRPC_DEFAULT_MAX_MESSAGE_BYTES
from zkdata.model import Broker, ReplicaAssignment

PARTITIONS = 100_000
PER_TOPIC = 1
HEADER = m.ControlHeader(9, 5, 101)
TO_PB: dict[type, Callable[[Any], Message]] = {
    m.LeaderAndIsrRequest: wire.leader_and_isr_request_to_pb,
    m.UpdateMetadataRequest: wire.update_metadata_request_to_pb,
    m.StopReplicaRequest: wire.stop_replica_request_to_pb,
}
R = TypeVar("R", m.LeaderAndIsrRequest, m.UpdateMetadataRequest)


def topic(i: int) -> str:
    return f"orders-with-a-name-long-enough-to-matter-{i // PER_TOPIC:06d}"


def lai_state(i: int) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState(topic(i), i % PER_TOPIC, 5, 1, 3, (1, 2, 3), 7, (1, 2, 3))


@pytest.fixture(scope="module")
def big_request() -> m.LeaderAndIsrRequest:
    leaders = (m.LiveLeader(1, "broker1", 9092),)
    return m.LeaderAndIsrRequest(HEADER, tuple(lai_state(i) for i in range(PARTITIONS)), leaders)


def test_a_100k_partition_leader_and_isr_does_not_fit_grpcs_default(
    big_request: m.LeaderAndIsrRequest,
) -> None:
    """The measurement that makes the split necessary: 5,883,555 bytes with a topic of a
    long name per partition (888,257 for 100 topics of 1,000 partitions named like
    `topic-99`, docs/security.md)."""
    size = wire.leader_and_isr_request_to_pb(big_request).ByteSize()
    assert size == 5_883_555
    assert size > GRPC_DEFAULT_MAX_MESSAGE_BYTES


def test_a_100k_partition_leader_and_isr_splits_into_parts_under_the_limit(
    big_request: m.LeaderAndIsrRequest,
) -> None:
    parts = split_by_size(big_request)
    assert len(parts) >= 2
    for part in parts:
        assert isinstance(part, m.LeaderAndIsrRequest)
        assert part.header == HEADER
        assert part.live_leaders == big_request.live_leaders
        assert wire.leader_and_isr_request_to_pb(part).ByteSize() <= CONTROL_REQUEST_MAX_BYTES
    together = tuple(s for part in parts for s in part.partition_states)
    assert together == big_request.partition_states


def _told_every_partition(
    brokers: list[Broker],
) -> tuple[ControllerContext, RecordingSend, RequestBatch]:
    """A context of `PARTITIONS` partitions replicated on every one of `brokers` and led by
    the first, and a batch that tells every broker every partition's leadership (one call
    per partition naming all of them), not yet sent."""
    ids = tuple(b.id for b in brokers)
    ctx = ControllerContext()
    ctx.epoch = 5
    ctx.set_live_brokers(brokers)
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(ids[0], 3, ids, 7), 5)
    assignment = ReplicaAssignment(ids)
    for t in range(PARTITIONS // PER_TOPIC):
        ctx.add_topic(topic(t * PER_TOPIC), {p: assignment for p in range(PER_TOPIC)})
    send = RecordingSend()
    batch = RequestBatch(9, ctx, send)
    batch.new_batch()
    for i in range(PARTITIONS):
        tp = lai_state(i).topic_partition
        ctx.set_leadership(tp, leadership)
        batch.add_leader_and_isr(ids, tp, leadership, assignment, is_new=False)
    return ctx, send, batch


def test_a_batch_for_100k_partitions_sends_every_request_under_the_limit() -> None:
    """The whole path: RequestBatch → split → send; LeaderAndIsr and UpdateMetadata each
    arrive in parts, every part fits, and together they list every partition once."""
    _, send, batch = _told_every_partition([make_broker(1)])
    batch.send()

    lai = [r for _, r in send.of_type(m.LeaderAndIsrRequest)]
    update = [r for _, r in send.of_type(m.UpdateMetadataRequest)]
    assert len(lai) >= 2
    assert len(update) >= 2
    for request in lai:
        assert wire.leader_and_isr_request_to_pb(request).ByteSize() <= CONTROL_REQUEST_MAX_BYTES
    for part in update:
        assert wire.update_metadata_request_to_pb(part).ByteSize() <= CONTROL_REQUEST_MAX_BYTES
        assert part.live_brokers == update[0].live_brokers
    for requests in (lai, update):
        listed = [s.topic_partition for r in requests for s in r.partition_states]
        assert len(listed) == len(set(listed)) == PARTITIONS
    assert len(send.callbacks) == len(send.sent)


def test_a_small_request_goes_out_whole() -> None:
    request = m.LeaderAndIsrRequest(HEADER, tuple(lai_state(i) for i in range(10)))
    assert split_by_size(request) == [request]


def test_each_part_carries_the_live_leaders_of_its_own_partitions() -> None:
    states = tuple(
        m.LeaderAndIsrPartitionState("t", i, 5, 1 + i % 2, 3, (1, 2), 7, (1, 2)) for i in range(4)
    )
    leaders = (m.LiveLeader(1, "b1", 1), m.LiveLeader(2, "b2", 2), m.LiveLeader(3, "b3", 3))
    request = m.LeaderAndIsrRequest(HEADER, states, leaders)
    one_state = wire.leader_and_isr_request_to_pb(
        m.LeaderAndIsrRequest(HEADER, states[:1], leaders)
    ).ByteSize()
    parts = split_by_size(request, max_bytes=one_state)
    assert [len(p.partition_states) for p in parts] == [1, 1, 1, 1]
    for part in parts:
        assert isinstance(part, m.LeaderAndIsrRequest)
        (state,) = part.partition_states
        assert [x.broker_id for x in part.live_leaders] == [state.leader]


def test_a_state_larger_than_the_limit_goes_alone() -> None:
    states = tuple(m.StopReplicaPartitionState("t" * 200, i, 1, False) for i in range(3))
    parts = split_by_size(m.StopReplicaRequest(HEADER, states), max_bytes=10)
    assert [len(p.partition_states) for p in parts] == [1, 1, 1]


@settings(max_examples=100, deadline=None)
@given(
    request=st.one_of(
        rt.leader_and_isr_requests(), rt.update_metadata_requests, rt.stop_replica_requests
    ),
    max_bytes=st.integers(1, 400),
)
def test_parts_fit_keep_the_header_and_list_every_state_in_order(
    request: m.LeaderAndIsrRequest | m.UpdateMetadataRequest | m.StopReplicaRequest,
    max_bytes: int,
) -> None:
    """Any request, any limit: parts of the request's kind and header, its states in order,
    and each part within the limit unless it holds a single state."""
    parts = split_by_size(request, max_bytes)
    assert all(type(p) is type(request) and p.header == request.header for p in parts)
    assert tuple(s for p in parts for s in p.partition_states) == request.partition_states
    for part in parts:
        size = TO_PB[type(part)](part).ByteSize()
        assert len(part.partition_states) <= 1 or size <= max_bytes


def _parts_by_broker(
    ctx: ControllerContext, send: RecordingSend, kind: type[R]
) -> dict[int, list[R]]:
    """The parts of `kind` each broker was sent, each checked to carry the broker's own
    epoch and to fit the limit."""
    by_broker: dict[int, list[R]] = {}
    for broker_id, part in send.of_type(kind):
        by_broker.setdefault(broker_id, []).append(part)
        assert part.header.broker_epoch == ctx.broker_epoch(broker_id)
        assert TO_PB[kind](part).ByteSize() <= CONTROL_REQUEST_MAX_BYTES
    return by_broker


def test_an_update_metadata_is_cut_once_and_every_broker_gets_the_same_parts() -> None:
    """The UpdateMetadata of a round names the same states for every broker: each broker
    gets the same runs of states, under its own header, and each part fits even for the
    broker whose epoch encodes longest."""
    ctx = ControllerContext()
    ctx.epoch = 5
    ctx.set_live_brokers([make_broker(1), make_broker(2, epoch=2**40), make_broker(3)])
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3), 7), 5)
    for t in range(PARTITIONS // PER_TOPIC):
        partitions = {p: ReplicaAssignment((1, 2, 3)) for p in range(PER_TOPIC)}
        ctx.add_topic(topic(t * PER_TOPIC), partitions)
        for p in partitions:
            ctx.set_leadership(lai_state(t * PER_TOPIC + p).topic_partition, leadership)
    send = RecordingSend()
    batch = RequestBatch(9, ctx, send)
    batch.new_batch()
    batch.add_update_metadata([1, 2, 3], ctx.all_partitions())
    batch.send()

    by_broker = _parts_by_broker(ctx, send, m.UpdateMetadataRequest)
    assert sorted(by_broker) == [1, 2, 3]
    runs = [[p.partition_states for p in parts] for parts in by_broker.values()]
    assert len(runs[0]) >= 2
    assert runs[0] == runs[1] == runs[2]
    assert sum(len(r) for r in runs[0]) == PARTITIONS


def test_a_leader_and_isr_of_the_same_states_is_cut_once_for_the_brokers_told_them() -> None:
    """Brokers told the same states share one tuple of them, cut once (so the wire encodes
    it once): the same parts under each broker's own header, each fitting even for the
    broker whose epoch encodes longest. A broker told anything else gets its own."""
    brokers = [make_broker(1), make_broker(2, epoch=2**40), make_broker(3)]
    ctx, send, batch = _told_every_partition(brokers)
    renamed = lai_state(PARTITIONS - 1).topic_partition
    leadership = ctx.leadership(renamed)
    assert leadership is not None
    batch.add_leader_and_isr([3], renamed, leadership, ctx.assignment(renamed), is_new=True)
    batch.send()

    by_broker = _parts_by_broker(ctx, send, m.LeaderAndIsrRequest)
    one, two, three = (by_broker[b] for b in (1, 2, 3))
    assert len(one) == len(two) >= 2
    assert all(a.partition_states is b.partition_states for a, b in zip(one, two, strict=True))
    assert [s.topic_partition for p in three for s in p.partition_states if s.is_new] == [renamed]
    assert not any(s.is_new for p in one for s in p.partition_states)
    for parts in (one, three):
        assert sum(len(p.partition_states) for p in parts) == PARTITIONS


def test_brokers_told_one_replica_at_a_time_share_the_states_too() -> None:
    """The replica state machine adds one broker's replica at a time: the same leadership
    and assignment give the same state object, so those brokers' requests are cut and
    encoded once too. A newer leadership of a partition in the same batch makes its own
    state, for the brokers told it."""
    ctx = ControllerContext()
    ctx.epoch = 5
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    assignment = ReplicaAssignment((1, 2))
    ctx.add_topic("t", {p: assignment for p in range(200)})
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2), 7), 5)
    newer = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1,), 8), 5)
    send = RecordingSend()
    batch = RequestBatch(9, ctx, send)
    batch.new_batch()
    tps = [TopicPartition("t", p) for p in range(200)]
    for broker_id in (1, 2):
        for tp in tps:
            ctx.set_leadership(tp, leadership)
            batch.add_leader_and_isr([broker_id], tp, leadership, assignment, is_new=False)
    batch.send()
    (_, one), (_, two) = send.of_type(m.LeaderAndIsrRequest)
    assert one.partition_states is two.partition_states

    batch.new_batch()
    batch.add_leader_and_isr([1], tps[0], leadership, assignment, is_new=False)
    batch.add_leader_and_isr([2], tps[0], newer, assignment, is_new=False)
    batch.send()
    _, _, (_, first), (_, second) = send.of_type(m.LeaderAndIsrRequest)
    assert [s.leader_epoch for s in first.partition_states] == [3]
    assert [s.leader_epoch for s in second.partition_states] == [4]
