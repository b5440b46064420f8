"""A topic znode written straight into ZooKeeper whose name collides with an existing
topic's (`a.b` and `a_b`, which Kafka's metric names cannot tell apart) is not created by
the controller: it is logged with Kafka's message, and the existing topic is left alone,
also by the next controller after a failover.

Setup: one broker process on rack r1 (so its registration carries the rack), topic `a.b`
created by the CLI's code. Steps: write `/brokers/topics/a_b` directly; restart the
broker. Validate: the `topic_change` event names the refused topic with Kafka's message;
`a_b` never gets a state znode; `a.b` keeps its leader.
"""

from __future__ import annotations

from typing import Any

import pytest
from kazoo.client import KazooClient

from admin.topics import create_topic
from domain import TopicPartition
from harness.waiting import wait_until
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

A_DOT_B = TopicPartition("a.b", 0)


def _kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def test_a_colliding_topic_znode_is_refused_by_the_controller(
    brokers: Any, zk_client: KazooClient
) -> None:
    zk = KafkaZkClient(zk_client)
    broker = brokers(1, extra_args=("--broker-rack", "r1"))
    wait_until(lambda: zk.get_controller_id() == 1, 30, lambda: broker.log_tail(20))
    registered = zk.get_broker(1)
    assert registered is not None
    assert registered.info.rack == "r1"
    create_topic(zk, "a.b", partitions=1, replication_factor=1)
    wait_until(lambda: A_DOT_B in zk.get_partition_states([A_DOT_B]).found, 20, "a.b got no leader")
    before = zk.get_partition_states([A_DOT_B]).found[A_DOT_B]

    zk_client.create(
        paths.topic("a_b"), TopicZNode.encode(TopicAssignment({0: ReplicaAssignment((1,))}))
    )
    refusal = wait_until(
        lambda: [e for e in _kinds(broker.events(), "topic_change") if e.get("refused")],
        20,
        lambda: "no refusal was logged:\n" + broker.log_tail(20),
    )
    assert refusal[0]["refused"] == {"a_b": "Topic 'a_b' collides with existing topics: a.b"}
    assert refusal[0]["added"] == []
    assert zk_client.exists(paths.partition_state("a_b", 0)) is None
    assert zk.get_partition_states([A_DOT_B]).found[A_DOT_B] == before

    assert broker.terminate() == 0
    broker.start()
    wait_until(
        lambda: len(_kinds(broker.events(), "controller_failover_done")) == 2,
        30,
        lambda: "the restarted broker did not finish failover:\n" + broker.log_tail(20),
    )
    assert zk_client.exists(paths.partition_state("a_b", 0)) is None
    assert zk.get_partition_states([A_DOT_B]).found[A_DOT_B].leader_and_isr.leader == 1
