"""Partition reassignment on a real ensemble with broker processes, named after Kafka's
ControllerIntegrationTest and ReassignPartitionsIntegrationTest where they match.

Setup: a fresh chroot per test; broker 1 starts first and becomes the controller, then
brokers 2 and 3; topic `t` with partition 0 on [1,2] and partition 1 on [2,1], full ISRs,
and acknowledged (acks=all) records in each partition. Steps: a request is written to
`/admin/reassign_partitions` in Kafka's JSON (as `kafka-reassign-partitions.sh --execute
--zookeeper` writes it). Validation: the topic znode (replicas, no adding/removing left),
the request znode (gone once everything finished), the state znode (leader and ISR within
the target), the brokers' partition directories (`<run_dir>/data/broker<id>/t-<p>`), the
acknowledged records (all readable from the new leader), and the controller's
`reassignment_*` events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run
from kazoo.client import KazooClient

from domain import LeaderIsrAndControllerEpoch, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiClient
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment
from zkdata.reassignment import ReassignmentZk
from zkdata.znodes import TopicPartitionStateZNode

pytestmark = pytest.mark.integration

SESSION_MS = 3000
#: Broker 3's session outlives a pause of several seconds (SIGSTOP) without expiring.
LONG_SESSION_MS = 30_000
TOPIC = "t"
T0 = TopicPartition(TOPIC, 0)
T1 = TopicPartition(TOPIC, 1)
RECORDS = 20
Start = Callable[..., BrokerProcess]


class Cluster:
    """Brokers 1-3 (1 the controller), topic `t` and its acknowledged records."""

    def __init__(
        self,
        brokers: Start,
        zk_client: KazooClient,
        run_dir: Path,
        partitions: dict[int, tuple[int, ...]] | None = None,
        broker3_session_ms: int = LONG_SESSION_MS,
    ) -> None:
        self.kazoo = zk_client
        self.zk = KafkaZkClient(zk_client)
        self.reassign = ReassignmentZk(self.zk)
        self.run_dir = run_dir
        self.procs = {1: brokers(1, SESSION_MS)}
        wait_until(lambda: self.zk.get_controller_id() == 1, 30, self.tails)
        self.procs[2] = brokers(2, SESSION_MS)
        self.procs[3] = brokers(3, broker3_session_ms)
        wait_until(
            lambda: (
                set(self.zk.get_all_brokers().brokers) == {1, 2, 3}
                and all(p.port() for p in self.procs.values())
            ),
            30,
            lambda: "brokers did not start:\n" + self.tails(),
        )
        layout = partitions or {0: (1, 2), 1: (2, 1)}
        self.zk.create_topic(
            TOPIC, TopicAssignment({p: ReplicaAssignment(r) for p, r in layout.items()})
        )
        self.tps = [TopicPartition(TOPIC, p) for p in sorted(layout)]
        wait_until(
            lambda: all(sorted(self.isr(tp)) == sorted(layout[tp.partition]) for tp in self.tps),
            20,
            lambda: "the topic did not come online with full ISRs\n" + self.tails(),
        )
        self.acked = {tp: self.produce(tp, RECORDS) for tp in self.tps}

    def tails(self) -> str:
        return "\n".join(p.log_tail(15) for p in self.procs.values())

    # -- ZooKeeper views ------------------------------------------------------------------

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self.zk.get_partition_states([tp]).found.get(tp)

    def isr(self, tp: TopicPartition) -> tuple[int, ...]:
        state = self.state(tp)
        return state.leader_and_isr.isr if state else ()

    def leader(self, tp: TopicPartition) -> int:
        state = self.state(tp)
        return state.leader_and_isr.leader if state else -1

    def assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        found = self.zk.get_topic_assignments([tp.topic]).found[tp.topic]
        return found.partitions[tp.partition]

    def request_pending(self) -> bool:
        return self.kazoo.exists(paths.REASSIGN_PARTITIONS) is not None

    def wait_reassigned(
        self, targets: dict[TopicPartition, tuple[int, ...]], timeout: float = 40
    ) -> None:
        """Wait until every partition has exactly its target replicas, nothing in flight,
        a full ISR within the target and no pending request."""

        def done() -> bool:
            return not self.request_pending() and all(
                self.assignment(tp) == ReplicaAssignment(target)
                and sorted(self.isr(tp)) == sorted(target)
                and self.leader(tp) in target
                for tp, target in targets.items()
            )

        wait_until(
            done,
            timeout,
            lambda: (
                "reassignment did not finish: "
                + ", ".join(f"{tp}: {self.assignment(tp)} isr={self.isr(tp)}" for tp in targets)
                + f" request pending: {self.request_pending()}\n"
                + self.tails()
            ),
        )

    # -- data -----------------------------------------------------------------------------

    def client(self, broker: int) -> ClientApiClient:
        return ClientApiClient(f"127.0.0.1:{self.procs[broker].port()}", timeout_s=20)

    def produce(self, tp: TopicPartition, count: int) -> list[bytes]:
        """Write `count` records with acks=all to the partition's leader; returns them."""
        values = [f"{tp}-{i}".encode() for i in range(count)]
        records = tuple(m.ProducedRecord(None, v) for v in values)

        def acked() -> bool:
            with self.client(self.leader(tp)) as c:
                reply = c.produce(m.ProduceRequest.single(tp.topic, tp.partition, records, -1)).only
            return reply.error is Errors.NONE

        wait_until(acked, 20, f"could not produce to {tp}")
        return values

    def wait_all_acked_readable(self, tp: TopicPartition, timeout: float = 20) -> None:
        """Wait until the current leader serves every acknowledged record of `tp` (a new
        leader's high watermark catches up once its followers fetch)."""
        wait_until(
            lambda: self.consume(tp)[: len(self.acked[tp])] == self.acked[tp],
            timeout,
            lambda: f"{tp}: acknowledged records missing: {self.consume(tp)}",
        )

    def consume(self, tp: TopicPartition) -> list[bytes]:
        """Every record up to the high watermark, read from the current leader."""
        with self.client(self.leader(tp)) as c:
            reply = c.fetch(
                m.FetchRequest((m.FetchPartition(tp.topic, tp.partition, 0, -1, 10_000),))
            )
        fetched = reply.partitions[0]
        assert fetched.error is Errors.NONE, fetched.error
        return [r.value for r in fetched.records]

    def log_dir(self, broker: int, tp: TopicPartition) -> Path:
        return self.run_dir / "data" / f"broker{broker}" / f"{tp.topic}-{tp.partition}"

    # -- events ---------------------------------------------------------------------------

    def events(self, broker: int, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.procs[broker].events() if e["kind"] == kind]


