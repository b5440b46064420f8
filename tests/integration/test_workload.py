"""The workload client against broker processes, through faults injected once 100 writes
are acknowledged (the kill -9 of a partition leader, partitions reassigned under load):
every acknowledged (acks=all) write must be read back, in order, once."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from admin.topics import create_topic
from chaos.client.workload_run import Progress, WorkloadConfig, WorkloadResult, judge, run_workload
from client import Client
from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, ReplicaAssignment
from zkdata.reassignment import ReassignmentZk

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
TOPIC = "wl"
PARTITIONS = [TopicPartition(TOPIC, p) for p in range(3)]
#: Two producers (acks=all) at 40 sends/s each, 400 sends each, and a consumer.
CONFIG = WorkloadConfig(
    topic=TOPIC,
    partitions=3,
    duration_s=60,
    producers=2,
    rate_per_s=40,
    progress_interval_s=0.5,
    max_sends=400,
)


def start_cluster(
    brokers: Start,
    zk: KafkaZkClient,
    assignment: Mapping[int, tuple[int, ...]] | None = None,
) -> dict[int, BrokerProcess]:
    """Brokers 1-3 (short sessions and lag time) and topic `wl`: 3 partitions with RF 3
    from Kafka's placement, or `assignment`; returns once every partition has a state."""
    procs = {
        i: brokers(i, 3000, extra_args=("--replica-lag-time-max-ms", "3000")) for i in (1, 2, 3)
    }
    wait_until(
        lambda: all(p.port() for p in procs.values()) and zk.get_controller_id() is not None,
        30,
        "brokers did not start",
    )
    if assignment is None:
        create_topic(zk, TOPIC, 3, 3, rng=random.Random(5))
    else:
        create_topic(zk, TOPIC, assignment=assignment)
    wait_until(lambda: len(zk.get_partition_states(PARTITIONS).found) == 3, 20, "no topic")
    return procs


def run_with_fault(
    procs: Mapping[int, BrokerProcess], run_dir: Path, fault: Callable[[], None]
) -> WorkloadResult:
    """Run the workload; once 100 sends are acknowledged, `fault` runs on a thread of its
    own (not at all if the workload ends first)."""
    cluster = Client([f"127.0.0.1:{p.port()}" for p in procs.values()], topics=(TOPIC,))
    acked = threading.Event()
    stop = threading.Event()

    def progress(p: Progress) -> None:
        if p.counts.get("send ok", 0) >= 100:
            acked.set()

    def inject() -> None:
        if acked.wait(60) and not stop.is_set():
            fault()

    thread = threading.Thread(target=inject, name="test-fault")
    thread.start()
    try:
        return run_workload(cluster, CONFIG, run_dir / "history", stop, progress)
    finally:
        stop.set()
        acked.set()
        thread.join(45)
        cluster.close()


def test_no_acknowledged_write_is_lost_when_a_leader_is_killed(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Two producers (acks=all) and a consumer on 3 partitions, RF 3; once 100 sends are
    acknowledged the leader of partition 0 is killed. The history shows writes before and
    after the kill, and the checker finds nothing lost, duplicated or reordered."""
    zk = KafkaZkClient(zk_client)
    procs = start_cluster(brokers, zk)
    killed: list[int] = []

    def kill_leader_of_partition_0() -> None:
        state = zk.get_partition_states([PARTITIONS[0]]).found[PARTITIONS[0]]
        victim = state.leader_and_isr.leader
        procs[victim].kill()
        killed.append(victim)

    result = run_with_fault(procs, run_dir, kill_leader_of_partition_0)
    assert killed, "the leader was never killed"
    assert result.thread_errors == ()
    assert result.counts.get("send ok", 0) >= 700  # of 800: writes went on after the kill
    verdict = judge(result)
    assert verdict.ok, verdict.report()


def test_no_acknowledged_write_is_lost_while_partitions_are_reassigned(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Two producers (acks=all) and a consumer on 3 partitions, RF 2; once 100 sends are
    acknowledged every partition is moved to a replica set that leaves out its current
    leader (leaders move, removed replicas are deleted, new ones catch up under load).
    The reassignment completes while the workload runs, and the checker finds nothing
    lost, duplicated or reordered."""
    zk = KafkaZkClient(zk_client)
    procs = start_cluster(brokers, zk, {0: (1, 2), 1: (2, 3), 2: (3, 1)})
    targets = dict(zip(PARTITIONS, [(2, 3), (3, 1), (1, 2)], strict=True))
    done: list[bool] = []

    def move_every_partition() -> None:
        ReassignmentZk(zk).create_reassignments(
            [PartitionReassignment(tp, replicas) for tp, replicas in targets.items()]
        )

        def finished() -> bool:
            found = zk.get_topic_assignments([TOPIC]).found[TOPIC].partitions
            return all(
                found[tp.partition] == ReplicaAssignment(replicas)
                for tp, replicas in targets.items()
            )

        wait_until(finished, 40, "the reassignment did not finish under load")
        done.append(True)

    result = run_with_fault(procs, run_dir, move_every_partition)
    assert done, "the reassignment did not complete while the workload ran"
    assert result.thread_errors == ()
    assert result.counts.get("send ok", 0) >= 700  # of 800: writes went on through the moves
    verdict = judge(result)
    assert verdict.ok, verdict.report()
