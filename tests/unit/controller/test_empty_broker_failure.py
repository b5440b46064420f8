"""A broker hosting no replica dies while a partition has no live leader (KAFKA-13225):
by default the controller tells the live brokers with an UpdateMetadata of its own; with
bug switch `kafka-13225` it sends none, as Kafka did while it sent that UpdateMetadata
only when no partition had an offline leader, and the live brokers keep the dead broker
among their live brokers.

Setup: brokers 2 and 3 are live; "orders" partition 0 has the one replica 1, a broker
that is already dead, so the partition is offline. Broker 3 hosts nothing and dies.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NO_METADATA_FOR_EMPTY_BROKER
from controller.broker_changes import BrokerChanges
from controller.channel_manager import ControllerChannelManager
from controller.context import ControllerContext, PartitionReplica
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import FakeChannels, RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from controller.watchers import Watchers
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment

TP = TopicPartition("orders", 0)


def _update_metadata_after_failure(switches: BugSwitches) -> list[frozenset[int]]:
    """The broker sets each UpdateMetadata of broker 3's failure was sent to."""
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = 4, 12
    ctx.set_live_brokers([make_broker(2), make_broker(3)])
    ctx.add_topic(TP.topic, {0: ReplicaAssignment((1,))})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1,), 7), 4)
    ctx.set_leadership(TP, state)
    ctx.set_partition_state(TP, PartitionState.OFFLINE)
    ctx.set_replica_state(PartitionReplica(TP, 1), ReplicaState.OFFLINE)
    zk = FakePartitionZk(12)
    zk.put_state(TP, state, 7)
    events = RecordingEventLog()
    batch = RequestBatch(9, ctx, RecordingSend())
    channels = ControllerChannelManager(events, FakeChannels())
    sent: list[frozenset[int]] = []
    changes = BrokerChanges(
        ctx,
        cast(KafkaZkClient, zk),
        channels,
        PartitionStateMachine(ctx, zk, batch, events),
        ReplicaStateMachine(ctx, zk, batch, events),
        cast(Any, SimpleNamespace(on_replicas_offline=lambda _replicas: None)),
        cast(Any, SimpleNamespace(on_broker_startup=lambda _ids: None)),
        events,
        Watchers(lambda _event: None),
        lambda brokers, _partitions: sent.append(frozenset(brokers)),
        switches,
    )
    try:
        assert ctx.replicas_on_brokers([3]) == []
        assert ctx.partitions_with_offline_leader() == [TP]
        ctx.remove_live_brokers([3])
        changes.on_broker_failure([3])
    finally:
        channels.shutdown()
    return sent


def test_the_live_brokers_learn_that_a_broker_hosting_nothing_died() -> None:
    assert _update_metadata_after_failure(NO_BUGS) == [frozenset({2})]


def test_kafka_13225_sends_no_update_metadata_while_a_partition_is_offline() -> None:
    switches = BugSwitches(frozenset({NO_METADATA_FOR_EMPTY_BROKER}))
    assert _update_metadata_after_failure(switches) == []
