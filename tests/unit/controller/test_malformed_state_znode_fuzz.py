"""Fuzz: the controller never dies of one bad znode. A state znode holding arbitrary bytes,
arbitrary JSON, or a Kafka state with one field made hostile sits next to two valid ones;
the partition state machine runs an offline election for all three after their leader (1)
died. The bytes go through the real codec (`FakePartitionZk.put_bytes`), and the context
holds what decoded, as after a failover.

Validate: no exception leaves the state machine; the two valid partitions get a leader; the
bad one is elected (it decoded) or reported (`malformed_znode` or a failed election); every
request sent encodes to protobuf (`rpc.wire`), as the sender thread will encode it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from controller.context import ControllerContext
from controller.election_strategies import OfflineElection
from controller.partition_state_machine import ElectionStats, PartitionStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc import wire
from zkdata.model import ReplicaAssignment
from zkdata.znodes import TopicPartitionStateZNode

pytestmark = pytest.mark.fuzz

TOPIC = "orders"
BAD, GOOD = TopicPartition(TOPIC, 0), (TopicPartition(TOPIC, 1), TopicPartition(TOPIC, 2))
SAMPLE = {"controller_epoch": 3, "leader": 1, "version": 1, "leader_epoch": 5, "isr": [1, 2, 3]}
EXTREMES: list[Any] = [
    0,
    -1,
    -2,
    2**31 - 1,
    -(2**31),
    2**31,
    2**63 - 1,
    True,
    None,
    "1",
    1.5,
    [],
    {},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


@st.composite
def hostile_sample(draw: st.DrawFn) -> bytes:
    """Kafka's state znode with one field replaced by an extreme, a list of them or any
    JSON, or dropped."""
    value: dict[str, Any] = dict(SAMPLE)
    key = draw(st.sampled_from(sorted(SAMPLE)))
    action = draw(st.sampled_from(["extreme", "list", "json", "drop"]))
    if action == "drop":
        del value[key]
    elif action == "list":
        value[key] = draw(st.lists(st.sampled_from(EXTREMES[:7]), max_size=4))
    else:
        value[key] = draw(st.sampled_from(EXTREMES) if action == "extreme" else json_values)
    return json.dumps(value).encode()


state_bytes = st.one_of(
    hostile_sample(), st.binary(max_size=64), json_values.map(lambda v: json.dumps(v).encode())
)


@given(data=state_bytes)
@example(json.dumps({**SAMPLE, "leader_epoch": 2**31 - 1}).encode())
def test_one_bad_state_znode_never_stops_an_election_of_the_others(data: bytes) -> None:
    ctx = ControllerContext()
    ctx.epoch = 4
    ctx.epoch_zk_version = 12
    ctx.set_live_brokers(make_broker(b) for b in (2, 3))
    ctx.add_topic(TOPIC, {p: ReplicaAssignment((1, 2, 3)) for p in range(3)})
    zk = FakePartitionZk(12)
    valid = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 5, (1, 2, 3), 7), 3)
    for tp in GOOD:
        zk.put_bytes(tp, TopicPartitionStateZNode.encode(valid), 7)
    zk.put_bytes(BAD, data, 7)
    for tp in (BAD, *GOOD):  # loaded as a failover loads them: what decodes
        loaded = zk.state(tp)
        if loaded is not None:
            ctx.set_leadership(tp, loaded)
        ctx.set_partition_state(tp, PartitionState.OFFLINE)
    send = RecordingSend()
    events = RecordingEventLog()
    psm = PartitionStateMachine(ctx, zk, RequestBatch(9, ctx, send), events, False, ElectionStats())

    result = psm.handle_state_changes([BAD, *GOOD], PartitionState.ONLINE, OfflineElection())

    for tp in GOOD:
        assert isinstance(result[tp], LeaderAndIsr)
        assert ctx.partition_state(tp) is PartitionState.ONLINE
    if not isinstance(result[BAD], LeaderAndIsr):
        reported = events.of_kind(EventKind.MALFORMED_ZNODE) + events.of_kind(
            EventKind.LEADER_ELECTION_FAILED
        )
        assert reported
    for _, request in send.sent:
        if isinstance(request, m.LeaderAndIsrRequest):
            wire.leader_and_isr_request_to_pb(request).SerializeToString()
        elif isinstance(request, m.UpdateMetadataRequest):
            wire.update_metadata_request_to_pb(request).SerializeToString()
