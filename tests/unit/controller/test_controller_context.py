"""`ControllerContext`: which replicas count as online, including KIP-112's offline
replicas of a live broker."""

from __future__ import annotations

from controller.context import ControllerContext
from controller.testing.brokers import make_broker
from zkdata.model import TopicPartition

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
