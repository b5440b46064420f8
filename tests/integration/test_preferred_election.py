"""Preferred-replica election (through the CLI's ElectLeaders and through
`/admin/preferred_replica_election`) and auto leader rebalance after a broker returns."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

from domain import TopicPartition
from harness.brokers import BrokerProcess
from harness.waiting import wait_until
from testbed.__main__ import main
from zkdata.admin_znodes import PreferredReplicaElectionZNode
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment, TopicAssignment

pytestmark = pytest.mark.integration

Start = Callable[..., BrokerProcess]
TPS = [TopicPartition("pref", p) for p in range(2)]


def setup_moved_leaders(
    brokers: Start, zk_client: KazooClient, extra: tuple[str, ...] = ()
) -> tuple[KafkaZkClient, dict[int, BrokerProcess]]:
    """Brokers 1-3 (1 controls); topic `pref` with preferred replicas 2 and 3; broker 2
    bounced so partition 0 is led by 1, not its preferred replica 2."""
    zk = KafkaZkClient(zk_client)
    procs = {1: brokers(1, 3000, extra_args=extra)}
    wait_until(lambda: zk.get_controller_id() == 1, 20, procs[1].log_tail)
    procs.update({i: brokers(i, 3000, extra_args=extra) for i in (2, 3)})
    wait_until(lambda: len(zk.get_all_brokers().brokers) == 3, 30, "brokers did not start")
    zk.create_topic(
        "pref", TopicAssignment({0: ReplicaAssignment((2, 1)), 1: ReplicaAssignment((3, 1))})
    )
    wait_until(lambda: leader(zk, TPS[0]) == 2, 20, "partition 0 not led by 2")
    bounce_broker_2(zk, procs)
    return zk, procs


def bounce_broker_2(zk: KafkaZkClient, procs: dict[int, BrokerProcess]) -> None:
    """Stop broker 2 cleanly (leadership of partition 0 moves to 1), start it again and
    wait until it is back in partition 0's ISR."""
    assert procs[2].terminate() == 0  # controlled shutdown: leadership moves to 1
    wait_until(lambda: leader(zk, TPS[0]) == 1, 10, "leadership did not move to 1")
    procs[2].start()
    wait_until(
        lambda: (
            (s := zk.get_partition_states([TPS[0]]).found.get(TPS[0])) is not None
            and 2 in s.leader_and_isr.isr
        ),
        30,
        "broker 2 did not rejoin the ISR",
    )


def leader_epoch(zk: KafkaZkClient, tp: TopicPartition) -> int:
    """The partition's leader epoch."""
    return zk.get_partition_states([tp]).found[tp].leader_and_isr.leader_epoch


def leader(zk: KafkaZkClient, tp: TopicPartition) -> int | None:
    """The partition's leader."""
    state = zk.get_partition_states([tp]).found.get(tp)
    return state.leader_and_isr.leader if state else None


