"""The controller core on a real ensemble with broker processes, named after Kafka's
ControllerIntegrationTest where they match.

Setup: a fresh chroot per test; brokers as processes. Validation reads the state znodes,
the brokers' Metadata answers (what UpdateMetadata told them) and their event logs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from kazoo.client import KazooClient

from admin.topics import create_topic
from domain import LeaderIsrAndControllerEpoch, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from testbed.topics import describe_topics, filter_partitions
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment
from zkdata.znodes import ControllerEpochZNode, TopicPartitionStateZNode

pytestmark = pytest.mark.integration

SESSION_MS = 3000
Start = Callable[..., BrokerProcess]


def start_brokers(
    brokers: Start, zk: KafkaZkClient, ids: list[int], session_ms: int = SESSION_MS
) -> dict[int, BrokerProcess]:
    """Start brokers and wait until they are registered, serving, and one controls them."""
    procs = {i: brokers(i, session_ms) for i in ids}
    wait_until(
        lambda: (
            set(ids) <= set(zk.get_all_brokers().brokers)
            and zk.get_controller_id() is not None
            and all(p.port() for p in procs.values())
        ),
        30,
        lambda: "brokers did not start:\n" + "\n".join(p.log_tail(10) for p in procs.values()),
    )
    return procs


def states(zk: KafkaZkClient, topic: str, count: int) -> dict[int, LeaderIsrAndControllerEpoch]:
    """The state znodes of a topic's partitions that exist."""
    reads = zk.get_partition_states(TopicPartition(topic, p) for p in range(count))
    return {tp.partition: s for tp, s in reads.found.items()}


def complete(
    zk: KafkaZkClient, topic: str, count: int
) -> dict[int, LeaderIsrAndControllerEpoch] | None:
    """All `count` state znodes of a topic, or None while some are missing."""
    found = states(zk, topic, count)
    return found if len(found) == count else None


