"""When the auto leader rebalance runs (`ReplicaElections`): Kafka schedules one check 5 s
after failover and, after each check, the next one a check interval later; it never runs
at once. The timer is replaced by a recording `schedule`, so nothing waits."""

from __future__ import annotations

from collections.abc import Callable

from kazoo.client import KazooClient

from controller import events as ev
from controller.active import FIRST_REBALANCE_DELAY_S
from controller.context import ControllerContext
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_election import ReplicaElections
from controller.request_batch import RequestBatch
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from controller.watchers import Watchers
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment

INTERVAL_S = 300.0


class RecordingSchedule:
    """A `Schedule` that records each delay and keeps the actions for the test to run."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.actions: list[Callable[[], None]] = []

    def __call__(self, delay_s: float, action: Callable[[], None]) -> None:
        self.delays.append(delay_s)
        self.actions.append(action)


def elections(
    schedule: RecordingSchedule, queue: list[ev.ControllerEvent], interval_s: float | None
) -> ReplicaElections:
    ctx = ControllerContext()
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    ctx.add_topic("t", {0: ReplicaAssignment((1, 2))})
    events = RecordingEventLog()
    zk = FakePartitionZk()
    psm = PartitionStateMachine(ctx, zk, RequestBatch(9, ctx, RecordingSend()), events)
    never_started = KafkaZkClient(KazooClient())  # the rebalance check reads no znode
    return ReplicaElections(
        ctx, never_started, psm, events, Watchers(queue.append), 10, interval_s, schedule
    )


def test_failover_schedules_the_first_check_five_seconds_out() -> None:
    schedule, queue = RecordingSchedule(), list[ev.ControllerEvent]()
    elections(schedule, queue, INTERVAL_S).schedule_auto_rebalance(FIRST_REBALANCE_DELAY_S)
    assert schedule.delays == [5.0]
    assert queue == []  # nothing runs at once
    schedule.actions[0]()
    assert queue == [ev.AutoPreferredReplicaLeaderElection()]


def test_each_check_schedules_the_next_one_interval_later() -> None:
    schedule, queue = RecordingSchedule(), list[ev.ControllerEvent]()
    subject = elections(schedule, queue, INTERVAL_S)
    subject.schedule_auto_rebalance(FIRST_REBALANCE_DELAY_S)
    subject.auto_rebalance()
    subject.auto_rebalance()
    assert schedule.delays == [5.0, INTERVAL_S, INTERVAL_S]


def test_without_an_interval_a_check_schedules_nothing() -> None:
    schedule, queue = RecordingSchedule(), list[ev.ControllerEvent]()
    elections(schedule, queue, None).auto_rebalance()
    assert schedule.delays == []