def request(*entries: tuple[TopicPartition, tuple[int, ...]]) -> tuple[PartitionReassignment, ...]:
    return tuple(PartitionReassignment(tp, replicas) for tp, replicas in entries)


def test_partition_reassignment(brokers: Start, zk_client: KazooClient, run_dir: Path) -> None:
    """Move t-0 off its leader (from [1,2] to [2,3]) and grow t-1 from [2,1] to [3,1,2].

    Validate: both finish with the target as replicas and ISR and a leader in the target;
    the removed replica's directory is deleted; every acknowledged record is readable
    from the new leader; the request znode is gone; the controller reported each start and
    completion."""
    cluster = Cluster(brokers, zk_client, run_dir)
    cluster.reassign.create_reassignments(request((T0, (2, 3)), (T1, (3, 1, 2))))
    cluster.wait_reassigned({T0: (2, 3), T1: (3, 1, 2)})

    assert cluster.leader(T0) == 2  # the first target replica in the ISR
    wait_until(
        lambda: not cluster.log_dir(1, T0).exists(),
        20,
        "broker 1 kept the directory of its removed replica of t-0",
    )
    assert cluster.log_dir(3, T0).exists()
    assert cluster.log_dir(3, T1).exists()
    for tp in (T0, T1):
        cluster.wait_all_acked_readable(tp)
    completed = {
        (e["topic"], e["partition"]): e for e in cluster.events(1, "reassignment_completed")
    }
    assert completed[(TOPIC, 0)]["replicas"] == [2, 3]
    assert completed[(TOPIC, 0)]["removed"] == [1]
    assert completed[(TOPIC, 1)]["replicas"] == [3, 1, 2]
    started = {(e["topic"], e["partition"]): e for e in cluster.events(1, "reassignment_started")}
    assert started[(TOPIC, 0)]["adding"] == [3]
    assert started[(TOPIC, 0)]["removing"] == [1]
    # The brokers' metadata follows: every broker reports the new replica set of t-0.
    wait_until(
        lambda: all(_metadata_replicas(cluster, b, T0) == (2, 3) for b in (1, 2, 3)),
        10,
        "a broker still reports the old replicas of t-0",
    )


