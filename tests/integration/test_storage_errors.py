"""A partition whose log cannot be opened (KIP-112's offline replica, in the testbed's
terms): the broker answers KAFKA_STORAGE_ERROR for that partition only and hosts the
others; the controller takes that replica offline until the broker restarts, and no
election, not even an unclean one, picks it.

Setup: broker 3 is the controller; topic t (unclean leader election enabled) has
partition 0 on [1,2] and partition 1 on [2,1]. Broker 2 is killed, its t-0 high-watermark
checkpoint is overwritten with garbage, and it is started again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
SESSION_MS = 3000
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_an_unreadable_log_takes_only_its_replica_offline(
    brokers: Start, zk_client: KazooClient, run_dir: Path
) -> None:
    zk = KafkaZkClient(zk_client)
    procs = {3: brokers(3, SESSION_MS)}
    wait_until(lambda: zk.get_controller_id() == 3, 30, lambda: procs[3].log_tail())
    procs.update({b: brokers(b, SESSION_MS) for b in (1, 2)})
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    zk.create_topic(
        "t",
        TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((2, 1))}),
        TopicConfig({"unclean.leader.election.enable": "true"}),
    )

    def isr(tp: TopicPartition) -> tuple[int, ...]:
        state = zk.get_partition_states([tp]).found.get(tp)
        return state.leader_and_isr.isr if state else ()

    def leader(tp: TopicPartition) -> int:
        state = zk.get_partition_states([tp]).found.get(tp)
        return state.leader_and_isr.leader if state else -2

    wait_until(lambda: sorted(isr(T0)) == sorted(isr(T1)) == [1, 2], 20, "t not online")
    wait_until(procs[2].applied_leader_and_isr, 20, "broker 2 got no LeaderAndIsr for t")
    procs[2].kill()
    wait_until(lambda: isr(T0) == isr(T1) == (1,), 20, "broker 2 stayed in the ISRs")
    checkpoint = run_dir / "data" / "broker2" / "t-0" / "hw-checkpoint"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)  # t-0 has no record: no directory yet
    checkpoint.write_text("this is not a checkpoint\n")
    procs[2].start()

    wait_until(
        lambda: any(e["kind"] == "replicas_offline" for e in procs[3].events()),
        30,
        lambda: "the controller did not take t-0 on broker 2 offline\n" + procs[2].log_tail(),
    )
    [offline] = [e for e in procs[3].events() if e["kind"] == "replicas_offline"]
    assert (offline["broker_id"], offline["partitions"]) == (2, ["t-0"])
    [unavailable] = [e for e in procs[2].events() if e["kind"] == "log_unavailable"]
    assert (unavailable["topic"], unavailable["partition"]) == ("t", 0)
    wait_until(lambda: sorted(isr(T1)) == [1, 2], 30, "t-1 on broker 2 did not rejoin")
    assert isr(T0) == (1,)

    def offline_replicas_of_t0() -> tuple[int, ...]:
        with ClientApiClient(f"127.0.0.1:{procs[1].port()}", timeout_s=10) as client:
            topic = client.metadata(("t",)).topics[0]
        return next(p.offline_replicas for p in topic.partitions if p.partition == 0)

    wait_until(lambda: offline_replicas_of_t0() == (2,), 20, "metadata does not show it")

    # t-1 may already be led by broker 2 here (the preferred-replica rebalance, first run
    # 5 s after the controller starts, moves it back once broker 2 is in its ISR): wait for
    # the controller to take t-0 from broker 1, which only broker 1's failure does.
    procs[1].kill()  # t-0 has no other replica: even unclean election must not use broker 2
    wait_until(lambda: leader(T0) != 1, 30, "the controller did not handle broker 1's failure")
    assert leader(T0) == -1
    wait_until(lambda: leader(T1) == 2, 30, "t-1 did not move to broker 2")
