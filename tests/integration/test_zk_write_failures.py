"""A ZooKeeper write that fails for one partition fails that partition alone: the rest of
the round is written, sent and recorded, the controller goes on, and the next election
retries what failed (Kafka's `PartitionStateMachine` collects per-partition failures the
same way and leaves the partition offline until its next `triggerOnlinePartitionStateChange`).

The failure is real: the test gives one partition's state znode an ACL that lets nobody
write it, so ZooKeeper answers the controller's conditional update with NOAUTH.

Setup: broker 3 is the controller; topic t has partitions 0 and 1, both on [1, 2], both
led by broker 1. Broker 1 is killed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss
from kazoo.security import OPEN_ACL_UNSAFE, make_acl

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from harness.zk_ensemble import ZkEnsemble
from rpc.wire import ClientApiClient
from zkdata.client import KafkaZkClient
from zkdata.fenced_writes import FencedWriter, SetData
from zkdata.kazoo_handler import PollingHandler
from zkdata.model import ReplicaAssignment, TopicAssignment

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
SESSION_MS = 3000
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
T0_STATE = "/brokers/topics/t/partitions/0/state"
#: Read, and change the ACL back; no write.
READ_ONLY = [make_acl("world", "anyone", read=True, admin=True)]


def _failures(events: list[dict[str, Any]], tp: TopicPartition) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e["kind"] == "leader_election_failed"
        and (e["topic"], e["partition"]) == (tp.topic, tp.partition)
    ]


def test_an_unwritable_state_znode_fails_only_its_partition(
    brokers: Start, zk_client: KazooClient
) -> None:
    zk = KafkaZkClient(zk_client)
    procs = {3: brokers(3, SESSION_MS)}
    wait_until(lambda: zk.get_controller_id() == 3, 30, lambda: procs[3].log_tail())
    procs.update({b: brokers(b, SESSION_MS) for b in (1, 2)})
    wait_until(lambda: set(zk.get_all_brokers().brokers) == {1, 2, 3}, 30, "brokers missing")
    zk.create_topic(
        "t", TopicAssignment({0: ReplicaAssignment((1, 2)), 1: ReplicaAssignment((1, 2))})
    )

    def state(tp: TopicPartition) -> tuple[int, int, tuple[int, ...]]:
        found = zk.get_partition_states([tp]).found.get(tp)
        if found is None:
            return (-2, -1, ())
        lai = found.leader_and_isr
        return (lai.leader, lai.leader_epoch, tuple(sorted(lai.isr)))

    wait_until(
        lambda: state(T0)[::2] == state(T1)[::2] == (1, (1, 2)), 30, "t is not led by broker 1"
    )
    wait_until(procs[2].applied_leader_and_isr, 20, "broker 2 got no LeaderAndIsr for t")
    t0_before = state(T0)
    zk_client.set_acls(T0_STATE, READ_ONLY)

    procs[1].kill()

    # t-1 is elected, written, sent to broker 2 and recorded, as if t-0 did not exist
    wait_until(lambda: state(T1)[0] == 2, 30, lambda: "t-1 not moved\n" + procs[3].log_tail())
    wait_until(
        lambda: _metadata_leader(procs[2], T1) == 2,
        20,
        lambda: "broker 2 was not told that it leads t-1\n" + procs[2].log_tail(),
    )
    # t-0 failed alone, with ZooKeeper's error named, and ZooKeeper still holds its state
    wait_until(lambda: _failures(procs[3].events(), T0), 20, lambda: "no failure event for t-0")
    reasons = {e["reason"] for e in _failures(procs[3].events(), T0)}
    assert any("NoAuth" in r for r in reasons), reasons
    assert state(T0) == t0_before
    assert not _failures(procs[3].events(), T1)
    assert zk.get_controller_id() == 3
    assert procs[3].is_running()

    # once the znode is writable again, the next broker change retries the election
    zk_client.set_acls(T0_STATE, OPEN_ACL_UNSAFE)
    procs[1] = brokers(1, SESSION_MS)
    wait_until(
        lambda: state(T0)[0] in (1, 2) and state(T0)[1] > t0_before[1],
        30,
        lambda: f"t-0 was not elected again: {state(T0)}\n" + procs[3].log_tail(),
    )


def _metadata_leader(broker: BrokerProcess, tp: TopicPartition) -> int:
    """The leader of `tp` in `broker`'s metadata cache (-2 when it has none)."""
    with ClientApiClient(f"127.0.0.1:{broker.port()}", timeout_s=10) as client:
        topics = client.metadata((tp.topic,)).topics
    for p in topics[0].partitions if topics else ():
        if p.partition == tp.partition:
            return p.leader
    return -2


def test_writes_that_cannot_be_retried_fail_alone_instead_of_failing_the_call(
    zk_ensemble: ZkEnsemble, zk_chroot: str, zk_client: KazooClient
) -> None:
    """The writer's client talks to one member only, which is killed; the write waits for
    the connection (as Kafka's `retryRequestsUntilConnected` does) and the member comes
    back only once the quorum has expired the client's session. The call then answers each
    write with SESSIONEXPIRED instead of raising, so a state change records and sends
    what did succeed before (and the controller resigns on the expiry)."""
    zk_client.create("/controller_epoch", b"1")
    zk_client.create("/a", b"0")
    zk_client.create("/b", b"0")
    client = KazooClient(
        hosts=zk_ensemble.connect_string(zk_chroot, members=[0]),
        timeout=4,
        handler=PollingHandler(),
        connection_retry={"max_tries": -1, "delay": 0.1, "max_delay": 0.5},
        command_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.5, "ignore_expire": False},
    )
    client.start(timeout=15)

    def expired() -> bool:
        try:
            return zk_client.exists("/owned") is None
        except ConnectionLoss:
            return False  # this client was on the killed member too and is moving

    def restart_once_expired() -> None:
        try:
            wait_until(expired, 60, "session not expired")
        finally:
            zk_ensemble.start_server(0)  # never leave the writer waiting for a dead member

    restart = threading.Thread(target=restart_once_expired)
    try:
        writer = FencedWriter(client)
        assert writer.write([SetData("/a", b"1", 0)], 0) == [1]
        client.create("/owned", b"", ephemeral=True)
        zk_ensemble.kill_server(0)
        restart.start()
        results = writer.write([SetData("/a", b"2", 1), SetData("/b", b"2", 0)], 0)
    finally:
        if restart.is_alive():
            restart.join()
        if not zk_ensemble.is_running(0):
            zk_ensemble.start_server(0)
        client.stop()
        client.close()
    assert [type(r).__name__ for r in results] == ["SessionExpiredError"] * 2, results
    assert zk_client.get("/a")[0] == b"1"
    assert zk_client.get("/b")[0] == b"0"
