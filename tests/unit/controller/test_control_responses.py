"""What brokers' answers to control requests mean: each response mapped to its typed result
(`controller.control_responses`), each result to the event the controller acts on
(`controller.request_batch.response_event`), and the request batch's callbacks enqueueing
those events.

Setup: controller 9 at epoch 5; partitions "doomed"-0 and -1 and "kept"-0. Requests are
built by hand; answers are handed to the mapping (or to the callback a `RecordingSend`
recorded) on the test's thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller import events as ev
from controller.context import ControllerContext
from controller.control_responses import (
    LeaderAndIsrResult,
    StopReplicaResult,
    UpdateMetadataResult,
    control_result,
    deleted_partitions,
    leader_and_isr_result,
    stop_replica_result,
    update_metadata_result,
)
from controller.request_batch import RequestBatch, response_event
from controller.testing.brokers import RecordingSend, make_broker
from domain import NO_EPOCH, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import ReplicaAssignment

EPOCH = 5
HEADER = m.ControlHeader(9, EPOCH, 101)
D0 = TopicPartition("doomed", 0)
D1 = TopicPartition("doomed", 1)
K0 = TopicPartition("kept", 0)


def lai_request(*tps: TopicPartition) -> m.LeaderAndIsrRequest:
    return m.LeaderAndIsrRequest(
        HEADER,
        tuple(
            m.LeaderAndIsrPartitionState(
                topic=tp.topic,
                partition=tp.partition,
                controller_epoch=EPOCH,
                leader=1,
                leader_epoch=3,
                isr=(1,),
                zk_version=7,
                replicas=(1,),
            )
            for tp in tps
        ),
    )


def stop_request(*states: tuple[TopicPartition, bool]) -> m.StopReplicaRequest:
    return m.StopReplicaRequest(
        HEADER,
        tuple(m.StopReplicaPartitionState(tp.topic, tp.partition, -2, d) for tp, d in states),
    )


def um_request() -> m.UpdateMetadataRequest:
    return m.UpdateMetadataRequest(HEADER, (), ())


def errors(*pairs: tuple[TopicPartition, Errors]) -> tuple[m.PartitionError, ...]:
    return tuple(m.PartitionError(tp, e) for tp, e in pairs)


# -- LeaderAndIsr -------------------------------------------------------------------------------


def test_leader_and_isr_result_keeps_each_partition_error_but_none() -> None:
    response = m.LeaderAndIsrResponse(
        Errors.NONE, errors((D0, Errors.NONE), (D1, Errors.KAFKA_STORAGE_ERROR))
    )
    result = control_result(lai_request(D0, D1), response)
    assert result == LeaderAndIsrResult(Errors.NONE, {D1: Errors.KAFKA_STORAGE_ERROR})
    assert isinstance(result, LeaderAndIsrResult)
    assert result.storage_errors == {D1}
    assert result.partitions_with(Errors.NONE) == frozenset()


def test_leader_and_isr_result_keeps_a_partition_that_was_not_requested() -> None:
    """A broker reports the storage errors of every log it hosts, as in Kafka."""
    response = m.LeaderAndIsrResponse(Errors.NONE, errors((K0, Errors.KAFKA_STORAGE_ERROR)))
    result = leader_and_isr_result(response)
    assert result.partition_errors == {K0: Errors.KAFKA_STORAGE_ERROR}
    assert result.storage_errors == {K0}


def test_leader_and_isr_result_keeps_the_request_level_error() -> None:
    result = leader_and_isr_result(m.LeaderAndIsrResponse(Errors.STALE_CONTROLLER_EPOCH))
    assert result == LeaderAndIsrResult(Errors.STALE_CONTROLLER_EPOCH, {})
    assert result.storage_errors == frozenset()


# -- StopReplica ---------------------------------------------------------------------------------


def test_deleted_partitions_are_the_sorted_deletes_only() -> None:
    request = stop_request((K0, False), (D1, True), (D0, True))
    assert deleted_partitions(request) == (D0, D1)
    assert deleted_partitions(stop_request((D0, False))) == ()


def test_stop_replica_result_keeps_exactly_the_deleted_partitions() -> None:
    response = m.StopReplicaResponse(
        Errors.NONE,
        errors((D0, Errors.NONE), (K0, Errors.NONE), (D1, Errors.KAFKA_STORAGE_ERROR)),
    )
    result = control_result(stop_request((D0, True), (K0, False), (D1, True)), response)
    assert result == StopReplicaResult(
        Errors.NONE, {D0: Errors.NONE, D1: Errors.KAFKA_STORAGE_ERROR}, HEADER.broker_epoch
    )
    assert result.broker_epoch == HEADER.broker_epoch != NO_EPOCH  # the addressed life
    assert isinstance(result, StopReplicaResult)
    assert list(result.partition_errors) == [D0, D1]


def test_stop_replica_result_drops_a_partition_that_was_not_requested() -> None:
    response = m.StopReplicaResponse(
        Errors.NONE, errors((D0, Errors.NONE), (K0, Errors.KAFKA_STORAGE_ERROR))
    )
    result = stop_replica_result(stop_request((D0, True)), response)
    assert result.partition_errors == {D0: Errors.NONE}


def test_stop_replica_result_gives_every_deleted_partition_the_request_level_error() -> None:
    response = m.StopReplicaResponse(Errors.STALE_BROKER_EPOCH, errors((D0, Errors.NONE)))
    result = stop_replica_result(stop_request((D0, True), (D1, True)), response)
    assert result.error is Errors.STALE_BROKER_EPOCH
    assert result.partition_errors == {
        D0: Errors.STALE_BROKER_EPOCH,
        D1: Errors.STALE_BROKER_EPOCH,
    }


def test_stop_replica_result_counts_an_unanswered_deleted_partition_as_failed() -> None:
    response = m.StopReplicaResponse(Errors.NONE, errors((D0, Errors.NONE)))
    result = stop_replica_result(stop_request((D0, True), (D1, True)), response)
    assert result.partition_errors == {D0: Errors.NONE, D1: Errors.UNKNOWN_SERVER_ERROR}


def test_a_stop_replica_that_only_stops_has_no_partition_in_its_result() -> None:
    response = m.StopReplicaResponse(Errors.NONE, errors((D0, Errors.NONE)))
    assert stop_replica_result(stop_request((D0, False)), response).partition_errors == {}


ERRORS = st.sampled_from(list(Errors))
PARTITIONS = st.sampled_from([D0, D1, K0, TopicPartition("other", 3)])


@given(
    requested=st.dictionaries(PARTITIONS, st.booleans()),
    answered=st.dictionaries(PARTITIONS, ERRORS),
    request_error=ERRORS,
)
def test_stop_replica_result_answers_each_deleted_partition_once(
    requested: dict[TopicPartition, bool],
    answered: dict[TopicPartition, Errors],
    request_error: Errors,
) -> None:
    request = stop_request(*requested.items())
    response = m.StopReplicaResponse(request_error, errors(*answered.items()))
    result = stop_replica_result(request, response)
    assert list(result.partition_errors) == sorted(tp for tp, d in requested.items() if d)
    for tp, error in result.partition_errors.items():
        if request_error is not Errors.NONE:
            assert error is request_error
        else:
            assert error is answered.get(tp, Errors.UNKNOWN_SERVER_ERROR)


# -- UpdateMetadata and the results as values ---------------------------------------------------


def test_update_metadata_result_is_the_request_level_error() -> None:
    response = m.UpdateMetadataResponse(Errors.STALE_CONTROLLER_EPOCH)
    assert control_result(um_request(), response) == UpdateMetadataResult(
        Errors.STALE_CONTROLLER_EPOCH
    )
    assert update_metadata_result(m.UpdateMetadataResponse(Errors.NONE)).error is Errors.NONE


def test_results_are_immutable_hashable_values() -> None:
    answer = {D0: Errors.NONE}
    result = StopReplicaResult(Errors.NONE, answer)
    answer[D1] = Errors.NONE  # the caller's dict is copied
    assert result.partition_errors == {D0: Errors.NONE}
    with pytest.raises(TypeError):
        result.partition_errors[D1] = Errors.NONE  # type: ignore[index]
    assert hash(result) == hash(StopReplicaResult(Errors.NONE, {D0: Errors.NONE}))
    assert LeaderAndIsrResult(Errors.NONE, {D0: Errors.NONE}) != LeaderAndIsrResult(
        Errors.NONE, {D0: Errors.KAFKA_STORAGE_ERROR}
    )


# -- the events -------------------------------------------------------------------------------


def test_storage_errors_in_leader_and_isr_bring_an_event() -> None:
    result = LeaderAndIsrResult(Errors.NONE, {D0: Errors.KAFKA_STORAGE_ERROR, D1: Errors.NONE})
    assert response_event(2, result) == ev.LeaderAndIsrResponseReceived(2, result)


@pytest.mark.parametrize(
    "result",
    [
        LeaderAndIsrResult(Errors.NONE, {D0: Errors.NONE}),
        LeaderAndIsrResult(Errors.NONE, {D0: Errors.NOT_LEADER_OR_FOLLOWER}),
        LeaderAndIsrResult(Errors.STALE_CONTROLLER_EPOCH, {}),
        StopReplicaResult(Errors.NONE, {}),
        UpdateMetadataResult(Errors.NONE),
        UpdateMetadataResult(Errors.STALE_CONTROLLER_EPOCH),
    ],
)
def test_other_answers_bring_no_event(
    result: LeaderAndIsrResult | StopReplicaResult | UpdateMetadataResult,
) -> None:
    assert response_event(1, result) is None


def test_a_deletion_answer_brings_an_event_even_when_it_failed() -> None:
    result = StopReplicaResult(Errors.STALE_BROKER_EPOCH, {D0: Errors.STALE_BROKER_EPOCH})
    assert response_event(3, result) == ev.TopicDeletionStopReplicaResponseReceived(3, result)


@dataclass
class Wired:
    """A request batch over brokers 1 and 2 and a led topic "doomed", recording what it
    sends and the events its callbacks enqueue."""

    ctx: ControllerContext
    send: RecordingSend
    enqueued: list[ev.ControllerEvent]
    batch: RequestBatch

    def add_leader_and_isr(self, broker: int, tp: TopicPartition) -> None:
        leadership = self.ctx.leadership(tp)
        assert leadership is not None
        self.batch.add_leader_and_isr([broker], tp, leadership, self.ctx.assignment(tp), False)


@pytest.fixture
def wired() -> Wired:
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.set_live_brokers(make_broker(b) for b in (1, 2))
    ctx.add_topic("doomed", {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
    for tp, leader in ((D0, 1), (D1, 2)):
        ctx.set_leadership(
            tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 3, (1, 2), 7), EPOCH)
        )
    send = RecordingSend()
    enqueued: list[ev.ControllerEvent] = []
    batch = RequestBatch(9, ctx, send, on_response_event=enqueued.append)
    batch.new_batch()
    return Wired(ctx, send, enqueued, batch)


def test_the_batch_callbacks_enqueue_the_events_of_the_answers(wired: Wired) -> None:
    wired.ctx.queue_topic_deletion([D0.topic])
    wired.ctx.begin_topic_deletion([D0.topic])
    wired.add_leader_and_isr(1, D0)
    wired.add_leader_and_isr(1, D1)
    wired.batch.add_stop_replica([2], D0, delete=True)
    wired.batch.add_stop_replica([2], D1, delete=False)
    wired.batch.send()
    answers: dict[type, m.LeaderAndIsrResponse | m.StopReplicaResponse] = {
        m.LeaderAndIsrRequest: m.LeaderAndIsrResponse(
            Errors.NONE, errors((D0, Errors.NONE), (D1, Errors.KAFKA_STORAGE_ERROR))
        ),
        m.StopReplicaRequest: m.StopReplicaResponse(
            Errors.NONE, errors((D0, Errors.NONE), (D1, Errors.NONE))
        ),
    }
    for (broker, request), callback in zip(wired.send.sent, wired.send.callbacks, strict=True):
        if callback is not None:
            callback(broker, answers[type(request)])
    assert wired.enqueued == [
        ev.LeaderAndIsrResponseReceived(
            1, LeaderAndIsrResult(Errors.NONE, {D1: Errors.KAFKA_STORAGE_ERROR})
        ),
        ev.TopicDeletionStopReplicaResponseReceived(
            2, StopReplicaResult(Errors.NONE, {D0: Errors.NONE}, wired.ctx.broker_epoch(2))
        ),
    ]


def test_a_leader_and_isr_answered_without_storage_errors_enqueues_nothing(wired: Wired) -> None:
    wired.add_leader_and_isr(1, D0)
    wired.batch.send()
    ((broker, _),) = wired.send.of_type(m.LeaderAndIsrRequest)
    callback = wired.send.callbacks[0]
    assert callback is not None
    callback(broker, m.LeaderAndIsrResponse(Errors.NONE, errors((D0, Errors.NOT_CONTROLLER))))
    assert wired.enqueued == []
