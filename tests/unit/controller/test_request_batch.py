"""`RequestBatch`: one round of control requests built against a hand-filled
`ControllerContext` and handed to a `RecordingSend` (Kafka's `ControllerBrokerRequestBatch`).

Setup: brokers 1, 2, 3 live (broker epochs 101..103), controller 9 at epoch 5, topic
"orders" with partitions 0 (replicas 1, 2, 3) and 1 (replicas 2, 3, 1), both led.
"""

from __future__ import annotations

from collections import Counter

import pytest

from controller.context import ControllerContext
from controller.request_batch import RequestBatch
from controller.request_states import leader_and_isr_state
from controller.testing.brokers import RecordingSend, make_broker
from domain import (
    EPOCH_DURING_DELETE,
    NO_EPOCH,
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from rpc import messages as m
from zkdata.model import ReplicaAssignment

CONTROLLER_ID = 9
EPOCH = 5
TOPIC = "orders"
TP0 = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)


def leadership(
    leader: int, isr: tuple[int, ...], leader_epoch: int = 3
) -> LeaderIsrAndControllerEpoch:
    """A leadership decided by the current controller, at zkVersion 7."""
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, isr, 7), EPOCH)


@pytest.fixture
def ctx() -> ControllerContext:
    context = ControllerContext()
    context.epoch = EPOCH
    context.set_live_brokers(make_broker(b) for b in (1, 2, 3))
    context.add_topic(TOPIC, {0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1))})
    context.set_leadership(TP0, leadership(1, (1, 2, 3)))
    context.set_leadership(TP1, leadership(2, (2, 3, 1), leader_epoch=8))
    return context


@pytest.fixture
def send() -> RecordingSend:
    return RecordingSend()


@pytest.fixture
def batch(ctx: ControllerContext, send: RecordingSend) -> RequestBatch:
    b = RequestBatch(CONTROLLER_ID, ctx, send)
    b.new_batch()
    return b


def add_lai(
    batch: RequestBatch, ctx: ControllerContext, brokers: tuple[int, ...], tp: TopicPartition
) -> None:
    state = ctx.leadership(tp)
    assert state is not None
    batch.add_leader_and_isr(brokers, tp, state, ctx.assignment(tp), is_new=False)


def lai_by_broker(send: RecordingSend) -> dict[int, m.LeaderAndIsrRequest]:
    """The LeaderAndIsr requests sent, by broker (asserting one per broker)."""
    pairs = send.of_type(m.LeaderAndIsrRequest)
    assert len({b for b, _ in pairs}) == len(pairs)
    return dict(pairs)


# --- one request per broker and API ------------------------------------------------------------


def test_at_most_one_request_of_each_api_per_broker_per_send(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1, 2), TP0)
    add_lai(batch, ctx, (1, 2, 3), TP1)
    add_lai(batch, ctx, (1,), TP0)
    batch.add_stop_replica([3], TP0, delete=False)
    batch.add_stop_replica([3], TP1, delete=True)
    batch.add_update_metadata([1, 2], [TP0])
    batch.add_update_metadata([1, 3], [TP1])

    batch.send()

    per_broker_api = Counter((b, type(r).__name__) for b, r in send.sent)
    assert per_broker_api == {
        (1, "LeaderAndIsrRequest"): 1,
        (2, "LeaderAndIsrRequest"): 1,
        (3, "LeaderAndIsrRequest"): 1,
        (1, "UpdateMetadataRequest"): 1,
        (2, "UpdateMetadataRequest"): 1,
        (3, "UpdateMetadataRequest"): 1,
        (3, "StopReplicaRequest"): 1,
    }
    lai = lai_by_broker(send)
    assert [s.topic_partition for s in lai[1].partition_states] == [TP0, TP1]
    assert [s.topic_partition for s in lai[3].partition_states] == [TP1]
    (stop,) = [r for _, r in send.of_type(m.StopReplicaRequest)]
    assert [(s.topic_partition, s.delete_partition) for s in stop.partition_states] == [
        (TP0, False),
        (TP1, True),
    ]


