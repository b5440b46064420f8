"""The workload client against broker processes, through the kill -9 of a partition
leader: every acknowledged (acks=all) write must be read back, in order, once."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from chaos.cluster import Cluster
from chaos.workload_run import Progress, WorkloadConfig, judge, run_workload
from support.brokers import BrokerProcess
from support.waiting import wait_until
from testbed.topics import create_topic
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicPartition
from zkdata.reassignment import ReassignmentZk

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]


def test_no_acknowledged_write_is_lost_when_a_leader_is_killed(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    """Two producers (acks=all) and a consumer on 3 partitions, RF 3; once 100 sends are
    acknowledged the leader of partition 0 is killed. The history shows writes before and
    after the kill, and the checker finds nothing lost, duplicated or reordered."""
    zk = KafkaZkClient(zk_client)
    procs = {
        i: brokers(i, 3000, extra_args=("--replica-lag-time-max-ms", "3000")) for i in (1, 2, 3)
    }
    wait_until(
        lambda: all(p.port() for p in procs.values()) and zk.get_controller_id() is not None,
        30,
        "brokers did not start",
    )
    create_topic(zk, "wl", 3, 3, rng=random.Random(5))
    wait_until(
        lambda: len(zk.get_partition_states(TopicPartition("wl", p) for p in range(3)).found) == 3,
        20,
        "topic not created",
    )
    cluster = Cluster([f"127.0.0.1:{p.port()}" for p in procs.values()], topics=("wl",))
    config = WorkloadConfig(
        topic="wl",
        partitions=3,
        duration_s=60,
        producers=2,
        rate_per_s=40,
        progress_interval_s=0.5,
        max_sends=400,
    )
    acked_before_kill = threading.Event()
    stop = threading.Event()
    killed: list[int] = []

    def progress(p: Progress) -> None:
        if p.counts.get("send ok", 0) >= 100:
            acked_before_kill.set()

    def killer() -> None:
        if not acked_before_kill.wait(60):
            return
        state = zk.get_partition_states([TopicPartition("wl", 0)]).found[TopicPartition("wl", 0)]
        victim = state.leader_and_isr.leader
        procs[victim].kill()
        killed.append(victim)

    thread = threading.Thread(target=killer, name="test-killer")
    thread.start()
    try:
        result = run_workload(cluster, config, run_dir / "history", stop, progress)
    finally:
        stop.set()
        acked_before_kill.set()
        thread.join(10)
        cluster.close()
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
    procs = {
        i: brokers(i, 3000, extra_args=("--replica-lag-time-max-ms", "3000")) for i in (1, 2, 3)
    }
    wait_until(
        lambda: all(p.port() for p in procs.values()) and zk.get_controller_id() is not None,
        30,
        "brokers did not start",
    )
    layout = {0: (1, 2), 1: (2, 3), 2: (3, 1)}
    create_topic(zk, "wl", assignment=layout)
    tps = [TopicPartition("wl", p) for p in layout]
    wait_until(lambda: len(zk.get_partition_states(tps).found) == 3, 20, "topic not created")
    cluster = Cluster([f"127.0.0.1:{p.port()}" for p in procs.values()], topics=("wl",))
    config = WorkloadConfig(
        topic="wl",
        partitions=3,
        duration_s=60,
        producers=2,
        rate_per_s=40,
        progress_interval_s=0.5,
        max_sends=400,
    )
    acked = threading.Event()
    stop = threading.Event()
    targets = {TopicPartition("wl", 0): (2, 3), TopicPartition("wl", 1): (3, 1)}
    targets[TopicPartition("wl", 2)] = (1, 2)
    done: list[bool] = []

    def progress(p: Progress) -> None:
        if p.counts.get("send ok", 0) >= 100:
            acked.set()

    def mover() -> None:
        if not acked.wait(60):
            return
        ReassignmentZk(zk).create_reassignments(
            [PartitionReassignment(tp, replicas) for tp, replicas in targets.items()]
        )

        def finished() -> bool:
            found = zk.get_topic_assignments(["wl"]).found["wl"].partitions
            return all(
                found[tp.partition] == ReplicaAssignment(replicas)
                for tp, replicas in targets.items()
            )

        wait_until(finished, 40, "the reassignment did not finish under load")
        done.append(True)

    thread = threading.Thread(target=mover, name="test-mover")
    thread.start()
    try:
        result = run_workload(cluster, config, run_dir / "history", stop, progress)
    finally:
        stop.set()
        acked.set()
        thread.join(45)
        cluster.close()
    assert done, "the reassignment did not complete while the workload ran"
    assert result.thread_errors == ()
    assert result.counts.get("send ok", 0) >= 700  # of 800: writes went on through the moves
    verdict = judge(result)
    assert verdict.ok, verdict.report()
