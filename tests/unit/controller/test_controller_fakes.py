"""The doubles of `controller.testing` keep the contracts of what they replace: the results
`KafkaZkClient` gives for state znodes, epoch fencing, and a broker channel that answers,
fails, holds and closes like a gRPC channel."""

from __future__ import annotations

import threading

import pytest
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from controller.testing.brokers import FakeBrokerChannel, RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import ControllerObserved, EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors, RpcClosed, RpcDeadlineExceeded, RpcUnavailable
from zkdata.errors import ControllerMovedError

TP = TopicPartition("orders", 0)
OTHER = TopicPartition("orders", 1)


def state(leader: int, isr: tuple[int, ...], zk_version: int = 0) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 1, isr, zk_version), 3)


# --- FakePartitionZk ---------------------------------------------------------------------------


def test_create_answers_the_path_then_node_exists() -> None:
    zk = FakePartitionZk(epoch_zk_version=5)
    assert zk.create_partition_states({TP: state(1, (1, 2))}, 5) == {
        TP: "/brokers/topics/orders/partitions/0/state"
    }
    (again,) = zk.create_partition_states({TP: state(2, (2,))}, 5).values()
    assert isinstance(again, NodeExistsError)
    assert zk.state(TP) == state(1, (1, 2), zk_version=0)


def test_update_is_conditional_on_the_zk_version_carried_in_the_state() -> None:
    zk = FakePartitionZk()
    zk.put_state(TP, state(1, (1, 2)), zk_version=4)
    (stale,) = zk.update_leader_and_isr({TP: state(2, (2,), zk_version=3)}, 0).values()
    assert isinstance(stale, BadVersionError)
    assert zk.update_leader_and_isr({TP: state(2, (2,), zk_version=4)}, 0) == {TP: 5}
    assert zk.state(TP) == state(2, (2,), zk_version=5)
    (missing,) = zk.update_leader_and_isr({OTHER: state(1, (1,))}, 0).values()
    assert isinstance(missing, NoNodeError)


@pytest.mark.parametrize("method", ["create_partition_states", "update_leader_and_isr"])
def test_writes_with_another_epoch_zk_version_raise_controller_moved_and_write_nothing(
    method: str,
) -> None:
    zk = FakePartitionZk(epoch_zk_version=5)
    zk.put_state(OTHER, state(1, (1,)), zk_version=0)
    with pytest.raises(ControllerMovedError):
        getattr(zk, method)({TP: state(1, (1,)), OTHER: state(2, (2,))}, 4)
    assert zk.state(TP) is None
    assert zk.state(OTHER) == state(1, (1,))
    assert [c.epoch_zk_version for c in zk.calls] == [4]


def test_reads_split_found_malformed_and_missing() -> None:
    zk = FakePartitionZk()
    zk.put_state(TP, state(1, (1,)), zk_version=9)
    zk.put_malformed(OTHER, "truncated JSON")
    reads = zk.get_partition_states([TP, OTHER, TopicPartition("orders", 2)])
    assert reads.found == {TP: state(1, (1,), zk_version=9)}
    assert list(reads.malformed) == [OTHER]
    assert reads.malformed[OTHER].path == "/brokers/topics/orders/partitions/1/state"
    assert reads.malformed[OTHER].reason == "truncated JSON"


def test_bump_version_once_lands_right_before_the_next_update_only() -> None:
    zk = FakePartitionZk()
    zk.put_state(TP, state(1, (1, 2)), zk_version=2)
    zk.bump_version_once(TP, state(1, (1,)))
    assert zk.zk_version(TP) == 2  # not yet
    (lost,) = zk.update_leader_and_isr({TP: state(2, (2,), zk_version=2)}, 0).values()
    assert isinstance(lost, BadVersionError)
    assert zk.state(TP) == state(1, (1,), zk_version=3)
    assert zk.update_leader_and_isr({TP: state(2, (2,), zk_version=3)}, 0) == {TP: 4}


