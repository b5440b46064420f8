"""Topic deletion on a real ensemble with broker processes, named after Kafka's
DeleteTopicTest.

Setup: a fresh chroot per test, brokers 1-3 as processes, topic `t` with two partitions on
every broker and a few acknowledged records in each. Steps: a deletion request is written
(as `kafka-topics.sh --delete --zookeeper` writes it, or through `testbed topics delete`).
Validation: the topic's znodes (`/brokers/topics/t` with its partition and state znodes,
`/config/topics/t`, `/admin/delete_topics/t`), the partition directories under each
broker's data directory (`<run_dir>/data/broker<id>/t-<p>`), and every broker's Metadata
answer (UNKNOWN_TOPIC_OR_PARTITION once its cache dropped the topic).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors, RpcError
from rpc.wire import ClientApiClient
from testbed.__main__ import main
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.errors import ControllerMovedError
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

SESSION_MS = 3000
TOPIC = "t"
PARTITIONS = (0, 1)
Start = Callable[..., BrokerProcess]


class Cluster:
    """Brokers 1-3 and the topic under test."""

    def __init__(self, brokers: Start, zk_client: KazooClient, run_dir: Path) -> None:
        self.kazoo = zk_client
        self.zk = KafkaZkClient(zk_client)
        self.deletion = TopicDeletionZk(self.zk)
        self.run_dir = run_dir
        self.procs = {b: brokers(b, SESSION_MS) for b in (1, 2, 3)}
        wait_until(
            lambda: (
                set(self.zk.get_all_brokers().brokers) == {1, 2, 3}
                and self.zk.get_controller_id() is not None
                and all(p.port() for p in self.procs.values())
            ),
            30,
            lambda: "brokers did not start:\n" + self.tails(),
        )

    def tails(self) -> str:
        return "\n".join(p.log_tail(15) for p in self.procs.values())

    def create(self, name: str = TOPIC, config: dict[str, str] | None = None) -> None:
        """Create `name` (partition 0 on 1,2,3 and partition 1 on 2,3,1), wait until every
        partition has its full ISR, and write a record to each."""
        assignment = {0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1))}
        self.zk.create_topic(name, TopicAssignment(assignment), TopicConfig(config or {}))
        tps = [TopicPartition(name, p) for p in PARTITIONS]

        def online() -> bool:
            found = self.zk.get_partition_states(tps).found
            return len(found) == len(tps) and all(
                sorted(s.leader_and_isr.isr) == [1, 2, 3] for s in found.values()
            )

        wait_until(online, 20, lambda: f"{name} did not come online\n" + self.tails())
        for tp, state in self.zk.get_partition_states(tps).found.items():
            leader = self.procs[state.leader_and_isr.leader]
            with ClientApiClient(f"127.0.0.1:{leader.port()}", timeout_s=20) as client:

                def produced(c: ClientApiClient = client, p: int = tp.partition) -> bool:
                    record = m.ProducedRecord(None, b"doomed")
                    return (
                        c.produce(m.ProduceRequest.single(name, p, (record,), -1)).only.error
                        is Errors.NONE
                    )

                wait_until(produced, 20, f"could not produce to {tp}")

    def log_dir(self, broker: int, partition: int, name: str = TOPIC) -> Path:
        return self.run_dir / "data" / f"broker{broker}" / f"{name}-{partition}"

    def log_dirs(self, brokers: tuple[int, ...] = (1, 2, 3), name: str = TOPIC) -> list[Path]:
        """The partition directories of `name` that exist on `brokers`."""
        candidates = [self.log_dir(b, p, name) for b in brokers for p in PARTITIONS]
        return [d for d in candidates if d.exists()]

    def topic_znodes(self, name: str = TOPIC) -> list[str]:
        """The znodes that ZooKeeper still holds about `name`."""
        candidates = [
            paths.topic(name),
            paths.topic_partitions(name),
            *(paths.partition_state(name, p) for p in PARTITIONS),
            paths.topic_config(name),
            paths.delete_topic(name),
        ]
        return [z for z in candidates if self.kazoo.exists(z)]

    def metadata_error(self, broker: int, name: str = TOPIC) -> Errors:
        with ClientApiClient(f"127.0.0.1:{self.procs[broker].port()}", timeout_s=10) as client:
            return client.metadata((name,)).topics[0].error

    def wait_deleted(self, brokers: tuple[int, ...] = (1, 2, 3), timeout: float = 30) -> None:
        """Wait until the topic is gone from ZooKeeper, from the brokers' disks and from
        their metadata."""
        wait_until(
            lambda: not self.topic_znodes(),
            timeout,
            lambda: f"znodes left: {self.topic_znodes()}\n{self.tails()}",
        )
        wait_until(
            lambda: not self.log_dirs(brokers),
            timeout,
            lambda: f"partition directories left: {self.log_dirs(brokers)}\n{self.tails()}",
        )
        for broker in brokers:
            self.wait_forgotten(broker, timeout)

    def wait_forgotten(self, broker: int, timeout: float) -> None:
        """Wait until `broker` answers Metadata for the topic with UNKNOWN_TOPIC_OR_PARTITION."""
        wait_until(
            lambda: self.metadata_error(broker) is Errors.UNKNOWN_TOPIC_OR_PARTITION,
            timeout,
            f"broker {broker} still has metadata for {TOPIC}",
        )

    def halt_deletion(self) -> int:
        """Kill a broker that is not the controller, wait until its session expired, request
        the deletion of the topic and wait until the controller halts it; returns the
        killed broker."""
        controller = self.zk.get_controller_id()
        victim = max(b for b in (1, 2, 3) if b != controller)
        self.procs[victim].kill()
        wait_until(
            lambda: victim not in self.zk.get_all_brokers().brokers,
            20,
            f"broker {victim}'s session did not expire",
        )
        assert self.deletion.mark_topic_for_deletion(TOPIC)
        wait_until(
            lambda: self.controller_events("topic_deletion_ineligible"),
            20,
            lambda: "the deletion was not halted\n" + self.tails(),
        )
        return victim

    def controller_events(self, kind: str) -> list[dict[str, object]]:
        """Events of one kind written by whichever broker was controller."""
        return [e for p in self.procs.values() for e in p.events() if e["kind"] == kind]


@pytest.fixture
def cluster(brokers: Start, zk_client: KazooClient, run_dir: Path) -> Cluster:
    return Cluster(brokers, zk_client, run_dir)


def test_delete_topic_with_all_alive_replicas(cluster: Cluster) -> None:
    """Kafka's testDeleteTopicWithAllAliveReplicas: every replica is deleted, then every
    znode of the topic; another topic is untouched."""
    cluster.create(config={"retention.ms": "1000"})
    cluster.create("kept")
    assert len(cluster.log_dirs()) == 6
    assert cluster.kazoo.exists(paths.topic_config(TOPIC))
    assert cluster.deletion.mark_topic_for_deletion(TOPIC)
    cluster.wait_deleted()
    assert TOPIC not in cluster.zk.get_all_topics()
    (completed,) = cluster.controller_events("topic_deletion_completed")
    assert completed["topic"] == TOPIC
    assert completed["partitions"] == 2
    # the other topic is intact, on disk and in metadata
    assert len(cluster.log_dirs(name="kept")) == 6
    assert all(cluster.metadata_error(b, "kept") is Errors.NONE for b in (1, 2, 3))


def test_delete_topic_with_dead_replica_waits_for_the_broker(cluster: Cluster) -> None:
    """Kafka's testResumeDeleteTopicWithRecoveredFollower: with a replica's broker down
    the deletion halts (the live replicas are deleted, the topic and its request stay);
    once the broker returns, its replicas are deleted and the topic is torn down."""
    cluster.create()
    victim = cluster.halt_deletion()
    survivors = tuple(b for b in (1, 2, 3) if b != victim)
    halted = cluster.controller_events("topic_deletion_ineligible")[0]
    assert halted["reason"] == "offline replicas"
    assert halted["replicas"] == [[0, victim], [1, victim]]
    wait_until(
        lambda: not cluster.log_dirs(survivors),
        20,
        lambda: f"live replicas were not deleted: {cluster.log_dirs(survivors)}",
    )
    for broker in survivors:
        cluster.wait_forgotten(broker, 20)
    # the topic waits for the dead replicas
    assert cluster.kazoo.exists(paths.topic(TOPIC))
    assert cluster.kazoo.exists(paths.delete_topic(TOPIC))
    assert len(cluster.log_dirs((victim,))) == 2
    assert cluster.controller_events("topic_deletion_completed") == []
    cluster.procs[victim].start()
    cluster.wait_deleted()
    assert cluster.controller_events("topic_deletion_completed")


def test_partitions_added_during_deletion_are_undone(cluster: Cluster) -> None:
    """Kafka's testAddPartitionDuringDeleteTopic. Setup: the deletion of t halts while a
    replica's broker is down. Steps: an admin rewrites `/brokers/topics/t` with a third
    partition; then the broker returns. Validate: the controller writes the topic znode
    back to partitions 0 and 1 (`partitions_added` with `restored`), never creates t-2;
    the returning broker, which starts while t is being deleted, never answers Metadata
    with t's partitions as live; the deletion then completes."""
    cluster.create()
    victim = cluster.halt_deletion()
    data, _ = cluster.kazoo.get(paths.topic(TOPIC))
    before = TopicZNode.decode(data)
    grown = replace(before, partitions={**before.partitions, 2: ReplicaAssignment((1, 2, 3))})
    cluster.kazoo.set(paths.topic(TOPIC), TopicZNode.encode(grown))

    def restored() -> bool:
        added = cluster.controller_events("partitions_added")
        current = TopicZNode.decode(cluster.kazoo.get(paths.topic(TOPIC))[0])
        return bool(added) and current.partitions == before.partitions

    wait_until(restored, 20, lambda: "the topic znode was not restored\n" + cluster.tails())
    (added,) = cluster.controller_events("partitions_added")
    assert (added["partitions"], added["created"], added["restored"]) == ([2], False, True)
    assert not cluster.kazoo.exists(paths.partition_state(TOPIC, 2))

    answers: list[Errors] = []

    def deleted_while_watching_the_returning_broker() -> bool:
        if cluster.procs[victim].port():
            with suppress(RpcError):  # not serving yet
                answers.append(cluster.metadata_error(victim))
        return not cluster.topic_znodes()

    cluster.procs[victim].start()
    wait_until(
        deleted_while_watching_the_returning_broker,
        30,
        lambda: f"znodes left: {cluster.topic_znodes()}\n{cluster.tails()}",
    )
    assert Errors.NONE not in answers
    cluster.wait_deleted()
    assert not cluster.kazoo.exists(paths.partition_state(TOPIC, 2))


