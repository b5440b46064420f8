"""Controlled shutdown through SIGTERM: the controller moves leaderships with the
controlled-shutdown election before the broker leaves, so no partition goes offline; and
the controller's answers to bad requests, as Kafka gives them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from kazoo.client import KazooClient

from admin.topics import create_topic
from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import BrokerControlClient
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
PARTITIONS = [TopicPartition("cs", p) for p in range(6)]


def cluster(brokers: Start, zk: KafkaZkClient) -> dict[int, BrokerProcess]:
    """Brokers 1-3 (1 starts first and is controller) and topic `cs`: 6 partitions, RF 3."""
    procs = {1: brokers(1, 3000)}
    wait_until(lambda: zk.get_controller_id() == 1, 20, procs[1].log_tail)
    procs.update({i: brokers(i, 3000) for i in (2, 3)})
    wait_until(
        lambda: all(p.port() for p in procs.values()) and len(zk.get_all_brokers().brokers) == 3,
        30,
        "brokers did not start",
    )
    create_topic(zk, "cs", 6, 3, rng=random.Random(11))
    wait_until(
        lambda: (
            all(
                len(s.leader_and_isr.isr) == 3
                for s in zk.get_partition_states(PARTITIONS).found.values()
            )
            and len(zk.get_partition_states(PARTITIONS).found) == 6
        ),
        20,
        "topic not fully in sync",
    )
    return procs


def events(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    """One broker's events of one kind."""
    return [e for e in proc.events() if e["kind"] == kind]


@pytest.mark.parametrize("victim", [2, 1], ids=["a-follower-broker", "the-controller"])
def test_controlled_shutdown_leaves_no_offline_partition_and_the_reply_is_empty(
    brokers: Start, zk_client: KazooClient, victim: int
) -> None:
    """SIGTERM to a broker: its leaderships move by the controlled-shutdown election while
    it is still registered, the controller answers with no partition left, the broker exits
    0, and no partition of the topic ever went offline."""
    zk = KafkaZkClient(zk_client)
    procs = cluster(brokers, zk)
    before = zk.get_partition_states(PARTITIONS).found
    led = sorted(tp.partition for tp, s in before.items() if s.leader_and_isr.leader == victim)
    assert led, "the victim leads nothing; the seeded assignment should give it leaders"
    assert procs[victim].terminate(timeout=20) == 0
    after = zk.get_partition_states(PARTITIONS).found
    assert all(s.leader_and_isr.leader not in (victim, -1) for s in after.values())
    # The ISRs lose the victim for good only once it is gone: a fetch of its that a leader
    # answered after the shrink may add it back (Kafka 2.8 has the same window), and its
    # departure from /brokers/ids removes it again.
    wait_until(
        lambda: all(
            victim not in s.leader_and_isr.isr
            for s in zk.get_partition_states(PARTITIONS).found.values()
        ),
        20,
        f"broker {victim} is still in an ISR after it left",
    )
    attempts = events(procs[victim], "controlled_shutdown_attempt")
    assert [a["outcome"] for a in attempts] == ["done"]
    moved = [
        e["partition"]
        for p in procs.values()
        for e in events(p, "leader_elected")
        if e["strategy"] == "controlled_shutdown" and e["topic"] == "cs"
    ]
    assert sorted(moved) == led
    offline = [
        e
        for p in procs.values()
        for e in events(p, "partition_state_change")
        if e["target"] == "OfflinePartition" and e["partitions"] > 0
    ]
    assert offline == []
    if victim == 1:  # the old controller handled its own request, then another took over
        wait_until(lambda: zk.get_controller_id() in (2, 3), 10, "no new controller")


def test_controller_answers_bad_controlled_shutdown_requests_as_kafka_does(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Stale broker epoch: STALE_BROKER_EPOCH; unknown broker: BROKER_NOT_AVAILABLE; a
    broker that is not controller: NOT_CONTROLLER. None of them moves anything."""
    zk = KafkaZkClient(zk_client)
    procs = cluster(brokers, zk)
    before = zk.get_partition_states(PARTITIONS).found
    epoch2 = zk.get_broker(2)
    assert epoch2 is not None
    with BrokerControlClient(f"127.0.0.1:{procs[1].port()}") as controller:
        stale = controller.controlled_shutdown(m.ControlledShutdownRequest(2, epoch2.epoch - 1))
        assert stale.error is Errors.STALE_BROKER_EPOCH
        unknown = controller.controlled_shutdown(m.ControlledShutdownRequest(9, -1))
        assert unknown.error is Errors.BROKER_NOT_AVAILABLE
    with BrokerControlClient(f"127.0.0.1:{procs[3].port()}") as other:
        assert other.controlled_shutdown(m.ControlledShutdownRequest(2, epoch2.epoch)).error is (
            Errors.NOT_CONTROLLER
        )
    after = zk.get_partition_states(PARTITIONS).found
    assert {tp: s.leader_and_isr for tp, s in after.items()} == {
        tp: s.leader_and_isr for tp, s in before.items()
    }
