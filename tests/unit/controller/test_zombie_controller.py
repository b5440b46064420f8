"""Bug switch `kafka-5310` in `KafkaController`: a controller that resigns keeps its
active state (context, channels, rebalance timer) and goes on acting on its events, so it
sends requests at the epoch it no longer holds; without the switch resigning tears all of
it down and an event for the active controller is ignored.

Setup: broker 9 is the controller at epoch 4 (`/controller_epoch` zkVersion 12); brokers
1 and 2 are registered; "orders" partition 0 has replicas 1, 2 and is led by 2 (ISR 1, 2),
so the preferred replica 1 does not lead and the auto rebalance would move it. The
session expires; then the rebalance timer's event arrives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import ZOMBIE_CONTROLLER
from controller import events as ev
from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.controller import KafkaController
from controller.testing.brokers import FakeChannels, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment

CONTROLLER_ID = 9
EPOCH = 4
TP = TopicPartition("orders", 0)


def _leader_and_isr(channels: FakeChannels) -> list[m.LeaderAndIsrRequest]:
    return [r for r in channels.calls() if isinstance(r, m.LeaderAndIsrRequest)]


def _active_controller(
    switches: BugSwitches, channels: FakeChannels, events: RecordingEventLog
) -> KafkaController:
    """A controller that won epoch 4 (the election itself is not under test)."""
    zk = FakePartitionZk(12)
    config = ControllerConfig(bug_switches=switches)
    controller = KafkaController(
        CONTROLLER_ID, cast(KafkaZkClient, zk), events, lambda: 0, config, channels
    )
    ctx = controller.context
    ctx.epoch, ctx.epoch_zk_version = EPOCH, 12
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    ctx.add_topic(TP.topic, {0: ReplicaAssignment((1, 2))})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (1, 2), 7), EPOCH)
    zk.put_state(TP, state, 7)
    ctx.set_leadership(TP, state)
    controller.active = ActiveController(
        CONTROLLER_ID,
        ctx,
        cast(KafkaZkClient, zk),
        events,
        controller._watchers,
        config,
        channels,
    )
    controller.active.partitions.startup()
    controller.active.channels.startup(ctx.live_brokers())
    controller._active_controller_id = CONTROLLER_ID
    return controller


@pytest.fixture
def built() -> Iterator[list[KafkaController]]:
    made: list[KafkaController] = []
    yield made
    for controller in made:
        if controller.active is not None:
            controller.active.elections.stop_rebalance_timer()
            controller.active.channels.shutdown()


def _expired_then_rebalance(
    built: list[KafkaController],
    switches: BugSwitches,
    channels: FakeChannels,
    events: RecordingEventLog | None = None,
) -> KafkaController:
    controller = _active_controller(switches, channels, events or RecordingEventLog())
    built.append(controller)
    controller.process(ev.Expire())
    assert not controller.is_active
    controller.process(ev.AutoPreferredReplicaLeaderElection())
    return controller


def test_a_resigned_controller_acts_no_more_by_default(built: list[KafkaController]) -> None:
    channels, events = FakeChannels(), RecordingEventLog()
    controller = _expired_then_rebalance(built, NO_BUGS, channels, events)
    assert controller.active is None
    assert controller.context.epoch == 0  # reset
    assert _leader_and_isr(channels) == []
    (resigned,) = events.of_kind(EventKind.CONTROLLER_RESIGNED)
    assert resigned["controller_epoch"] == EPOCH


def test_kafka_5310_a_resigned_controller_goes_on_sending_at_its_old_epoch(
    built: list[KafkaController],
) -> None:
    channels = FakeChannels()
    controller = _expired_then_rebalance(
        built, BugSwitches(frozenset({ZOMBIE_CONTROLLER})), channels
    )
    assert controller.active is not None
    assert controller.context.epoch == EPOCH  # kept
    sent = wait_until(lambda: _leader_and_isr(channels), 5, "the resigned controller sent nothing")
    assert {r.header.controller_epoch for r in sent} == {EPOCH}
    assert {s.leader for r in sent for s in r.partition_states} == {1}
