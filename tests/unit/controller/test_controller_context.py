"""`ControllerContext`: which replicas count as online, including KIP-112's offline
replicas of a live broker, and which offline partitions OfflinePartitionsCount counts."""

from __future__ import annotations

from controller.context import ControllerContext, PartitionReplica
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import make_broker
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata.model import ReplicaAssignment

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def context() -> ControllerContext:
    ctx = ControllerContext()
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    return ctx


def test_a_replica_reported_offline_is_offline_for_that_partition_only() -> None:
    ctx = context()
    ctx.mark_replicas_offline(2, [T0])
    assert not ctx.is_replica_online(2, tp=T0)
    assert not ctx.is_replica_online(2, True, T0)
    assert ctx.is_replica_online(2, tp=T1)
    assert ctx.is_replica_online(2)  # the broker itself is live
    assert ctx.replicas_offline_on(2) == frozenset({T0})


def test_a_broker_that_goes_away_forgets_its_offline_replicas() -> None:
    ctx = context()
    ctx.mark_replicas_offline(2, [T0])
    ctx.remove_live_brokers([2])
    ctx.add_live_brokers([make_broker(2, epoch=500)])
    assert ctx.is_replica_online(2, tp=T0)
    assert ctx.replicas_offline_on(2) == frozenset()


def test_a_shutting_down_broker_counts_only_when_included() -> None:
    ctx = context()
    ctx.mark_shutting_down(1)
    assert not ctx.is_replica_online(1, tp=T0)
    assert ctx.is_replica_online(1, True, T0)


def _two_offline_topics() -> ControllerContext:
    ctx = context()
    for topic in ("halted", "going"):
        ctx.add_topic(topic, {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
        for tp in ctx.partitions_of(topic):
            ctx.set_partition_state(tp, PartitionState.OFFLINE)
    return ctx


def test_offline_partitions_of_a_topic_queued_but_not_started_still_count() -> None:
    """Kafka's OfflinePartitionsCount skips only topics whose deletion has started; a
    queued topic whose deletion is halted (ineligible) is still offline."""
    ctx = _two_offline_topics()
    ctx.queue_topic_deletion(["halted", "going"])
    assert ctx.offline_partition_count() == 4
    ctx.begin_topic_deletion(["going"])
    assert ctx.offline_partition_count() == 2
    assert ctx.is_topic_deletion_in_progress("going")
    assert not ctx.is_topic_deletion_in_progress("halted")


def test_only_queued_topics_can_begin_deletion_and_removal_forgets_it() -> None:
    ctx = _two_offline_topics()
    ctx.begin_topic_deletion(["going"])  # not queued: nothing starts
    assert not ctx.is_topic_deletion_in_progress("going")
    ctx.queue_topic_deletion(["going"])
    ctx.begin_topic_deletion(["going"])
    ctx.remove_topic("going")
    ctx.add_topic("going", {0: ReplicaAssignment((1,))})  # created again with the same name
    assert not ctx.is_topic_deletion_in_progress("going")


def test_preferred_replica_imbalance_counts_partitions_led_by_another_replica() -> None:
    """Counted: a known leadership whose leader is not the first assigned replica. Not
    counted: the preferred replica leading, a topic queued for deletion, and a leadership
    of a partition the context has no replicas for."""
    ctx = context()

    def led(tp: TopicPartition, leader: int) -> None:
        ctx.set_leadership(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 1, (1, 2)), 1))

    ctx.add_topic("t", {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
    ctx.add_topic("doomed", {0: ReplicaAssignment((1, 2))})
    ctx.add_topic("bare", {0: ReplicaAssignment(())})
    led(T0, 1)
    led(T1, 1)
    led(TopicPartition("doomed", 0), 2)
    led(TopicPartition("bare", 0), 2)
    led(TopicPartition("unknown", 0), 2)
    assert ctx.preferred_replica_imbalance_count() == 2
    ctx.queue_topic_deletion(["doomed"])
    assert ctx.preferred_replica_imbalance_count() == 1
    led(T1, 2)
    assert ctx.preferred_replica_imbalance_count() == 0


def test_the_partition_count_is_every_partition_listed() -> None:
    ctx = ControllerContext()
    assert ctx.partition_count() == 0
    ctx.add_topic("a", {0: ReplicaAssignment((1,)), 1: ReplicaAssignment((2,))})
    ctx.add_topic("b", {0: ReplicaAssignment((1, 2))})
    assert ctx.partition_count() == len(ctx.all_partitions()) == 3
    ctx.remove_topic("a")
    assert ctx.partition_count() == len(ctx.all_partitions()) == 1


def test_states_set_many_at_once_read_back_one_by_one() -> None:
    ctx = ControllerContext()
    tps = [TopicPartition("t", p) for p in range(3)]
    replicas = [PartitionReplica(tp, 1) for tp in tps]
    leadership = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 2, (1,), 3), 4)
    ctx.set_replica_states(replicas[:2], ReplicaState.ONLINE)
    ctx.set_leaderships({tps[0]: leadership})
    ctx.set_partition_states({tps[1]: PartitionState.OFFLINE})
    assert ctx.replica_states(replicas) == [
        ReplicaState.ONLINE,
        ReplicaState.ONLINE,
        ReplicaState.NON_EXISTENT,
    ]
    assert ctx.replica_states(replicas) == [ctx.replica_state(r) for r in replicas]
    assert (ctx.leadership(tps[0]), ctx.leadership(tps[1])) == (leadership, None)
    assert ctx.partition_state(tps[1]) is PartitionState.OFFLINE
    ctx.set_replica_states(replicas[1:], ReplicaState.NON_EXISTENT)
    assert ctx.replica_states(replicas)[1] is ReplicaState.NON_EXISTENT
    assert ctx.replica_state(replicas[0]) is ReplicaState.ONLINE