def test_fail_next_update_answers_the_error_once() -> None:
    zk = FakePartitionZk()
    zk.put_state(TP, state(1, (1,)))
    zk.fail_next_update(TP, NoNodeError())
    (failed,) = zk.update_leader_and_isr({TP: state(1, (1,))}, 0).values()
    assert isinstance(failed, NoNodeError)
    assert zk.update_leader_and_isr({TP: state(1, (1,))}, 0) == {TP: 1}


def test_every_call_is_recorded_in_order() -> None:
    zk = FakePartitionZk()
    zk.get_partition_states([TP])
    zk.create_partition_states({TP: state(1, (1,))}, 0)
    zk.update_leader_and_isr({TP: state(2, (2,))}, 0)
    assert zk.methods() == [
        "get_partition_states",
        "create_partition_states",
        "update_leader_and_isr",
    ]
    (update,) = zk.calls_to("update_leader_and_isr")
    assert update.partitions == (TP,)
    assert update.states == {TP: state(2, (2,))}


# --- RecordingSend and RecordingEventLog ----------------------------------------------------


def test_recording_send_keeps_requests_and_callbacks() -> None:
    send = RecordingSend()
    request = m.UpdateMetadataRequest(m.ControlHeader(9, 1, 101), (), ())
    assert send(1, request, None) is True
    assert send.sent == [(1, request)]
    assert send.of_type(m.UpdateMetadataRequest) == [(1, request)]
    assert send.of_type(m.StopReplicaRequest) == []
    assert send.to(1) == [request]
    assert send.callbacks == [None]


def test_recording_event_log_keeps_events_and_writes_nowhere() -> None:
    events = RecordingEventLog("node-1")
    events.emit(ControllerObserved(controller_id=2))
    assert events.path is None
    (event,) = events.of_kind(EventKind.CONTROLLER_OBSERVED)
    assert (event["node"], event["controller_id"]) == ("node-1", 2)


# --- FakeBrokerChannel -------------------------------------------------------------------------


def test_channel_answers_none_with_one_error_per_partition() -> None:
    channel = FakeBrokerChannel(1)
    stop = m.StopReplicaRequest(
        m.ControlHeader(9, 1, 101), (m.StopReplicaPartitionState("orders", 0, 1, False),)
    )
    assert channel.stop_replica(stop) == m.StopReplicaResponse(
        Errors.NONE, (m.PartitionError(TP, Errors.NONE),)
    )
    assert channel.requests() == [stop]


def test_channel_fails_the_next_calls_with_an_rpc_error() -> None:
    channel = FakeBrokerChannel(1)
    request = m.UpdateMetadataRequest(m.ControlHeader(9, 1, 101), (), ())
    channel.fail_next(2, RpcDeadlineExceeded)
    for _ in range(2):
        with pytest.raises(RpcDeadlineExceeded):
            channel.update_metadata(request)
    assert channel.update_metadata(request) == m.UpdateMetadataResponse(Errors.NONE)
    assert channel.calls() == [request] * 3
    assert channel.requests() == [request]


def test_closing_a_channel_cancels_a_held_call_and_refuses_later_ones() -> None:
    channel = FakeBrokerChannel(1)
    request = m.UpdateMetadataRequest(m.ControlHeader(9, 1, 101), (), ())
    channel.hold()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            channel.update_metadata(request)
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call, name="caller")
    caller.start()
    wait_until(lambda: channel.calls(), 5.0, "the call in flight", interval=0.002)
    channel.close()
    caller.join(5.0)
    assert len(outcome) == 1
    assert isinstance(outcome[0], RpcUnavailable)
    assert outcome[0].status == "CANCELLED"
    with pytest.raises(RpcClosed, match="closed"):
        channel.update_metadata(request)
    assert channel.close_count == 1


def test_make_broker_gives_a_named_endpoint_and_an_epoch() -> None:
    broker = make_broker(3)
    assert (broker.id, broker.epoch, broker.info.endpoint.host) == (3, 103, "broker3")
    assert make_broker(3, epoch=7).epoch == 7
