"""A broker's log directory failing at runtime (KIP-112), on real brokers and a real
ensemble.

Setup: broker 3 is the controller; topic t has partition 0 on [1,2] (broker 1 leads it)
and partition 1 on [2,1] (broker 1 follows it); both hold a record. The directory fails
by a real I/O error no root process bypasses: one of broker 1's `hw-checkpoint` files is
replaced by a non-empty directory, so the next checkpoint write (`os.replace`) fails with
EISDIR.

Steps and checks:
- with `--on-log-dir-failure notify`, broker 1 takes both replicas offline and writes
  `/log_dir_event_notification/log_dir_event_<seq>`; the controller sends it LeaderAndIsr,
  takes the replicas it answers KAFKA_STORAGE_ERROR for offline, elects t-0's leader on
  broker 2 and deletes the notification; broker 1 stays registered. The same whether the
  failing file belongs to the partition broker 1 leads or the one it follows.
- broker 1 then answers KAFKA_STORAGE_ERROR to a StopReplica (deleting or not) and to a
  LeaderAndIsr at a newer leader epoch for its offline replicas, and keeps their files;
  deleting topic t removes broker 2's replicas and halts, keeping broker 1's.
- with the default (`halt`), broker 1 exits with code 1 writing no notification, and the
  controller moves t-0 once broker 1's session expires.
- a notification the controller did not handle before it died is deleted, unhandled, by
  the next controller's failover; `testbed zk` shows it meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from cli_runner import run
from kazoo.client import KazooClient

from domain import EPOCH_DURING_DELETE, UNKNOWN_BROKER_EPOCH, TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import BrokerControlClient, ClientApiClient
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import ReplicaAssignment, TopicAssignment

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
SESSION_MS = 3000
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
NOTIFY = ("--on-log-dir-failure", "notify")


def kinds(proc: BrokerProcess, kind: str) -> list[dict[str, Any]]:
    """`proc`'s events of `kind` so far."""
    return [e for e in proc.events() if e["kind"] == kind]


def produce(proc: BrokerProcess, tp: TopicPartition) -> m.PartitionProduceResult | None:
    """One acks=1 record to `proc`; None when the broker did not answer."""
    port = proc.port()
    if port is None:
        return None
    record = m.ProducedRecord(None, b"v")
    try:
        with ClientApiClient(f"127.0.0.1:{port}", timeout_s=5) as client:
            return client.produce(
                m.ProduceRequest.single(tp.topic, tp.partition, (record,), 1)
            ).only
    except Exception:  # the broker halted meanwhile
        return None


def written(proc: BrokerProcess, tp: TopicPartition) -> bool:
    """Whether one record was written to `tp` on `proc`."""
    answer = produce(proc, tp)
    return answer is not None and answer.error is Errors.NONE


class Cluster:
    """Brokers 1-3 (3 the controller) with topic t online and written to."""

    def __init__(self, brokers: Start, zk_client: KazooClient, broker1_args: tuple[str, ...]):
        self.zk = KafkaZkClient(zk_client)
        self.procs = {3: brokers(3, SESSION_MS)}
        wait_until(lambda: self.zk.get_controller_id() == 3, 30, self.procs[3].log_tail)
        self.procs[1] = brokers(1, SESSION_MS, extra_args=broker1_args)
        self.procs[2] = brokers(2, SESSION_MS)
        wait_until(lambda: set(self.zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers")
        self.zk.create_topic(
            "t", TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))})
        )
        wait_until(lambda: self.isr(T0) == self.isr(T1) == [1, 2], 30, "t not online")
        wait_until(lambda: self.leader(T0) == 1 and self.leader(T1) == 2, 30, "leaders")
        for tp, leader in ((T0, 1), (T1, 2)):
            wait_until(partial(written, self.procs[leader], tp), 30, f"could not write {tp}")
        self.data = {b: p.run_dir / "data" / f"broker{b}" for b, p in self.procs.items()}
        for tp in (T0, T1):  # the follower copied the record: its directory exists
            wait_until((self.data[1] / f"t-{tp.partition}").is_dir, 30, f"{tp} on broker 1")

    def isr(self, tp: TopicPartition) -> list[int]:
        state = self.zk.get_partition_states([tp]).found.get(tp)
        return sorted(state.leader_and_isr.isr) if state else []

    def leader(self, tp: TopicPartition) -> int:
        state = self.zk.get_partition_states([tp]).found.get(tp)
        return state.leader_and_isr.leader if state else -2

    def break_checkpoint(self, broker: int, tp: TopicPartition) -> None:
        checkpoint = self.data[broker] / f"t-{tp.partition}" / "hw-checkpoint"
        checkpoint.unlink(missing_ok=True)
        (checkpoint / "blocker").mkdir(parents=True)

    def fail_log_dir(self, tp: TopicPartition) -> None:
        """Break broker 1's checkpoint of `tp` and write to `tp` until broker 1 reports
        its log directory failed (its high watermark, and so the checkpoint, moves)."""
        self.break_checkpoint(1, tp)
        leader = self.procs[1 if tp == T0 else 2]
        wait_until(
            lambda: (
                (produce(leader, tp), kinds(self.procs[1], "log_dir_failed"))[1]
                or not self.procs[1].is_running()
            ),
            30,
            lambda: "broker 1 kept its log directory online\n" + self.procs[1].log_tail(),
        )


