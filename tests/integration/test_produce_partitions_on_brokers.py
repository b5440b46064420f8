"""A Produce naming several partitions, on broker processes: the leader appends the
partitions it leads and answers the others on their own, and the client groups batches
by leader into one request per broker.

Setup: two brokers; topic `multi` with partitions 0 and 2 led by broker 1 and partition 1
by broker 2 (replication factor 2, so acks=all waits for the follower of each).
Steps: one acks=all request to broker 1 naming all three partitions and an unknown topic;
then the client's `produce_batches` over all three.
Validate: each partition's answer, and what a consumer reads from each leader.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from client import Client, Produced
from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration

TOPIC = "multi"
ASSIGNMENT = {0: (1, 2), 1: (2, 1), 2: (1, 2)}
Start = Callable[..., BrokerProcess]


def records(*values: str) -> tuple[m.ProducedRecord, ...]:
    return tuple(m.ProducedRecord(None, v.encode()) for v in values)


def read(client: ClientApiClient, partition: int) -> list[str]:
    """What a consumer reads from the partition (up to the high watermark)."""
    fetch = m.FetchRequest((m.FetchPartition(TOPIC, partition, 0, -1, 1000),))
    (fetched,) = client.fetch(fetch).partitions
    assert fetched.error is Errors.NONE, fetched
    return [r.value.decode() for r in fetched.records]


def start(brokers: Start, zk_client: KazooClient) -> dict[int, BrokerProcess]:
    procs = {b: brokers(b, 6000) for b in (1, 2)}
    for proc in procs.values():
        wait_until(proc.port, 30, proc.log_tail)
    zk = KafkaZkClient(zk_client)
    wait_until(zk.get_controller_id, 20, "no controller")
    wait_until(lambda: len(zk.get_all_brokers().brokers) == 2, 20, "both brokers registered")
    zk.create_topic(
        TOPIC,
        TopicAssignment({p: ReplicaAssignment(r) for p, r in ASSIGNMENT.items()}),
        TopicConfig({}),
    )
    tps = [TopicPartition(TOPIC, p) for p in ASSIGNMENT]

    def led_with_full_isr() -> bool:
        found = zk.get_partition_states(tps).found
        return len(found) == len(tps) and all(
            s.leader_and_isr.leader == ASSIGNMENT[tp.partition][0]
            and len(s.leader_and_isr.isr) == 2
            for tp, s in found.items()
        )

    wait_until(led_with_full_isr, 30, "the partitions did not come online")
    for b, proc in procs.items():
        wait_until(proc.applied_leader_and_isr, 20, f"broker {b}: no LeaderAndIsr")
    return procs


def test_one_request_appends_what_the_broker_leads_and_refuses_the_rest(
    brokers: Start, zk_client: KazooClient
) -> None:
    procs = start(brokers, zk_client)
    request = m.ProduceRequest(
        (
            m.PartitionRecords(TOPIC, 0, records("a0", "a1")),
            m.PartitionRecords(TOPIC, 1, records("b0")),
            m.PartitionRecords("absent", 0, records("c0")),
            m.PartitionRecords(TOPIC, 2, records("d0", "d1", "d2")),
        ),
        acks=-1,
        timeout_ms=10_000,
    )
    with ClientApiClient(f"127.0.0.1:{procs[1].port()}", timeout_s=20) as leader:
        answer = leader.produce(request)
        assert [
            (p.topic, p.partition, p.error, p.base_offset, p.last_offset) for p in answer.partitions
        ] == [
            (TOPIC, 0, Errors.NONE, 0, 1),
            (TOPIC, 1, Errors.NOT_LEADER_OR_FOLLOWER, -1, -1),
            ("absent", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
            (TOPIC, 2, Errors.NONE, 0, 2),
        ]
        # acknowledged with acks=all: already below the high watermark
        assert (read(leader, 0), read(leader, 2)) == (["a0", "a1"], ["d0", "d1", "d2"])
    with ClientApiClient(f"127.0.0.1:{procs[2].port()}", timeout_s=20) as other:
        assert read(other, 1) == []


def test_the_client_sends_one_request_per_leader(brokers: Start, zk_client: KazooClient) -> None:
    procs = start(brokers, zk_client)
    client = Client([f"127.0.0.1:{p.port()}" for p in procs.values()], topics=(TOPIC,))
    try:
        batches = [m.PartitionRecords(TOPIC, p, records(f"v{p}")) for p in (2, 1, 0)]
        results = client.produce_batches(batches, acks=-1)
        assert results == [Produced(0, 0), Produced(0, 0), Produced(0, 0)]
        with ClientApiClient(f"127.0.0.1:{procs[2].port()}", timeout_s=20) as leader:
            assert read(leader, 1) == ["v1"]
    finally:
        client.close()