def test_a_state_znode_from_a_newer_controller_fails_only_that_reassignment(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Kafka's updateLeaderEpoch fails the reassignment of a partition whose state znode
    another controller wrote, and nothing else. Setup: t-0's state znode is rewritten with
    the controller epoch + 1. Steps: request t-0 -> [2,3] and t-1 -> [3,1,2]. Validate:
    t-0's reassignment fails with the reason; t-1's completes; broker 1 stays the
    controller at the same epoch and never resigned."""
    cluster = Cluster(brokers, zk_client, run_dir)
    state = cluster.state(T0)
    assert state is not None
    epoch = state.controller_epoch
    newer = LeaderIsrAndControllerEpoch(state.leader_and_isr, epoch + 1)
    zk_client.set(paths.partition_state(TOPIC, 0), TopicPartitionStateZNode.encode(newer))

    cluster.reassign.create_reassignments(request((T0, (2, 3)), (T1, (3, 1, 2))))

    cluster.wait_reassigned({T1: (3, 1, 2)})
    failed = [e for e in cluster.events(1, "reassignment_failed") if e["partition"] == 0]
    assert failed
    assert "another controller" in failed[0]["reason"]
    assert cluster.zk.get_controller_id() == 1
    assert zk_client.get(paths.CONTROLLER_EPOCH)[0] == str(epoch).encode()
    assert cluster.events(1, "controller_resigned") == []


def test_partition_reassignment_resumes_after_controller_failover(
    brokers: Start,
    zk_client: KazooClient,
    zk_connect: str,
    run_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Kill the controller while a reassignment is in flight.

    Steps: pause broker 3 (SIGSTOP; its long session keeps it registered) so the replica
    being added cannot catch up; request t-0 from [1,2] to [2,3]; once the topic znode shows
    3 being added and 1 being removed, kill -9 broker 1 (the controller, t-0's leader and
    the replica being removed). Broker 2 takes over and must resume from what ZooKeeper
    holds; then broker 3 is resumed.
    Validate: the new controller reported the reassignment as resumed; it finishes with
    replicas [2,3]; no acknowledged record is lost; the request znode is gone."""
    cluster = Cluster(brokers, zk_client, run_dir)
    cluster.procs[3].pause()
    try:
        cluster.reassign.create_reassignments(request((T0, (2, 3))))
        wait_until(
            lambda: cluster.assignment(T0) == ReplicaAssignment((2, 3, 1), (3,), (1,)),
            20,
            lambda: f"the reassignment did not start: {cluster.assignment(T0)}\n" + cluster.tails(),
        )
        _, described, _ = run(capsys, "topics", "describe", "--zk", zk_connect, "--topic", TOPIC)
        assert "\tAdding Replicas: 3\tRemoving Replicas: 1" in described.splitlines()[1]
        cluster.procs[1].kill()
        wait_until(
            lambda: any(e["resumed"] for e in cluster.events(2, "reassignment_started")),
            20,
            lambda: "broker 2 did not resume the reassignment\n" + cluster.tails(),
        )
        assert cluster.zk.get_controller_id() == 2
        assert cluster.assignment(T0).is_being_reassigned  # still waiting for broker 3
    finally:
        cluster.procs[3].resume()
    cluster.wait_reassigned({T0: (2, 3)})
    cluster.wait_all_acked_readable(T0)
    [completed] = cluster.events(2, "reassignment_completed")
    assert completed["replicas"] == [2, 3]
    assert not cluster.events(1, "reassignment_completed")


def test_partition_reassignment_resumes_after_replica_comes_online(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """The broker being added dies in the middle, and the reassignment waits for it.

    Steps: pause broker 3 so that it cannot catch up; request t-0 from [1,2] to [2,3]; once
    the reassignment is in flight, kill broker 3 and wait until its registration is gone;
    then start it again.
    Validate: while broker 3 is dead the reassignment stays in flight (adding [3], request
    pending); after it returns, the controller resumes it and it completes with every
    acknowledged record readable."""
    cluster = Cluster(brokers, zk_client, run_dir, broker3_session_ms=5000)
    cluster.procs[3].pause()
    cluster.reassign.create_reassignments(request((T0, (2, 3))))
    in_flight = ReplicaAssignment((2, 3, 1), (3,), (1,))
    wait_until(
        lambda: cluster.assignment(T0) == in_flight,
        20,
        lambda: f"the reassignment did not start: {cluster.assignment(T0)}\n" + cluster.tails(),
    )
    cluster.procs[3].kill()
    wait_until(
        lambda: 3 not in cluster.zk.get_all_brokers().brokers,
        60,
        "broker 3 stayed registered",
    )
    wait_until(
        lambda: any(e["dead"] == [3] for e in cluster.events(1, "broker_change")),
        20,
        "the controller did not see broker 3 die",
    )
    assert cluster.assignment(T0) == in_flight
    assert cluster.request_pending()

    cluster.procs[3].start()
    cluster.wait_reassigned({T0: (2, 3)})
    assert any(e["resumed"] for e in cluster.events(1, "reassignment_started"))
    cluster.wait_all_acked_readable(T0)


def test_bad_reassignment_requests_are_rejected_and_lose_nothing(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Undecodable and invalid requests are removed with a reason; valid ones in the same
    request proceed; the controller keeps running.

    Steps: write a request that is not JSON; then one mixing valid and invalid entries:
    a dead broker (3, killed), an unknown broker (9), a repeated broker, an empty list, an
    negative broker id, an unknown topic, an unknown partition and a partition listed
    twice; an empty request.
    Validate: the malformed request is removed and reported; each invalid entry is reported
    with its error and its partition keeps its replicas; the valid entry completes; the
    controller is the same broker at the same epoch throughout."""
    cluster = Cluster(
        brokers,
        zk_client,
        run_dir,
        partitions={0: (1, 2), 1: (2, 1), 2: (1, 2), 3: (2, 1), 4: (1, 2)},
        broker3_session_ms=SESSION_MS,
    )
    epoch = cluster.zk.get_controller_epoch()
    cluster.kazoo.create(paths.REASSIGN_PARTITIONS, b'{"version":1,"partitions":[{"topic"')
    wait_until(lambda: not cluster.request_pending(), 20, "the malformed request stayed")
    assert any(e["path"] == paths.REASSIGN_PARTITIONS for e in cluster.events(1, "malformed_znode"))
    cluster.reassign.create_reassignments(())  # asks for nothing: cleared as well
    wait_until(lambda: not cluster.request_pending(), 20, "the empty request stayed")

    cluster.procs[3].kill()
    wait_until(
        lambda: 3 not in cluster.zk.get_all_brokers().brokers, 40, "broker 3 stayed registered"
    )
    before = {tp: cluster.assignment(tp) for tp in cluster.tps}
    t2, t3, t4 = (TopicPartition(TOPIC, p) for p in (2, 3, 4))
    cluster.reassign.create_reassignments(
        request(
            (T0, (2, 3)),  # broker 3 is dead
            (T1, (1, 9)),  # broker 9 never existed
            (t2, (1, 1)),
            (t3, ()),
            (t4, (1, -1)),
            (TopicPartition("nope", 0), (1, 2)),
            (TopicPartition(TOPIC, 7), (1, 2)),
            (t2, (2, 1)),  # t-2 listed twice
        )
    )
    wait_until(lambda: not cluster.request_pending(), 20, "the rejected requests stayed")
    rejected = {
        (e["topic"], e["partition"], tuple(e["target"])): e["error"]
        for e in cluster.events(1, "reassignment_rejected")
    }
    assert rejected == {
        (TOPIC, 0, (2, 3)): "INVALID_REPLICA_ASSIGNMENT",
        (TOPIC, 1, (1, 9)): "INVALID_REPLICA_ASSIGNMENT",
        (TOPIC, 2, (1, 1)): "INVALID_REQUEST",
        (TOPIC, 2, (2, 1)): "INVALID_REQUEST",
        (TOPIC, 3, ()): "INVALID_REPLICA_ASSIGNMENT",
        (TOPIC, 4, (1, -1)): "INVALID_REPLICA_ASSIGNMENT",
        ("nope", 0, (1, 2)): "UNKNOWN_TOPIC_OR_PARTITION",
        (TOPIC, 7, (1, 2)): "UNKNOWN_TOPIC_OR_PARTITION",
    }
    assert {tp: cluster.assignment(tp) for tp in cluster.tps} == before

    cluster.reassign.create_reassignments(request((T1, (1,)), (t3, (1, 2))))
    cluster.wait_reassigned({T1: (1,), t3: (1, 2)})
    cluster.wait_all_acked_readable(T1)
    assert cluster.zk.get_controller_epoch() == epoch
    assert cluster.zk.get_controller_id() == 1


def _metadata_replicas(cluster: Cluster, broker: int, tp: TopicPartition) -> tuple[int, ...]:
    with cluster.client(broker) as c:
        reply = c.metadata((tp.topic,))
    for partition in reply.topics[0].partitions:
        if partition.partition == tp.partition:
            return tuple(partition.replicas)
    return ()


def test_reassign_command_executes_and_verifies_a_move(
    brokers: Start,
    zk_client: KazooClient,
    zk_connect: str,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command line drives a real reassignment end to end.

    Steps: `testbed reassign generate` proposes t over brokers 2 and 3; its proposal is
    saved as the reassignment file; `execute` starts it; `verify --wait` waits for it.
    Validate: the proposal uses only brokers 2 and 3; `verify` reports every partition
    complete with exit code 0 and the topic znode holds the proposal; the rollback file
    printed by `execute`, executed in turn, brings the original assignment back."""
    cluster = Cluster(brokers, zk_client, run_dir)
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"version": 1, "topics": [{"topic": TOPIC}]}))
    code, out, err = run(
        capsys,
        "reassign",
        "generate",
        "--zk",
        zk_connect,
        "--topics-to-move-json-file",
        str(topics),
        "--broker-list",
        "2,3",
    )
    assert (code, err) == (0, "")
    proposal = json.loads(out.splitlines()[-1])
    assert all(set(p["replicas"]) <= {2, 3} for p in proposal["partitions"])
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(proposal))

    code, out, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", str(plan)
    )
    assert (code, err) == (0, "")
    rollback = tmp_path / "rollback.json"
    rollback.write_text(next(line for line in out.splitlines() if line.startswith("{")))

    verify = ("reassign", "verify", "--zk", zk_connect, "--wait", "60")
    code, out, _ = run(capsys, *verify, "--reassignment-json-file", str(plan))
    assert code == 0, out
    assert out.count("is complete.") == len(proposal["partitions"])
    for p in proposal["partitions"]:
        tp = TopicPartition(p["topic"], p["partition"])
        assert cluster.assignment(tp) == ReplicaAssignment(tuple(p["replicas"]))

    code, _, err = run(
        capsys, "reassign", "execute", "--zk", zk_connect, "--reassignment-json-file", str(rollback)
    )
    assert (code, err) == (0, "")
    code, out, _ = run(capsys, *verify, "--reassignment-json-file", str(rollback))
    assert code == 0, out
    assert cluster.assignment(T0) == ReplicaAssignment((1, 2))
    assert cluster.assignment(T1) == ReplicaAssignment((2, 1))
    for tp in (T0, T1):
        cluster.wait_all_acked_readable(tp)


