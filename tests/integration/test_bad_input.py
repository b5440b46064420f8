"""Bad znodes never kill the controller: malformed topics, state znodes and broker ids are
reported as `malformed_znode` events and skipped, while valid topics keep working, also
across a controller failover."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]

MALFORMED_TOPICS: dict[str, bytes] = {
    "not-json": b"not json",
    "json-array": b"[1,2]",
    "not-utf8": b"\xff\xfe\x00",
    "empty": b"",
    "no-partitions": b'{"version":1}',
    "future-version": b'{"version":9,"partitions":{"0":[1]}}',
    "string-partition-key": b'{"version":1,"partitions":{"x":[1]}}',
    "string-replica": b'{"version":1,"partitions":{"0":["a"]}}',
    "huge-replica": b'{"version":1,"partitions":{"0":[99999999999]}}',
    "bool-replica": b'{"version":1,"partitions":{"0":[true]}}',
    "adding-unknown-partition": b'{"version":2,"partitions":{"0":[1]},"adding_replicas":{"5":[1]}}',
    "partitions-not-object": b'{"version":2,"partitions":[[1,2]]}',
}

#: Children of /brokers/ids that are not broker ids ("²" passes str.isdigit, not int()).
BAD_BROKER_IDS = ("\u00b2", "abc")


def online(zk: KafkaZkClient, topic: str, partitions: int) -> bool:
    """Every partition of `topic` has a leader on a live broker."""
    live = set(zk.get_all_brokers().brokers)
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions)).found
    return len(found) == partitions and all(s.leader_and_isr.leader in live for s in found.values())


def test_malformed_znodes_are_skipped_while_valid_topics_keep_working(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Twelve malformed topic znodes and a garbage state znode around valid topics: each bad
    one is reported, the valid ones come online, and the same holds after the controller is
    killed and another one loads everything again."""
    zk = KafkaZkClient(zk_client)
    procs = {i: brokers(i, 3000) for i in (1, 2)}
    wait_until(
        lambda: len(zk.get_all_brokers().brokers) == 2 and zk.get_controller_id() is not None,
        30,
        "brokers did not start",
    )
    valid = TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
    zk.create_topic("before", valid)
    for name, data in MALFORMED_TOPICS.items():
        zk_client.create(paths.topic(name), data, makepath=True)
    together = zk_client.transaction()  # the controller must never see the topic alone
    together.create(
        paths.topic("bad-state"), TopicZNode.encode(TopicAssignment({0: ReplicaAssignment((1, 2))}))
    )
    together.create(paths.topic_partitions("bad-state"))
    together.create(paths.topic_partition("bad-state", 0))
    together.create(paths.partition_state("bad-state", 0), b"{garbage")
    assert all(isinstance(r, str) for r in together.commit())
    for name in BAD_BROKER_IDS:  # not integers, one with digits that are not ASCII
        zk_client.create(paths.broker_id_child(name), b"{}", makepath=True)
    zk.create_topic("after", valid)
    wait_until(
        lambda: online(zk, "before", 2) and online(zk, "after", 2),
        20,
        "valid topics did not come online next to malformed ones",
    )
    controller = zk.get_controller_id()
    assert controller is not None

    def reported(proc: BrokerProcess) -> set[str]:
        return {str(e["path"]) for e in proc.events() if e["kind"] == "malformed_znode"}

    expected = {paths.topic(name) for name in MALFORMED_TOPICS}
    expected |= {paths.broker_id_child(name) for name in BAD_BROKER_IDS}
    wait_until(
        lambda: expected <= reported(procs[controller]),
        10,
        lambda: f"not reported: {sorted(expected - reported(procs[controller]))}",
    )
    failed = [
        e
        for e in procs[controller].events()
        if e["kind"] == "leader_election_failed" and e["topic"] == "bad-state"
    ]
    assert failed, "the partition whose state znode is garbage was not reported"
    assert zk_client.get(paths.partition_state("bad-state", 0))[0] == b"{garbage"  # untouched

    procs[controller].kill()
    successor = 3 - controller
    wait_until(
        lambda: any(e["kind"] == "controller_failover_done" for e in procs[successor].events()),
        15,
        lambda: "no failover past the malformed znodes:\n" + procs[successor].log_tail(),
    )
    assert expected <= reported(procs[successor])
    wait_until(
        lambda: online(zk, "before", 2) and online(zk, "after", 2),
        15,
        "valid topics lost their leaders after the failover",
    )
    zk.create_topic("later", valid)
    wait_until(lambda: online(zk, "later", 2), 15, "the new controller no longer creates topics")