def events_of(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    """One broker's events of one kind."""
    return [e for e in proc.events() if e["kind"] == kind]


def test_empty_cluster(brokers: Start, zk_client: KazooClient) -> None:
    """A lone broker becomes controller at epoch 1 and finishes failover with no partitions."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1])
    done = wait_until(
        lambda: events_of(procs[1], "controller_failover_done"), 10, "failover did not finish"
    )
    assert done[0]["controller_epoch"] == 1
    assert done[0]["partitions"] == 0
    assert zk_client.get(paths.CONTROLLER_EPOCH)[0] == b"1"


def test_failover_runs_kafkas_steps_in_kafkas_order(brokers: Start, zk_client: KazooClient) -> None:
    """Kafka 2.8's onControllerFailover. Setup: topic t on broker 1 and a pending ISR change
    notification, written before any broker runs. Steps: start broker 1. Validate: the
    failover steps come in Kafka's order; the notification is removed (not handled) before
    the first UpdateMetadata, which goes out after the context is loaded and before the
    state machines start; the first auto rebalance is scheduled 5 s out."""
    zk = KafkaZkClient(zk_client)
    zk.create_topic("t", TopicAssignment({0: ReplicaAssignment((1,))}))
    zk.create_isr_change_notification([TopicPartition("t", 0)])
    procs = start_brokers(brokers, zk, [1])
    wait_until(
        lambda: events_of(procs[1], "controller_failover_done"), 10, "failover did not finish"
    )
    events = procs[1].events()
    steps = [e for e in events if e["kind"] == "controller_failover_step"]
    assert [e["step"] for e in steps] == [
        "watches_registered",
        "notifications_removed",
        "context_initialized",
        "update_metadata_sent",
        "state_machines_started",
        "reassignments_resumed",
        "deletions_resumed",
        "preferred_elections_done",
        "auto_rebalance_scheduled",
    ]
    assert steps[1]["isr_change_notifications"] == 1
    assert steps[-1]["delay_s"] == 5.0
    assert zk_client.get_children(paths.ISR_CHANGE_NOTIFICATION) == []
    assert events_of(procs[1], "isr_change_handled") == []
    position = {id(e): i for i, e in enumerate(events)}
    first_update = next(
        e for e in events if e["kind"] == "control_request_sent" and e["api"] == "UpdateMetadata"
    )
    assert position[id(steps[2])] < position[id(first_update)] < position[id(steps[3])]


def test_topic_creation(brokers: Start, zk_client: KazooClient) -> None:
    """A topic with 3 partitions, RF 3: every partition comes online led by its first
    replica with the full ISR at leader epoch 0, and every broker's metadata shows it."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1, 2, 3])
    assignment = create_topic(zk, "orders", 3, 3, rng=random.Random(7))
    found = wait_until(
        lambda: complete(zk, "orders", 3),
        15,
        "state znodes were not created",
    )
    for partition, state in found.items():
        lai = state.leader_and_isr
        assert lai.leader == assignment[partition][0]
        assert sorted(lai.isr) == [1, 2, 3]
        assert lai.leader_epoch == 0
    expected = {p: found[p].leader_and_isr.leader for p in range(3)}
    for proc in procs.values():
        with ClientApiClient(f"127.0.0.1:{proc.port()}") as client:

            def told(c: ClientApiClient = client) -> dict[int, int] | None:
                topic = c.metadata(("orders",)).topics[0]
                leaders = {p.partition: p.leader for p in topic.partitions}
                return leaders if topic.error is Errors.NONE and len(leaders) == 3 else None

            leaders = wait_until(told, 10, f"broker {proc.broker_id} has no metadata for it")
        assert leaders == expected
    leaders_told = [
        e
        for e in procs[1].events()
        if e["kind"] == "request_accepted" and e["api"] == "LeaderAndIsr"
    ]
    assert any(e["partitions"] == 3 for e in leaders_told)


def test_topic_creation_with_offline_replica(brokers: Start, zk_client: KazooClient) -> None:
    """A replica assigned to a broker that is down is left out of the leader and ISR."""
    zk = KafkaZkClient(zk_client)
    start_brokers(brokers, zk, [1, 2])
    zk.create_topic("t", TopicAssignment({0: ReplicaAssignment((3, 1, 2))}))
    state = wait_until(lambda: states(zk, "t", 1).get(0), 15, "partition not created")
    assert state.leader_and_isr.leader == 1
    assert sorted(state.leader_and_isr.isr) == [1, 2]


def test_broker_failure_moves_leaders_to_live_brokers(
    brokers: Start, zk_client: KazooClient
) -> None:
    """kill -9 of a broker: within the session timeout plus a small bound every partition
    it led has a live leader with a bumped leader epoch, and it left every ISR."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1, 2, 3])
    create_topic(zk, "t", 6, 3, rng=random.Random(1))
    before = wait_until(lambda: complete(zk, "t", 6), 15, "topic not created")
    controller = zk.get_controller_id()
    victim = next(b for b in (1, 2, 3) if b != controller)
    led = [p for p, s in before.items() if s.leader_and_isr.leader == victim]
    assert led, "the victim leads nothing; the assignment should spread leaders"
    procs[victim].kill()

    def moved() -> dict[int, LeaderIsrAndControllerEpoch] | None:
        now = states(zk, "t", 6)
        ok = all(
            s.leader_and_isr.leader in (1, 2, 3)
            and s.leader_and_isr.leader != victim
            and victim not in s.leader_and_isr.isr
            for s in now.values()
        )
        return now if ok else None

    after = wait_until(moved, SESSION_MS / 1000 + 5, "leaders did not move off the dead broker")
    live = set(zk.get_all_brokers().brokers)
    described = describe_topics(zk, ["t"])
    assert len(filter_partitions(described, live, True, False)["t"]) == 6  # all lost a replica
    assert filter_partitions(described, live, False, True) == {}  # none is without a leader
    for partition in led:
        assert (
            after[partition].leader_and_isr.leader_epoch
            > before[partition].leader_and_isr.leader_epoch
        )
    survivor = procs[controller]  # type: ignore[index]
    with ClientApiClient(f"127.0.0.1:{survivor.port()}") as client:
        wait_until(
            lambda: all(
                p.leader != victim and victim in p.offline_replicas
                for p in client.metadata(("t",)).topics[0].partitions
            ),
            10,
            "live brokers' metadata still shows the dead broker",
        )


def test_bounced_broker_is_detected_by_czxid_and_resent_leader_and_isr(
    brokers: Start, zk_client: KazooClient
) -> None:
    """A broker restarted while the controller was not looking (paused) comes back with a
    larger czxid: the controller treats it as bounced and sends its replicas again."""
    zk = KafkaZkClient(zk_client)
    procs = {1: brokers(1, 15000)}
    wait_until(lambda: zk.get_controller_id() == 1, 20, lambda: procs[1].log_tail())
    # broker 2 is bounced while the controller is frozen: no controlled shutdown to wait for
    no_cs = ("--controlled-shutdown-enable", "false")
    procs.update({i: brokers(i, SESSION_MS, extra_args=no_cs) for i in (2, 3)})
    wait_until(lambda: len(zk.get_all_brokers().brokers) == 3, 20, "brokers 2, 3 did not join")
    create_topic(zk, "t", 3, 3, rng=random.Random(3))
    wait_until(lambda: len(states(zk, "t", 3)) == 3, 15, "topic not created")
    before = zk.get_broker(2)
    assert before is not None
    procs[1].pause()
    try:
        assert procs[2].terminate() == 0
        procs[2].start()
        wait_until(
            lambda: (b := zk.get_broker(2)) is not None and b.epoch > before.epoch,
            20,
            lambda: "broker 2 did not come back:\n" + procs[2].log_tail(),
        )
    finally:
        procs[1].resume()
    change = wait_until(
        lambda: [e for e in events_of(procs[1], "broker_change") if e["bounced"] == [2]],
        15,
        "the controller did not see broker 2 bounce",
    )
    assert change[-1]["dead"] == []
    after = zk.get_broker(2)
    assert after is not None
    wait_until(
        lambda: any(
            e["api"] == "LeaderAndIsr"
            and e["request_broker_epoch"] == after.epoch
            and e["partitions"] == 3
            for e in events_of(procs[2], "request_accepted")
        ),
        15,
        "the bounced broker was not sent LeaderAndIsr for its 3 replicas",
    )


def test_a_state_znode_from_a_newer_controller_fails_only_its_partition(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Kafka fails the state change of a partition whose state znode another controller
    wrote and goes on with the others; the controller does not resign over it. Setup:
    brokers 1-3, topic t with partitions 0 and 1 both led by a broker that is not the
    controller; t-0's state znode is rewritten with the controller epoch + 1. Steps: kill
    that broker. Validate: t-1 gets a new leader; t-0 keeps its znode, with
    `leader_election_failed` and `isr_shrink_failed` naming it and why; the controller and
    `/controller_epoch` stay, and it never resigned."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1, 2, 3])
    controller = zk.get_controller_id()
    assert controller is not None
    victim, other = (b for b in (1, 2, 3) if b != controller)
    zk.create_topic(
        "t",
        TopicAssignment(
            {0: ReplicaAssignment((victim, other)), 1: ReplicaAssignment((victim, other))}
        ),
    )
    full = wait_until(
        lambda: (
            found
            if (found := complete(zk, "t", 2))
            and all(s.leader_and_isr.isr == (victim, other) for s in found.values())
            else None
        ),
        20,
        "t did not come online with its full ISR",
    )
    epoch = full[0].controller_epoch
    newer = LeaderIsrAndControllerEpoch(full[0].leader_and_isr, epoch + 1)
    zk_client.set(paths.partition_state("t", 0), TopicPartitionStateZNode.encode(newer))
    procs[victim].kill()

    wait_until(
        lambda: (s := states(zk, "t", 2).get(1)) is not None and s.leader_and_isr.leader == other,
        SESSION_MS / 1000 + 10,
        lambda: "t-1 did not move to the live broker:\n" + procs[controller].log_tail(),
    )
    failed = wait_until(
        lambda: [
            e
            for e in events_of(procs[controller], "leader_election_failed")
            if (e["topic"], e["partition"]) == ("t", 0)
        ],
        10,
        "t-0's election did not fail",
    )
    assert "another controller" in failed[0]["reason"]
    shrink = wait_until(  # the replica state change comes after the election's
        lambda: [
            e
            for e in events_of(procs[controller], "isr_shrink_failed")
            if (e["topic"], e["partition"]) == ("t", 0)
        ],
        10,
        "t-0's ISR shrink did not fail",
    )
    assert "another controller" in shrink[0]["reason"]
    t0 = states(zk, "t", 2)[0]
    assert (t0.controller_epoch, t0.leader_and_isr.leader) == (epoch + 1, victim)
    assert zk.get_controller_id() == controller
    assert zk_client.get(paths.CONTROLLER_EPOCH)[0] == str(epoch).encode()
    assert events_of(procs[controller], "controller_resigned") == []


def test_controller_move_while_an_event_is_processing_is_fenced(
    brokers: Start, zk_client: KazooClient
) -> None:
    """The controller is frozen, `/controller_epoch` is bumped behind its back and a topic
    is created. When it wakes and handles the topic, its fenced write fails: it resigns and
    none of its writes land; the partitions are created under a newer epoch."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1, 2], session_ms=15000)
    controller = zk.get_controller_id()
    assert controller is not None
    old_epoch = zk.get_controller_epoch()
    assert old_epoch is not None
    frozen = procs[controller]
    frozen.pause()
    try:
        zk_client.set(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(old_epoch.epoch + 10))
        zk.create_topic("fenced", TopicAssignment({0: ReplicaAssignment((1, 2))}))
    finally:
        frozen.resume()
    state = wait_until(lambda: states(zk, "fenced", 1).get(0), 30, "partition never created")
    assert state.controller_epoch >= old_epoch.epoch + 11
    resigned = wait_until(
        lambda: events_of(frozen, "controller_resigned"), 10, "old controller did not resign"
    )
    assert resigned[0]["reason"].startswith("an epoch-fenced write failed"), resigned
    stale_writes = [
        e
        for p in procs.values()
        for e in events_of(p, "leader_elected")
        if e["topic"] == "fenced" and e["controller_epoch"] <= old_epoch.epoch + 10
    ]
    assert stale_writes == []


def test_metrics_are_exported_with_kafkas_names(brokers: Start, zk_client: KazooClient) -> None:
    """The controller's Prometheus endpoint reports one active controller, the topic and
    partition counts, and after a broker dies its offline partitions."""
    zk = KafkaZkClient(zk_client)
    procs = start_brokers(brokers, zk, [1])
    procs.update(start_brokers(brokers, zk, [2]))
    zk.create_topic(
        "m", TopicAssignment({0: ReplicaAssignment((2,)), 1: ReplicaAssignment((1, 2))})
    )
    wait_until(lambda: complete(zk, "m", 2), 15, "topic not created")
    controller = zk.get_controller_id()
    assert controller is not None
    scrape = procs[controller].metrics

    figures = wait_until(
        lambda: (
            (f := scrape()).get("kafka_controller_KafkaController_GlobalPartitionCount") == 2 and f
        ),
        10,
        "partition count never reached 2",
    )
    assert figures["kafka_controller_KafkaController_ActiveControllerCount"] == 1
    assert figures["kafka_controller_KafkaController_GlobalTopicCount"] == 1
    assert figures["kafka_controller_KafkaController_OfflinePartitionsCount"] == 0
    assert controller == 1  # broker 1 started alone, so it won
    assert procs[2].metrics()["kafka_controller_KafkaController_ActiveControllerCount"] == 0
    procs[2].kill()
    wait_until(
        lambda: scrape()["kafka_controller_KafkaController_OfflinePartitionsCount"] == 1,
        SESSION_MS / 1000 + 5,
        "the partition whose only replica died is not counted offline",
    )