def test_delete_nonexistent_topic(cluster: Cluster) -> None:
    """Kafka's testDeleteNonExistentTopic: the request is removed, nothing else changes."""
    cluster.create()
    assert cluster.deletion.mark_topic_for_deletion("ghost")
    wait_until(
        lambda: not cluster.kazoo.exists(paths.delete_topic("ghost")),
        20,
        "the request for an unknown topic was not removed",
    )
    requested = cluster.controller_events("topic_deletion_requested")
    assert any(e["unknown"] == ["ghost"] for e in requested)
    assert len(cluster.log_dirs()) == 6
    assert cluster.kazoo.exists(paths.topic(TOPIC))
    assert all(cluster.metadata_error(b) is Errors.NONE for b in (1, 2, 3))


def test_deletion_resumes_after_controller_failover(cluster: Cluster) -> None:
    """Kafka's testDeleteTopicDuringControllerFailover, made deterministic: the request is
    written while no broker runs; the controller elected at restart finds it in its
    failover and deletes the topic."""
    cluster.create()
    for proc in cluster.procs.values():
        proc.kill()
    wait_until(
        lambda: not cluster.zk.get_all_brokers().brokers and cluster.zk.get_controller_id() is None,
        30,
        "the killed brokers' sessions did not expire",
    )
    assert cluster.deletion.mark_topic_for_deletion(TOPIC)
    for proc in cluster.procs.values():
        proc.start()
    cluster.wait_deleted(timeout=60)
    failover_requests = [
        e
        for e in cluster.controller_events("topic_deletion_requested")
        if e["source"] == "failover"
    ]
    assert failover_requests
    assert failover_requests[0]["topics"] == [TOPIC]