def test_requests_go_out_leader_and_isr_first_then_update_metadata_then_stop_replica(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    batch.add_stop_replica([1], TP0, delete=False)
    add_lai(batch, ctx, (2,), TP0)
    batch.send()
    kinds = [type(r).__name__ for _, r in send.sent]
    assert kinds == [
        "LeaderAndIsrRequest",
        "UpdateMetadataRequest",
        "UpdateMetadataRequest",
        "UpdateMetadataRequest",
        "StopReplicaRequest",
    ]


def test_leader_and_isr_carries_the_leadership_and_the_assignment(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.set_assignment(TP0, ReplicaAssignment((1, 2, 3, 4), adding_replicas=(4,)))
    state = leadership(1, (1, 2), leader_epoch=11)
    batch.add_leader_and_isr([2], TP0, state, ctx.assignment(TP0), is_new=True)
    batch.send()
    (request,) = lai_by_broker(send).values()
    assert request.partition_states == (
        m.LeaderAndIsrPartitionState(
            topic=TOPIC,
            partition=0,
            controller_epoch=EPOCH,
            leader=1,
            leader_epoch=11,
            isr=(1, 2),
            zk_version=7,
            replicas=(1, 2, 3, 4),
            adding_replicas=(4,),
            removing_replicas=(),
            is_new=True,
        ),
    )


def test_is_new_stays_set_when_the_same_partition_is_added_again_not_new(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    state = ctx.leadership(TP0)
    assert state is not None
    batch.add_leader_and_isr([1], TP0, state, ctx.assignment(TP0), is_new=True)
    batch.add_leader_and_isr([1], TP0, state, ctx.assignment(TP0), is_new=False)
    batch.send()
    (request,) = lai_by_broker(send).values()
    assert [s.is_new for s in request.partition_states] == [True]


def test_delete_stays_set_when_the_same_replica_is_stopped_again_without_delete(
    batch: RequestBatch, send: RecordingSend
) -> None:
    batch.add_stop_replica([1], TP0, delete=True)
    batch.add_stop_replica([1], TP0, delete=False)
    batch.send()
    (request,) = [r for _, r in send.of_type(m.StopReplicaRequest)]
    assert [s.delete_partition for s in request.partition_states] == [True]


def test_negative_broker_ids_are_ignored(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (NO_LEADER, 2), TP0)
    batch.add_stop_replica([NO_LEADER], TP0, delete=False)
    batch.add_update_metadata([NO_LEADER], [TP0])
    batch.send()
    assert {b for b, _ in send.sent} == {1, 2, 3}
    assert NO_LEADER not in {b for b, _ in send.sent}


# --- update metadata ---------------------------------------------------------------------------


def test_leader_and_isr_adds_the_partition_to_the_update_metadata_of_every_live_broker(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.mark_shutting_down(3)
    add_lai(batch, ctx, (1,), TP0)
    batch.send()
    update = dict(send.of_type(m.UpdateMetadataRequest))
    assert sorted(update) == [1, 2, 3]  # shutting-down brokers too
    for request in update.values():
        assert [s.topic_partition for s in request.partition_states] == [TP0]


def test_update_metadata_carries_every_live_broker_and_the_partition_states(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    batch.add_update_metadata([2], [TP1, TP0])
    batch.send()
    ((broker_id, request),) = send.of_type(m.UpdateMetadataRequest)
    assert broker_id == 2
    assert [b.id for b in request.live_brokers] == [1, 2, 3]
    assert request.live_brokers[0].endpoints == make_broker(1).info.endpoints
    assert request.partition_states == (
        m.UpdateMetadataPartitionState(TOPIC, 0, EPOCH, 1, 3, (1, 2, 3), 7, (1, 2, 3), ()),
        m.UpdateMetadataPartitionState(TOPIC, 1, EPOCH, 2, 8, (2, 3, 1), 7, (2, 3, 1), ()),
    )


def test_update_metadata_lists_replicas_on_dead_brokers_as_offline(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.remove_live_brokers([3])
    batch.add_update_metadata([1], [TP0, TP1])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [s.offline_replicas for s in request.partition_states] == [(3,), (3,)]
    assert [b.id for b in request.live_brokers] == [1, 2]


def test_update_metadata_lists_a_replica_whose_log_failed_as_offline(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    """A live broker that answered KAFKA_STORAGE_ERROR for one partition has that replica
    listed offline, and only that one; replicas on a dead broker are offline everywhere."""
    ctx.remove_live_brokers([3])
    ctx.mark_replicas_offline(2, [TP1])
    batch.add_update_metadata([1], [TP0, TP1])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [s.offline_replicas for s in request.partition_states] == [(3,), (2, 3)]


def test_update_metadata_lists_replicas_on_shutting_down_brokers_as_offline(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    """Kafka 2.8 computes offline replicas with `isReplicaOnline(_, partition)`, whose
    default excludes shutting-down brokers: their replicas are listed offline (the
    broker itself stays among the live brokers)."""
    ctx.mark_shutting_down(3)
    batch.add_update_metadata([1], [TP0])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [b.id for b in request.live_brokers] == [1, 2, 3]
    assert [s.offline_replicas for s in request.partition_states] == [(3,)]


def test_update_metadata_marks_the_leader_of_a_topic_being_deleted(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.queue_topic_deletion([TOPIC])
    batch.add_update_metadata([1], [TP0])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [s.leader for s in request.partition_states] == [-2]


def test_update_metadata_of_a_topic_being_deleted_is_kafkas_during_delete_state(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    """Kafka's `LeaderAndIsr.duringDelete(isr)`: leader -2 with the ISR, at the initial
    leader epoch and zkVersion; every broker, a starting one included, gets that for every
    partition of the topic and never learns them as live."""
    ctx.queue_topic_deletion([TOPIC])
    batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids(), ctx.partitions_with_leaders())
    batch.send()
    requests = send.of_type(m.UpdateMetadataRequest)
    assert requests
    for _, request in requests:
        assert [(s.leader, s.leader_epoch, s.zk_version) for s in request.partition_states] == [
            (-2, 0, 0)
        ] * len(ctx.partitions_with_leaders())
        live = ctx.leadership(TP0)
        assert live is not None
        assert request.partition_states[0].isr == live.leader_and_isr.isr


def test_update_metadata_leaves_out_partitions_without_leadership(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.add_topic("fresh", {0: ReplicaAssignment((1,))})
    batch.add_update_metadata([1], [TopicPartition("fresh", 0), TP0])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [s.topic_partition for s in request.partition_states] == [TP0]


def test_update_metadata_with_no_partitions_still_goes_to_each_broker(
    batch: RequestBatch, send: RecordingSend
) -> None:
    batch.add_update_metadata([1, 2], [])
    batch.send()
    assert [(b, r.partition_states) for b, r in send.of_type(m.UpdateMetadataRequest)] == [
        (1, ()),
        (2, ()),
    ]


# --- headers and live leaders ------------------------------------------------------------------


def test_headers_carry_controller_id_controller_epoch_and_each_target_broker_epoch(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.add_live_brokers([make_broker(2, epoch=4242)])  # re-registered: a new broker epoch
    add_lai(batch, ctx, (1, 2, 3), TP0)
    batch.add_stop_replica([1, 2, 3], TP1, delete=False)
    batch.send()
    assert len(send.sent) == 9
    for broker_id, request in send.sent:
        expected_epoch = 4242 if broker_id == 2 else 100 + broker_id
        assert request.header == m.ControlHeader(CONTROLLER_ID, EPOCH, expected_epoch)


def test_headers_take_the_context_epoch_at_send_time(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    batch.add_update_metadata([1], [])
    ctx.epoch = EPOCH + 1
    batch.send()
    assert [r.header.controller_epoch for _, r in send.sent] == [EPOCH + 1]


def test_live_leaders_hold_the_endpoints_of_the_live_leaders(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.add_topic("other", {0: ReplicaAssignment((4, 1))})
    dead_leader = TopicPartition("other", 0)
    ctx.set_leadership(dead_leader, leadership(4, (4, 1)))
    add_lai(batch, ctx, (1,), TP0)  # led by 1
    add_lai(batch, ctx, (1,), TP1)  # led by 2
    add_lai(batch, ctx, (1,), dead_leader)  # led by 4, which is not live
    batch.send()
    (request,) = lai_by_broker(send).values()
    assert request.live_leaders == (
        m.LiveLeader(1, "broker1", 9092),
        m.LiveLeader(2, "broker2", 9092),
    )


# --- who receives what ---------------------------------------------------------------------------


def test_requests_to_brokers_that_are_not_live_are_not_sent(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1, 7), TP0)
    batch.add_stop_replica([7], TP0, delete=True)
    batch.add_update_metadata([7], [TP1])
    batch.send()
    assert 7 not in {b for b, _ in send.sent}
    assert sorted(b for b, _ in send.of_type(m.LeaderAndIsrRequest)) == [1]


def test_a_broker_that_died_after_being_added_gets_nothing(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1, 2), TP0)
    batch.add_stop_replica([2], TP1, delete=False)
    ctx.remove_live_brokers([2])
    batch.send()
    assert 2 not in {b for b, _ in send.sent}


# --- stop replica epochs ------------------------------------------------------------------------


def test_stop_replica_carries_the_current_leader_epoch(
    batch: RequestBatch, send: RecordingSend
) -> None:
    batch.add_stop_replica([3], TP1, delete=False)
    batch.send()
    ((_, request),) = send.of_type(m.StopReplicaRequest)
    assert request.partition_states == (m.StopReplicaPartitionState(TOPIC, 1, 8, False),)


def test_stop_replica_uses_epoch_during_delete_for_a_topic_queued_for_deletion(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.queue_topic_deletion([TOPIC])
    batch.add_stop_replica([3], TP1, delete=True)
    batch.send()
    ((_, request),) = send.of_type(m.StopReplicaRequest)
    assert [s.leader_epoch for s in request.partition_states] == [EPOCH_DURING_DELETE]
    assert EPOCH_DURING_DELETE == -2


def test_stop_replica_uses_no_epoch_without_leadership(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    ctx.add_topic("fresh", {0: ReplicaAssignment((1,))})
    batch.add_stop_replica([1], TopicPartition("fresh", 0), delete=False)
    batch.send()
    ((_, request),) = send.of_type(m.StopReplicaRequest)
    assert [s.leader_epoch for s in request.partition_states] == [NO_EPOCH]
    assert NO_EPOCH == -1


def test_without_an_event_sink_no_request_carries_a_callback(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1,), TP0)
    batch.add_stop_replica([1], TP0, delete=True)
    batch.send()
    assert len(send.sent) == 5  # LeaderAndIsr, UpdateMetadata to 1, 2, 3, StopReplica
    assert send.callbacks == [None] * 5


def test_leader_and_isr_and_a_deleting_stop_replica_carry_a_callback(
    ctx: ControllerContext, send: RecordingSend
) -> None:
    batch = RequestBatch(CONTROLLER_ID, ctx, send, on_response_event=lambda event: None)
    ctx.queue_topic_deletion([TP1.topic])
    ctx.begin_topic_deletion([TP1.topic])
    batch.new_batch()
    add_lai(batch, ctx, (1,), TP0)
    batch.add_stop_replica([1], TP0, delete=False)
    batch.add_stop_replica([2], TP1, delete=True)
    batch.send()
    callbacks = {
        (b, type(r).__name__): cb is not None
        for (b, r), cb in zip(send.sent, send.callbacks, strict=True)
    }
    assert callbacks == {
        (1, "LeaderAndIsrRequest"): True,
        (1, "UpdateMetadataRequest"): False,
        (2, "UpdateMetadataRequest"): False,
        (3, "UpdateMetadataRequest"): False,
        (1, "StopReplicaRequest"): False,  # it only stops: its answer changes nothing
        (2, "StopReplicaRequest"): True,
    }


def test_a_deleting_stop_replica_of_a_topic_not_being_deleted_carries_no_callback(
    ctx: ControllerContext, send: RecordingSend
) -> None:
    """Only the deletion of a topic whose deletion started waits for answers (Kafka's
    `isTopicDeletionInProgress` check), even if the topic is queued."""
    batch = RequestBatch(CONTROLLER_ID, ctx, send, on_response_event=lambda event: None)
    ctx.queue_topic_deletion([TP1.topic])
    batch.new_batch()
    batch.add_stop_replica([2], TP1, delete=True)
    batch.send()
    assert [type(r).__name__ for _, r in send.sent] == ["StopReplicaRequest"]
    assert send.callbacks == [None]


# --- batch lifecycle ---------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["leader_and_isr", "stop_replica", "update_metadata"])
def test_new_batch_raises_if_the_previous_one_was_not_sent(
    batch: RequestBatch, ctx: ControllerContext, what: str
) -> None:
    if what == "leader_and_isr":
        add_lai(batch, ctx, (1,), TP0)
    elif what == "stop_replica":
        batch.add_stop_replica([1], TP0, delete=False)
    else:
        batch.add_update_metadata([1], [])
    with pytest.raises(RuntimeError, match="not sent"):
        batch.new_batch()


def test_after_send_the_batch_is_empty(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1, 2, 3), TP0)
    batch.add_stop_replica([3], TP1, delete=False)
    batch.send()
    first = len(send.sent)
    assert first > 0
    batch.new_batch()  # does not raise
    batch.send()
    assert len(send.sent) == first


def test_after_send_the_next_round_does_not_repeat_the_previous_partitions(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1,), TP0)
    batch.send()
    send.clear()
    batch.new_batch()
    batch.add_update_metadata([2], [TP1])
    batch.send()
    ((_, request),) = send.of_type(m.UpdateMetadataRequest)
    assert [s.topic_partition for s in request.partition_states] == [TP1]


def test_clear_drops_everything_added(
    batch: RequestBatch, ctx: ControllerContext, send: RecordingSend
) -> None:
    add_lai(batch, ctx, (1, 2), TP0)
    batch.add_stop_replica([3], TP0, delete=True)
    batch.clear()
    batch.new_batch()
    batch.send()
    assert send.sent == []


# --- many partitions in one call ---------------------------------------------------------------


def test_adding_a_rounds_leader_and_isr_entries_at_once_sends_what_one_by_one_sends(
    ctx: ControllerContext,
) -> None:
    one_by_one, at_once = RecordingSend(), RecordingSend()
    entries = [((1, 2), TP0), ((3,), TP1), ((2, -1), TP1)]
    batch = RequestBatch(CONTROLLER_ID, ctx, one_by_one)
    for brokers, tp in entries:
        add_lai(batch, ctx, brokers, tp)
    batch.send()
    batch = RequestBatch(CONTROLLER_ID, ctx, at_once)
    states = {TP0: leadership(1, (1, 2, 3)), TP1: leadership(2, (2, 3, 1), leader_epoch=8)}
    assert states == {TP0: ctx.leadership(TP0), TP1: ctx.leadership(TP1)}
    batch.add_leader_and_isrs(
        ((brokers, tp, states[tp], ctx.assignment(tp)) for brokers, tp in entries), is_new=False
    )
    batch.send()
    assert at_once.sent == one_by_one.sent
    assert {b for b, _ in at_once.of_type(m.LeaderAndIsrRequest)} == {1, 2, 3}


def test_adding_no_leader_and_isr_entries_adds_no_update_metadata(
    batch: RequestBatch, send: RecordingSend
) -> None:
    batch.add_leader_and_isrs([], is_new=False)
    batch.send()
    assert send.sent == []


def test_stopping_many_replicas_of_a_broker_at_once_stops_each(
    batch: RequestBatch, send: RecordingSend
) -> None:
    batch.add_stop_replicas(2, [TP0, TP1], delete=False)
    batch.add_stop_replicas(2, [TP1], delete=True)
    batch.add_stop_replicas(-1, [TP0], delete=True)
    batch.add_stop_replicas(3, [], delete=True)
    batch.send()
    [(broker, request)] = send.of_type(m.StopReplicaRequest)
    assert broker == 2
    assert [(s.partition, s.delete_partition) for s in request.partition_states] == [
        (0, False),
        (1, True),
    ]


def test_a_leader_and_isr_state_is_the_named_tuple_its_fields_make() -> None:
    state = leadership(1, (1, 2), leader_epoch=4)
    made = leader_and_isr_state(TP0, state, ReplicaAssignment((1, 2, 3), (3,), (2,)), True)
    assert made == m.LeaderAndIsrPartitionState(
        topic=TOPIC,
        partition=0,
        controller_epoch=EPOCH,
        leader=1,
        leader_epoch=4,
        isr=(1, 2),
        zk_version=7,
        replicas=(1, 2, 3),
        adding_replicas=(3,),
        removing_replicas=(2,),
        is_new=True,
    )
    assert type(made) is m.LeaderAndIsrPartitionState