@pytest.mark.parametrize("failing", [T0, T1], ids=["while-leading", "while-following"])
def test_a_failed_log_dir_moves_leadership_and_the_broker_keeps_running(
    brokers: Start, zk_client: KazooClient, failing: TopicPartition
) -> None:
    cluster = Cluster(brokers, zk_client, NOTIFY)
    procs = cluster.procs
    cluster.fail_log_dir(failing)

    [failed] = kinds(procs[1], "log_dir_failed")
    assert (failed["partitions"], failed["action"]) == (["t-0", "t-1"], "notify")
    assert "IsADirectoryError" in str(failed["reason"])
    wait_until(lambda: kinds(procs[3], "log_dir_event_handled"), 30, lambda: procs[3].log_tail())
    [handled] = kinds(procs[3], "log_dir_event_handled")
    assert (handled["brokers"], handled["notifications"]) == ([1], 1)
    wait_until(lambda: cluster.leader(T0) == 2, 30, "t-0 stayed on broker 1")
    wait_until(lambda: cluster.isr(T0) == cluster.isr(T1) == [2], 30, "broker 1 in an ISR")
    offline = [e for e in kinds(procs[3], "replicas_offline") if e["broker_id"] == 1]
    assert sorted(p for e in offline for p in e["partitions"]) == ["t-0", "t-1"]
    assert zk_client.get_children(paths.LOG_DIR_EVENT_NOTIFICATION) == []
    assert 1 in cluster.zk.get_all_brokers().brokers
    assert procs[1].is_running()
    figures = procs[1].metrics()
    assert figures["kafka_log_LogManager_OfflineLogDirectoryCount"] == 1
    assert figures["kafka_server_ReplicaManager_PartitionCount"] == 0
    assert procs[2].metrics()["kafka_log_LogManager_OfflineLogDirectoryCount"] == 0
    answer = produce(procs[1], T0)
    assert answer is not None
    assert answer.error is Errors.KAFKA_STORAGE_ERROR
    with ClientApiClient(f"127.0.0.1:{procs[2].port()}", timeout_s=10) as client:
        [topic] = client.metadata(("t",)).topics
    assert {p.partition: p.offline_replicas for p in topic.partitions} == {0: (1,), 1: (1,)}


def control_answers(
    proc: BrokerProcess, request: m.StopReplicaRequest | m.LeaderAndIsrRequest
) -> dict[TopicPartition, Errors]:
    """`proc`'s answer to a control request, by partition (the request-level error NONE)."""
    with BrokerControlClient(f"127.0.0.1:{proc.port()}", timeout_s=10) as client:
        answer = (
            client.stop_replica(request)
            if isinstance(request, m.StopReplicaRequest)
            else client.leader_and_isr(request)
        )
    assert answer.error is Errors.NONE
    return {r.topic_partition: r.error for r in answer.partition_errors}