def test_cli_delete_removes_the_topic(
    cluster: Cluster, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`testbed topics delete --topic t` marks it for deletion; the controller deletes it."""
    cluster.create()
    assert main(["topics", "delete", "--zk", zk_connect, "--topic", TOPIC]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"Topic {TOPIC} is marked for deletion."
    cluster.wait_deleted()


def test_cli_delete_without_a_controller(
    zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a controller the request stays: a second delete says so; an unknown topic is
    a clear error (exit 1) and writes nothing."""
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    zk.create_topic(TOPIC, TopicAssignment({0: ReplicaAssignment((1,))}))
    argv = ["topics", "delete", "--zk", zk_connect, "--topic"]
    assert main([*argv, TOPIC]) == 0
    assert zk_client.exists(paths.delete_topic(TOPIC))
    capsys.readouterr()
    assert main([*argv, TOPIC]) == 0
    assert capsys.readouterr().out.strip() == f"Topic {TOPIC} is already marked for deletion."
    assert main([*argv, "nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ")
    assert "'nope' does not exist" in err
    assert zk_client.get_children(paths.DELETE_TOPICS) == [TOPIC]


def test_topic_znodes_are_removed_in_one_fenced_write(zk_client: KazooClient) -> None:
    """`TopicDeletionZk.delete_topic` removes the whole tree, the config and the request,
    children first; with a stale `/controller_epoch` zkVersion it removes nothing."""
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    zk_client.create(paths.CONTROLLER_EPOCH, b"1")  # zkVersion 0
    assignment = {p: ReplicaAssignment((1,)) for p in range(3)}
    zk.create_topic(TOPIC, TopicAssignment(assignment), TopicConfig({"retention.ms": "1"}))
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,)), 1)
    zk.create_partition_states({TopicPartition(TOPIC, p): state for p in range(3)}, 0)
    deletion = TopicDeletionZk(zk)
    assert deletion.mark_topic_for_deletion(TOPIC)
    assert not deletion.mark_topic_for_deletion(TOPIC)  # already marked
    assert deletion.get_topic_deletions() == [TOPIC]
    with pytest.raises(ControllerMovedError):
        deletion.delete_topic(TOPIC, epoch_zk_version=1)
    assert zk_client.exists(paths.partition_state(TOPIC, 2))
    results = deletion.delete_topic(TOPIC, epoch_zk_version=0)
    assert set(results.values()) == {True}
    assert list(results)[-2:] == [paths.topic_config(TOPIC), paths.delete_topic(TOPIC)]
    assert list(results).index(paths.partition_state(TOPIC, 0)) < list(results).index(
        paths.topic(TOPIC)
    )
    assert len(results) == 3 * 2 + 2 + 2  # P and P/state, partitions and T, config, request
    assert not zk_client.exists(paths.topic(TOPIC))
    assert not zk_client.exists(paths.topic_config(TOPIC))
    assert deletion.get_topic_deletions() == []
    assert deletion.delete_topic(TOPIC, epoch_zk_version=0) == {}  # nothing left
    gone = deletion.delete_topic_deletions(["ghost"], epoch_zk_version=0)
    assert isinstance(gone["ghost"], NoNodeError)
