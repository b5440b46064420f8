"""A new controller resumes many reassignments in a few pipelined rounds, not one ZooKeeper
round trip per partition, on the real ensemble.

Setup: 4 registered brokers; topic `r` of N partitions, each moving from replicas 1,2,3 to
2,3,4 (the topic znode shows 4 being added and 1 removed, the state znodes leader 1 and
ISR 1,2,3), as a controller that died mid-reassignment leaves them.
Steps: a controller context of a fresh epoch runs `ActiveController.on_failover`, with
every request the kazoo client sends and every wait for an answer recorded.
Validate: every reassignment is reported resumed, each state znode carries the next leader
epoch of the new controller, broker 4 learns of every partition in one LeaderAndIsr, and
the rounds of requests sent after waiting for an answer stay a small constant however
large N is (before pipelining, each partition cost several rounds).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.handlers.utils import AsyncResult

from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.context import ControllerContext
from controller.testing.brokers import FakeChannels
from controller.watchers import Watchers
from domain import EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch
from eventlog import EventKind, ReassignmentStarted
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import BrokerInfo, ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicPartitionStateZNode, TopicZNode

pytestmark = pytest.mark.integration

TOPIC = "r"
MOVING = ReplicaAssignment((2, 3, 4, 1), adding_replicas=(4,), removing_replicas=(1,))
#: Rounds the whole failover may take whatever the partition count (listings, watches,
#: the context load, the resumed reassignments' reads and writes).
MAX_ROUNDS = 40


class RoundCounter:
    """Counts the rounds of a thread's ZooKeeper traffic: a request sent after the thread
    waited for an answer starts a new round (requests pipelined together share one)."""

    def __init__(self, client: KazooClient, monkeypatch: pytest.MonkeyPatch) -> None:
        self.thread = threading.get_ident()
        self.log: list[str] = []
        send: Callable[..., Any] = client._call

        def counting_call(request: object, async_object: object) -> Any:
            if threading.get_ident() == self.thread:
                self.log.append("send")
            return send(request, async_object)

        wait = AsyncResult.get

        def counting_get(result: AsyncResult, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == self.thread:
                self.log.append("wait")
            return wait(result, *args, **kwargs)

        monkeypatch.setattr(client, "_call", counting_call)
        monkeypatch.setattr(AsyncResult, "get", counting_get)

    @property
    def rounds(self) -> int:
        """Requests sent first or right after a wait."""
        return sum(
            1
            for i, entry in enumerate(self.log)
            if entry == "send" and (i == 0 or self.log[i - 1] == "wait")
        )


def _populate(zk_client: KazooClient, partitions: int) -> KafkaZkClient:
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    for broker_id in (1, 2, 3, 4):
        zk.register_broker(BrokerInfo(broker_id, (EndPoint("127.0.0.1", 9000 + broker_id),)))
    zk_client.create(
        paths.topic(TOPIC),
        TopicZNode.encode(TopicAssignment({p: MOVING for p in range(partitions)})),
        makepath=True,
    )
    state = TopicPartitionStateZNode.encode(
        LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 3), 0), 1)
    )
    tx = zk_client.transaction()
    tx.create(paths.topic_partitions(TOPIC))
    for p in range(partitions):
        tx.create(paths.topic_partition(TOPIC, p))
        tx.create(paths.partition_state(TOPIC, p), state)
    assert not [r for r in tx.commit() if isinstance(r, Exception)]
    return zk


@pytest.fixture
def fresh_controller(zk_client: KazooClient) -> Iterator[Callable[[int], Any]]:
    """Populate N moving partitions, then an active controller of a new epoch over them."""
    made: list[ActiveController] = []

    def make(partitions: int) -> tuple[ActiveController, RecordingEventLog, FakeChannels]:
        zk = _populate(zk_client, partitions)
        epoch = zk.register_controller_and_increment_epoch(9)
        context = ControllerContext()
        context.epoch = epoch.epoch
        context.epoch_zk_version = epoch.zk_version
        events, channels = RecordingEventLog(), FakeChannels()
        active = ActiveController(
            9, context, zk, events, Watchers(lambda _: None), ControllerConfig(), channels
        )
        made.append(active)
        return active, events, channels

    yield make
    for active in made:
        active.channels.shutdown()


def _leader_and_isr_to(channels: FakeChannels, broker_id: int) -> list[m.LeaderAndIsrRequest]:
    channel = channels.by_broker.get(broker_id)
    calls = channel.calls() if channel is not None else []
    return [c for c in calls if isinstance(c, m.LeaderAndIsrRequest)]


def test_resumed_reassignments_cost_no_round_trip_per_partition(
    zk_client: KazooClient,
    fresh_controller: Callable[[int], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    partitions = 300
    active, events, channels = fresh_controller(partitions)
    counter = RoundCounter(zk_client, monkeypatch)
    active.on_failover()
    monkeypatch.undo()

    assert counter.rounds <= MAX_ROUNDS, (
        f"{counter.rounds} rounds of ZooKeeper requests for {partitions} partitions"
    )
    resumed = [e for e in events.of_type(ReassignmentStarted) if e.resumed]
    assert len(resumed) == partitions
    assert not events.of_kind(EventKind.REASSIGNMENT_FAILED)
    for p in range(partitions):
        data, stat = zk_client.get(paths.partition_state(TOPIC, p))
        state = TopicPartitionStateZNode.decode(data, stat.version)
        assert (state.controller_epoch, state.leader_and_isr.leader_epoch) == (
            active.ctx.epoch,
            1,
        )
    wait_until(
        lambda: any(
            len(r.partition_states) == partitions
            and all(s.leader_epoch == 1 for s in r.partition_states)
            for r in _leader_and_isr_to(channels, 4)
        ),
        10,
        f"broker 4 got no LeaderAndIsr of all {partitions} bumped partitions",
    )
