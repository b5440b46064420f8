"""`bump_leader_epochs_and_send` (Kafka's `updateLeaderEpochAndSendRequest`, a
reassignment's A1 and B3) and bug switch `kafka-9212`: the bumped state is written to
ZooKeeper and told to the replicas in LeaderAndIsr either way; without the switch the
context learns it too, so the UpdateMetadata sent with it carries the new leader epoch;
with it the context keeps the old state and every broker's metadata the old epoch.

Setup: controller 9 at epoch 5, brokers 1 to 4 live, "orders" partition 0 led by 1 at
leader epoch 3 (ISR 1, 2, 3; state znode at zkVersion 7), being reassigned from 1, 2, 3
to 2, 3, 4.
"""

from __future__ import annotations

import pytest

from controller.context import ControllerContext
from controller.leader_epoch_bumps import bump_leader_epochs_and_send
from controller.request_batch import RequestBatch
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from zkdata.model import ReplicaAssignment

CONTROLLER_ID = 9
EPOCH = 5
TP = TopicPartition("orders", 0)
REASSIGNING = ReplicaAssignment((1, 2, 3, 4), adding_replicas=(4,), removing_replicas=(1,))


def _bump(record: bool) -> tuple[ControllerContext, FakePartitionZk, RecordingSend]:
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.set_live_brokers(make_broker(b) for b in (1, 2, 3, 4))
    ctx.add_topic(TP.topic, {0: REASSIGNING})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3), 7), EPOCH)
    ctx.set_leadership(TP, state)
    zk = FakePartitionZk()
    zk.put_state(TP, state, 7)
    send = RecordingSend()
    batch = RequestBatch(CONTROLLER_ID, ctx, send)
    failures = bump_leader_epochs_and_send(
        ctx, zk, RecordingEventLog(), batch, {TP: REASSIGNING}, record
    )
    assert failures == {}
    return ctx, zk, send


def _epochs(send: RecordingSend, kind: type) -> set[int]:
    return {
        state.leader_epoch
        for _, request in send.sent
        if isinstance(request, kind)
        for state in request.partition_states
    }


@pytest.mark.parametrize("record", [True, False], ids=["fixed", "kafka-9212"])
def test_the_bump_reaches_zookeeper_and_the_replicas_either_way(record: bool) -> None:
    _, zk, send = _bump(record)
    stored = zk.state(TP)
    assert stored is not None
    assert stored.leader_and_isr.leader_epoch == 4
    assert _epochs(send, m.LeaderAndIsrRequest) == {4}


def test_by_default_the_context_and_the_metadata_carry_the_bumped_epoch() -> None:
    ctx, _, send = _bump(record=True)
    state = ctx.leadership(TP)
    assert state is not None
    assert (state.leader_and_isr.leader_epoch, state.leader_and_isr.zk_version) == (4, 8)
    assert _epochs(send, m.UpdateMetadataRequest) == {4}


def test_kafka_9212_leaves_the_context_and_the_metadata_at_the_old_epoch() -> None:
    ctx, _, send = _bump(record=False)
    state = ctx.leadership(TP)
    assert state is not None
    assert (state.leader_and_isr.leader_epoch, state.leader_and_isr.zk_version) == (3, 7)
    assert _epochs(send, m.UpdateMetadataRequest) == {3}
