"""Bug switches on what becomes of a failed round of control requests:

- `kafka-2300` (`RequestBatch`): a ZooKeeper error ends the state change (the 0.8
  controller's way) and the round that failed while built or sent stays in the batch,
  and every later state change fails to start;
- `sender-drops` (`ControllerChannelManager`): a request whose send failed is dropped
  instead of resent.

Without the switches a ZooKeeper error fails its partitions alone (Kafka 2.x), a failed
round is emptied and a request resent until answered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest
from kazoo.exceptions import ConnectionLoss

from controller.channel_manager import ControllerChannelManager, ControlRequest
from controller.context import ControllerContext, PartitionReplica
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import ReplicaState
from controller.testing.brokers import FakeChannels, RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import RpcUnavailable
from zkdata.fenced_writes import OpResult
from zkdata.model import ReplicaAssignment
from zkdata.pipelined_reads import Reads

TP = TopicPartition("orders", 0)
STUCK = "a request batch was not sent before a new one started"


class FlakyZk(FakePartitionZk):
    """Loses the connection on the next `failures` reads or writes of state znodes."""

    def __init__(self, failures: int) -> None:
        super().__init__(12)
        self.failures = failures

    def _maybe_lose(self) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionLoss()

    def get_partition_states(
        self, partitions: Iterable[TopicPartition], readers: object = None
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        self._maybe_lose()
        return super().get_partition_states(partitions, readers)

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        self._maybe_lose()
        return super().update_leader_and_isr(states, epoch_zk_version)


def _replica_states(keep_failed_round: bool) -> tuple[ReplicaStateMachine, RecordingSend]:
    """Brokers 1, 2 live, "orders" 0 on (1, 2) led by 1; the first ZooKeeper call on a
    state znode (the ISR shrink's write) loses the connection."""
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = 4, 12
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    ctx.add_topic(TP.topic, {0: ReplicaAssignment((1, 2))})
    zk = FlakyZk(failures=1)
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2), 7), 3)
    zk.put_state(TP, state, 7)
    ctx.set_leadership(TP, state)
    for broker in (1, 2):
        ctx.set_replica_state(PartitionReplica(TP, broker), ReplicaState.ONLINE)
    send = RecordingSend()
    batch = RequestBatch(9, ctx, send, keep_failed_round=keep_failed_round)
    return ReplicaStateMachine(ctx, zk, batch, RecordingEventLog()), send


def _offline(machine: ReplicaStateMachine) -> None:
    machine.handle_state_changes([PartitionReplica(TP, 2)], ReplicaState.OFFLINE)


def test_a_zookeeper_error_fails_its_partitions_alone_by_default() -> None:
    """Kafka's way: the shrink fails (an event names the error), the StopReplica of the
    round is still sent, and the next state change starts on an empty batch."""
    machine, send = _replica_states(keep_failed_round=False)
    _offline(machine)
    _offline(machine)
    assert [b for b, _ in send.of_type(m.StopReplicaRequest)] == [2, 2]


def test_kafka_2300_a_failed_state_change_blocks_every_later_one() -> None:
    machine, send = _replica_states(keep_failed_round=True)
    with pytest.raises(ConnectionLoss):
        _offline(machine)
    for _ in range(2):
        with pytest.raises(RuntimeError, match=STUCK):
            _offline(machine)
    assert send.sent == []


class FailingSend(RecordingSend):
    """Raises on the first request it is handed, then records as `RecordingSend`."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    def __call__(self, broker_id: int, request: ControlRequest, callback: object = None) -> bool:
        if not self.failed:
            self.failed = True
            raise RuntimeError("the channel manager failed")
        return super().__call__(broker_id, request)


@pytest.mark.parametrize(("keep", "stuck"), [(False, False), (True, True)])
def test_a_round_whose_send_failed(keep: bool, stuck: bool) -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers([make_broker(1)])
    batch = RequestBatch(9, ctx, FailingSend(), keep_failed_round=keep)
    batch.new_batch()
    batch.add_update_metadata([1], [])
    with pytest.raises(RuntimeError, match="the channel manager failed"):
        batch.send()
    if stuck:
        with pytest.raises(RuntimeError, match=STUCK):
            batch.new_batch()
    else:
        batch.new_batch()


# -- sender-drops ---------------------------------------------------------------------------


@pytest.fixture
def managers() -> Iterator[list[ControllerChannelManager]]:
    made: list[ControllerChannelManager] = []
    yield made
    for manager in made:
        manager.shutdown()


def _after_one_failure(
    managers: list[ControllerChannelManager], drop_failed: bool
) -> tuple[list[ControlRequest], list[ControlRequest]]:
    """Two UpdateMetadata (controller epochs 1 and 2) to broker 1, whose first call fails;
    the calls made and the requests answered once the second is answered."""
    channels = FakeChannels()
    manager = ControllerChannelManager(
        RecordingEventLog(), channels, 0.01, 0.02, drop_failed=drop_failed
    )
    managers.append(manager)
    manager.add_broker(make_broker(1))
    channel = channels.by_broker[1]
    channel.fail_next(1, RpcUnavailable)
    answered: list[ControlRequest] = []
    first, second = (m.UpdateMetadataRequest(m.ControlHeader(9, n, 101), (), ()) for n in (1, 2))
    manager.send(1, first, lambda _b, _r: answered.append(first))
    manager.send(1, second, lambda _b, _r: answered.append(second))
    wait_until(lambda: second in answered, 5, "the second request was never answered")
    return channel.calls(), answered


def test_a_failed_send_is_resent_by_default(managers: list[ControllerChannelManager]) -> None:
    calls, answered = _after_one_failure(managers, drop_failed=False)
    assert [r.header.controller_epoch for r in calls] == [1, 1, 2]
    assert [r.header.controller_epoch for r in answered] == [1, 2]


def test_sender_drops_loses_the_failed_request(managers: list[ControllerChannelManager]) -> None:
    calls, answered = _after_one_failure(managers, drop_failed=True)
    assert [r.header.controller_epoch for r in calls] == [1, 2]
    assert [r.header.controller_epoch for r in answered] == [2]
