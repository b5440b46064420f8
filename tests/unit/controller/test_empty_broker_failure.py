"""A broker hosting no replica dies while a partition has no live leader (KAFKA-13225):
by default the controller tells the live brokers with an UpdateMetadata of its own; with
bug switch `kafka-13225` it sends none, as Kafka did while it sent that UpdateMetadata
only when no partition had an offline leader, and the live brokers keep the dead broker
among their live brokers.

Setup: brokers 2 and 3 are live; "orders" partition 0 has the one replica 1, a broker
that is already dead, so the partition is offline. Broker 3 hosts nothing and dies.
"""

from __future__ import annotations

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NO_METADATA_FOR_EMPTY_BROKER
from controller.context import ControllerContext, PartitionReplica
from controller.states import PartitionState, ReplicaState
from controller.testing.broker_changes import broker_changes_for
from controller.testing.brokers import make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
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
    sent: list[frozenset[int]] = []
    changes, channels = broker_changes_for(
        ctx,
        zk,
        events,
        switches,
        update_metadata=lambda brokers, _partitions: sent.append(frozenset(brokers)),
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