def test_a_failed_log_dirs_replicas_answer_storage_error_and_keep_their_files(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Kafka 2.8's `stopReplicas` and `becomeLeaderOrFollower` for a partition hosted as
    Offline. The requests go to broker 1 directly, as the controller (broker 3) at its
    epoch would send them; then topic t is deleted through ZooKeeper."""
    cluster = Cluster(brokers, zk_client, NOTIFY)
    procs = cluster.procs
    cluster.fail_log_dir(T0)
    wait_until(lambda: kinds(procs[3], "log_dir_event_handled"), 30, lambda: procs[3].log_tail())
    epoch = cluster.zk.get_controller_epoch()
    assert epoch is not None
    header = m.ControlHeader(3, epoch.epoch, UNKNOWN_BROKER_EPOCH)

    stop = m.StopReplicaRequest(
        header,
        (
            m.StopReplicaPartitionState("t", 0, EPOCH_DURING_DELETE, True),
            m.StopReplicaPartitionState("t", 1, 1000, False),
        ),
    )
    assert control_answers(procs[1], stop) == {
        T0: Errors.KAFKA_STORAGE_ERROR,
        T1: Errors.KAFKA_STORAGE_ERROR,
    }
    lead = m.LeaderAndIsrPartitionState("t", 0, epoch.epoch, 1, 1000, (1, 2), 0, (1, 2))
    assert control_answers(procs[1], m.LeaderAndIsrRequest(header, (lead,))) == {
        T0: Errors.KAFKA_STORAGE_ERROR
    }
    assert (cluster.data[1] / "t-0").is_dir()
    assert (cluster.data[1] / "t-1").is_dir()

    assert TopicDeletionZk(cluster.zk).mark_topic_for_deletion("t")
    wait_until(
        lambda: not (cluster.data[2] / "t-0").exists() and not (cluster.data[2] / "t-1").exists(),
        30,
        lambda: "broker 2 kept t\n" + procs[3].log_tail(),
    )
    wait_until(
        lambda: kinds(procs[3], "topic_deletion_ineligible"),
        30,
        lambda: "t's deletion was not halted\n" + procs[3].log_tail(),
    )
    [halted] = kinds(procs[3], "topic_deletion_ineligible")
    assert halted["topic"] == "t"
    assert halted["replicas"] == [[0, 1], [1, 1]]
    assert "t" in cluster.zk.get_all_topics()
    assert (cluster.data[1] / "t-0").is_dir()
    assert (cluster.data[1] / "t-1").is_dir()
    assert procs[1].is_running()


def test_by_default_a_failed_log_dir_halts_the_broker(
    brokers: Start, zk_client: KazooClient
) -> None:
    cluster = Cluster(brokers, zk_client, ())
    procs = cluster.procs
    cluster.fail_log_dir(T0)

    wait_until(lambda: not procs[1].is_running(), 30, "broker 1 did not halt")
    assert procs[1].returncode() == 1
    [failed] = kinds(procs[1], "log_dir_failed")
    assert failed["action"] == "halt"
    assert not kinds(procs[1], "node_stopped")  # halted, not shut down
    assert zk_client.get_children(paths.LOG_DIR_EVENT_NOTIFICATION) == []
    wait_until(lambda: cluster.leader(T0) == 2, 30, "t-0 stayed on the halted broker")
    assert not kinds(procs[3], "log_dir_event_handled")


def test_a_new_controller_deletes_notifications_left_unhandled(
    brokers: Start, zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    zk = KafkaZkClient(zk_client)
    procs = {3: brokers(3, SESSION_MS)}
    wait_until(lambda: zk.get_controller_id() == 3, 30, procs[3].log_tail)
    procs.update({b: brokers(b, SESSION_MS) for b in (1, 2)})
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    procs[3].pause()  # the controller dies before it handles what comes next
    node = zk.propagate_log_dir_event(1)
    child = node.rsplit("/", 1)[1]
    assert re.fullmatch(r"log_dir_event_[0-9]{10}", child)

    code, out, _ = run(capsys, "zk", "ls", paths.LOG_DIR_EVENT_NOTIFICATION, "--zk", zk_connect)
    assert (code, out.split()) == (0, [child])
    code, out, _ = run(capsys, "zk", "get", node, "--zk", zk_connect)
    assert code == 0
    assert out.splitlines()[0] == '{"version":1,"broker":1,"event":1}'

    wait_until(lambda: zk.get_controller_id() in (1, 2), 30, "no new controller")
    new = procs[zk.get_controller_id() or 0]
    wait_until(lambda: kinds(new, "controller_failover_done"), 30, new.log_tail)
    [removed] = [
        e for e in kinds(new, "controller_failover_step") if e["step"] == "notifications_removed"
    ]
    assert removed["log_dir_event_notifications"] == 1
    assert zk_client.get_children(paths.LOG_DIR_EVENT_NOTIFICATION) == []
    assert not kinds(new, "log_dir_event_handled")  # cleared, not handled
