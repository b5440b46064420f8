"""Partitions added to an existing topic, named after Kafka's AddPartitionsTest: an admin
tool rewrites `/brokers/topics/T` with more partitions, and the controller (its data watch
on the topic znode, Kafka's PartitionModifications) creates and elects them; existing
partitions are untouched.

Setup: a fresh chroot, brokers 1-3 as processes, topic t with one partition on [1,2].
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from cli_runner import run
from kazoo.client import KazooClient

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]


def test_increase_partition_count(brokers: Start, zk_client: KazooClient) -> None:
    """Steps: rewrite the topic znode with partitions 1 on [2,3] and 2 on [3,1].
    Validate: both get a state znode with their first replica leading and the full ISR;
    partition 0 keeps its leader epoch; every broker's metadata lists three partitions, and
    a write to a new partition is acknowledged (acks=all)."""
    zk = KafkaZkClient(zk_client)
    procs = {b: brokers(b) for b in (1, 2, 3)}
    wait_until(
        lambda: (
            set(zk.get_all_brokers().brokers) == {1, 2, 3} and all(p.port() for p in procs.values())
        ),
        30,
        "brokers did not start",
    )
    zk.create_topic("t", TopicAssignment({0: ReplicaAssignment((1, 2))}))
    tps = [TopicPartition("t", p) for p in range(3)]

    def states() -> dict[int, tuple[int, int, tuple[int, ...]]]:
        found = zk.get_partition_states(tps).found
        return {
            tp.partition: (
                s.leader_and_isr.leader,
                s.leader_and_isr.leader_epoch,
                s.leader_and_isr.isr,
            )
            for tp, s in found.items()
        }

    wait_until(lambda: states().get(0, (0, 0, ()))[2] == (1, 2), 20, "t-0 did not come online")
    before = states()[0]

    grown = TopicAssignment(
        {0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 3)), 2: ReplicaAssignment((3, 1))}
    )
    zk_client.set(paths.topic("t"), TopicZNode.encode(grown))
    wait_until(
        lambda: (
            {p: (s[0], s[2]) for p, s in states().items()}
            == {0: (1, (1, 2)), 1: (2, (2, 3)), 2: (3, (3, 1))}
        ),
        20,
        lambda: f"the new partitions did not come online: {states()}",
    )
    assert states()[0] == before

    def partition_counts() -> list[int]:
        counts = []
        for proc in procs.values():
            with ClientApiClient(f"127.0.0.1:{proc.port()}", timeout_s=10) as client:
                counts.append(len(client.metadata(("t",)).topics[0].partitions))
        return counts

    wait_until(lambda: partition_counts() == [3, 3, 3], 20, "metadata missed the partitions")
    with ClientApiClient(f"127.0.0.1:{procs[3].port()}", timeout_s=10) as client:

        def acked() -> bool:
            request = m.ProduceRequest.single("t", 2, (m.ProducedRecord(None, b"new"),), -1)
            return client.produce(request).only.error is Errors.NONE

        wait_until(acked, 20, "a write to the new partition t-2 was not acknowledged")
    added = [e for e in procs[_controller(zk)].events() if e["kind"] == "partitions_added"]
    assert [(e["topic"], e["partitions"], e["created"]) for e in added] == [("t", [1, 2], True)]


def test_topics_alter_adds_a_partition_the_controller_brings_online(
    brokers: Start, zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`testbed topics alter --partitions` end to end: the new partition gets a leader."""
    zk = KafkaZkClient(zk_client)
    for b in (1, 2, 3):
        brokers(b)
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    zk.create_topic("t", TopicAssignment({0: ReplicaAssignment((1, 2))}))
    t1 = TopicPartition("t", 1)
    code, out, err = run(
        capsys, "topics", "alter", "--zk", zk_connect, "--topic", "t", "--partitions", "2"
    )
    assert (code, err) == (0, "")
    assert out.strip() == "Added partition 1 to topic t."
    wait_until(
        lambda: (
            (s := zk.get_partition_states([t1]).found.get(t1)) is not None
            and s.leader_and_isr.leader >= 0
            and len(s.leader_and_isr.isr) == 2
        ),
        20,
        "t-1 did not come online",
    )


def _controller(zk: KafkaZkClient) -> int:
    controller = zk.get_controller_id()
    assert controller is not None
    return controller