def test_preferred_election_through_the_cli_reports_kafkas_outcomes(
    brokers: Start, zk_client: KazooClient, zk_connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Partition 0 moves back to broker 2; partition 1 needs nothing; an unknown partition
    is reported; the command exits 1 because of it."""
    zk, _ = setup_moved_leaders(brokers, zk_client, ("--auto-leader-rebalance-enable", "false"))
    code = main(
        ["elect-leaders", "--zk", zk_connect, "--election-type", "preferred", "--topic", "pref"]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Successfully completed leader election (PREFERRED) for partitions pref-0" in out
    assert "Valid replica already elected for partitions pref-1" in out
    assert leader(zk, TPS[0]) == 2
    code = main(
        [
            "elect-leaders",
            "--zk",
            zk_connect,
            "--election-type",
            "preferred",
            "--topic",
            "pref",
            "--partition",
            "7",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "pref-7: UNKNOWN_TOPIC_OR_PARTITION" in out


def test_preferred_election_through_the_admin_znode(brokers: Start, zk_client: KazooClient) -> None:
    """Writing /admin/preferred_replica_election moves partition 0 back and the controller
    removes the request."""
    zk, _ = setup_moved_leaders(brokers, zk_client, ("--auto-leader-rebalance-enable", "false"))
    path = PreferredReplicaElectionZNode.path()
    zk_client.create(path, PreferredReplicaElectionZNode.encode((TPS[0],)))
    wait_until(lambda: leader(zk, TPS[0]) == 2, 15, "preferred replica not elected")
    wait_until(lambda: zk_client.exists(path) is None, 10, "the request was not removed")


def test_auto_rebalance_after_a_broker_returns(brokers: Start, zk_client: KazooClient) -> None:
    """With a 1 s imbalance check, the returning broker gets its preferred leadership back
    without anyone asking."""
    zk, _ = setup_moved_leaders(
        brokers, zk_client, ("--leader-imbalance-check-interval-seconds", "1")
    )
    wait_until(lambda: leader(zk, TPS[0]) == 2, 15, "auto rebalance did not move leadership back")


def test_preferred_election_with_an_offline_preferred_replica_is_given_up(
    brokers: Start, zk_client: KazooClient
) -> None:
    """Kafka's testPreferredReplicaLeaderElectionWithOfflinePreferredReplica: with the
    preferred replica's broker down, a request under `/admin/preferred_replica_election`
    is removed without an election, and the partition keeps its leader and leader epoch."""
    extra = ("--auto-leader-rebalance-enable", "false")
    zk = KafkaZkClient(zk_client)
    procs = {1: brokers(1, 3000, extra_args=extra)}
    wait_until(lambda: zk.get_controller_id() == 1, 20, procs[1].log_tail)
    procs[2] = brokers(2, 3000, extra_args=extra)
    wait_until(lambda: len(zk.get_all_brokers().brokers) == 2, 30, "broker 2 did not start")
    zk.create_topic("pref", TopicAssignment({0: ReplicaAssignment((2, 1))}))
    wait_until(lambda: leader(zk, TPS[0]) == 2, 20, "partition 0 not led by 2")
    assert procs[2].terminate() == 0  # controlled shutdown: leadership moves to 1
    wait_until(lambda: len(zk.get_all_brokers().brokers) == 1, 20, "broker 2 still registered")
    before = zk.get_partition_states([TPS[0]]).found[TPS[0]].leader_and_isr
    assert before.leader == 1
    path = PreferredReplicaElectionZNode.path()
    zk_client.create(path, PreferredReplicaElectionZNode.encode((TPS[0],)))
    wait_until(lambda: zk_client.exists(path) is None, 15, "the request was not removed")
    after = zk.get_partition_states([TPS[0]]).found[TPS[0]].leader_and_isr
    assert (after.leader, after.leader_epoch) == (1, before.leader_epoch)


def test_back_to_back_preferred_elections(brokers: Start, zk_client: KazooClient) -> None:
    """Kafka's testBackToBackPreferredReplicaLeaderElections: twice, the preferred
    replica's broker is bounced (leadership moves away, leader epoch + 1) and a request
    under `/admin/preferred_replica_election` gives it back (leader epoch + 1 again)."""
    zk, procs = setup_moved_leaders(brokers, zk_client, ("--auto-leader-rebalance-enable", "false"))
    path = PreferredReplicaElectionZNode.path()
    elected: list[int] = []  # the leader epoch after each election
    for round_ in range(2):
        if round_:
            bounce_broker_2(zk, procs)
        moved = leader_epoch(zk, TPS[0])
        if elected:
            assert moved == elected[-1] + 1  # the bounce between the two elections
        zk_client.create(path, PreferredReplicaElectionZNode.encode((TPS[0],)))
        wait_until(lambda: leader(zk, TPS[0]) == 2, 15, "preferred replica not elected")
        wait_until(lambda: zk_client.exists(path) is None, 10, "the request was not removed")
        elected.append(leader_epoch(zk, TPS[0]))
        assert elected[-1] == moved + 1