def test_delete_topic_during_partition_reassignment(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Kafka's testPartitionReassignmentDuringDeleteTopic, from the other side: a topic
    whose partition is being moved is not deleted until the move completes.

    Steps: pause broker 3; request t-0 from [1,2] to [2,3]; once it is in flight, request
    the deletion of t; then resume broker 3.
    Validate: the deletion waits, marked ineligible for the reassignment in progress; once
    the reassignment completes, the deletion resumes and removes the topic's znodes."""
    cluster = Cluster(brokers, zk_client, run_dir)
    cluster.procs[3].pause()
    try:
        cluster.reassign.create_reassignments(request((T0, (2, 3))))
        wait_until(
            lambda: cluster.assignment(T0).is_being_reassigned,
            20,
            lambda: "the reassignment did not start\n" + cluster.tails(),
        )
        TopicDeletionZk(cluster.zk).mark_topic_for_deletion(TOPIC)
        wait_until(
            lambda: any(
                e["reason"] == "topic reassignment in progress"
                for e in cluster.events(1, "topic_deletion_ineligible")
            ),
            20,
            "the deletion did not wait for the reassignment",
        )
        assert cluster.kazoo.exists(paths.topic(TOPIC)) is not None
    finally:
        cluster.procs[3].resume()
    wait_until(
        lambda: (
            cluster.kazoo.exists(paths.topic(TOPIC)) is None
            and cluster.kazoo.exists(paths.delete_topic(TOPIC)) is None
        ),
        40,
        lambda: "the topic was not deleted after the reassignment\n" + cluster.tails(),
    )
    completed = [e["topic"] for e in cluster.events(1, "reassignment_completed")]
    assert completed == [TOPIC]
    [deleted] = cluster.events(1, "topic_deletion_completed")
    assert deleted["topic"] == TOPIC
