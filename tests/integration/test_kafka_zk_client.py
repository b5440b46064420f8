"""`KafkaZkClient` against the real ensemble: registration ownership, the election multi
and its failure cases (another winner, a stale epoch version, a lost response), and
malformed registrations reported rather than raised."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss

from domain import EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from harness.zk_ensemble import open_client
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.controller_election import ControllerElectionZk, ControllerEpoch
from zkdata.errors import BrokerIdInUseError, ControllerMovedError
from zkdata.fenced_writes import ANY_EPOCH_VERSION, committed_zxid
from zkdata.model import BrokerInfo
from zkdata.znodes import ControllerEpochZNode, ControllerZNode

pytestmark = pytest.mark.integration


def info(broker_id: int) -> BrokerInfo:
    """A registration for `broker_id` on localhost."""
    return BrokerInfo(broker_id, (EndPoint("127.0.0.1", 9000 + broker_id),), timestamp_ms=1)


@pytest.fixture
def other_client(zk_connect: str) -> Iterator[KazooClient]:
    """A second session on the same chroot."""
    with open_client(zk_connect) as client:
        yield client


def test_registering_twice_in_one_session_returns_the_same_epoch(zk_client: KazooClient) -> None:
    """An ephemeral registration that already exists and is ours counts as success."""
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    first = zk.register_broker(info(1))
    assert zk.register_broker(info(1)) == first
    _, stat = zk_client.get(paths.broker_id(1))
    assert stat.czxid == first
    assert stat.ephemeralOwner == zk.session_id


def test_a_registration_held_by_another_session_is_refused(
    zk_client: KazooClient, other_client: KazooClient
) -> None:
    """Another live session owning /brokers/ids/N raises BrokerIdInUseError."""
    KafkaZkClient(zk_client).register_broker(info(1))
    with pytest.raises(BrokerIdInUseError, match="another session"):
        KafkaZkClient(other_client).register_broker(info(1))


def test_first_election_creates_the_epoch_and_wins_epoch_1(zk_client: KazooClient) -> None:
    """With no /controller_epoch, the winner creates it and writes epoch 1 atomically with
    its ephemeral /controller."""
    zk = KafkaZkClient(zk_client)
    won = zk.register_controller_and_increment_epoch(3)
    data, stat = zk_client.get(paths.CONTROLLER)
    assert ControllerZNode.decode(data).broker_id == 3
    assert stat.ephemeralOwner == zk.session_id
    raw, epoch_stat = zk_client.get(paths.CONTROLLER_EPOCH)
    assert raw == b"1"
    assert won == ControllerEpoch(1, 1, epoch_stat.mzxid)  # the zxid of the winning set
    assert epoch_stat.mzxid == stat.czxid  # one multi: one transaction


def test_a_second_candidate_loses_and_wins_after_the_first_leaves(
    zk_connect: str, other_client: KazooClient
) -> None:
    """NodeExists on /controller: ControllerMovedError; once the holder's session closes,
    the next election bumps the epoch to 2."""
    with open_client(zk_connect) as first:
        assert KafkaZkClient(first).register_controller_and_increment_epoch(1).epoch == 1
        with pytest.raises(ControllerMovedError, match="controller is broker 1"):
            KafkaZkClient(other_client).register_controller_and_increment_epoch(2)
    assert KafkaZkClient(other_client).register_controller_and_increment_epoch(2).epoch == 2


def test_an_election_on_a_stale_epoch_version_is_refused(
    zk_client: KazooClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BadVersion on /controller_epoch (someone bumped it after our read) is not a win,
    and nothing of the failed multi is applied."""
    zk = KafkaZkClient(zk_client)
    zk_client.create(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(4))
    zk_client.set(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(5))
    monkeypatch.setattr(
        ControllerElectionZk, "get_controller_epoch", lambda _self: ControllerEpoch(4, 0)
    )
    with pytest.raises(ControllerMovedError):
        zk.register_controller_and_increment_epoch(1)
    assert zk_client.exists(paths.CONTROLLER) is None
    assert zk_client.get(paths.CONTROLLER_EPOCH)[0] == b"5"


def test_a_lost_election_response_is_recognised_as_our_win(zk_client: KazooClient) -> None:
    """The multi succeeds but its response is lost (ConnectionLoss); the retry meets
    NodeExists, finds /controller owned by this session at the new epoch, and wins."""
    zk = KafkaZkClient(zk_client)
    real_transaction = zk_client.transaction
    lost: list[object] = []

    def transaction() -> Any:
        tx = real_transaction()
        real_commit = tx.commit

        def commit() -> Any:
            results = real_commit()
            if not lost:
                lost.append(results)
                raise ConnectionLoss("response lost")
            return results

        tx.commit = commit
        return tx

    zk_client.transaction = transaction
    try:
        won = zk.register_controller_and_increment_epoch(7)
    finally:
        zk_client.transaction = real_transaction
    assert lost, "the first commit did not run"
    assert won.epoch == 1
    assert zk.get_controller_id() == 7


def test_malformed_registrations_are_reported_not_raised(zk_client: KazooClient) -> None:
    """A broker listing skips znodes that do not decode and names them."""
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    zk.register_broker(info(1))
    zk_client.create(paths.broker_id(2), b"{not json")
    zk_client.create(paths.broker_id_child("abc"), b"{}")
    listing = zk.get_all_brokers()
    assert sorted(listing.brokers) == [1]
    assert sorted(listing.malformed) == ["2", "abc"]
    assert "not JSON" in str(listing.malformed["2"])


def test_a_write_at_the_any_epoch_version_lands_after_another_election(
    zk_client: KazooClient,
) -> None:
    """Bug switch kafka-6082's fencing version: the check of `/controller_epoch` at
    ZooKeeper's any-version passes once another controller has bumped the epoch, where the
    version this controller won with is refused."""
    zk = KafkaZkClient(zk_client)
    zk_client.create(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(4))
    zk_client.set(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(5))  # zkVersion 1
    zk_client.ensure_path(paths.topic("orders"))
    tp = TopicPartition("orders", 0)
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 0), 4)
    with pytest.raises(ControllerMovedError):
        zk.create_partition_states({tp: state}, 0)
    assert zk_client.exists(paths.partition_state("orders", 0)) is None
    written = zk.create_partition_states({tp: state}, ANY_EPOCH_VERSION)
    assert written == {tp: paths.partition_state("orders", 0)}


def test_a_state_write_answers_the_zxid_it_committed_at(zk_client: KazooClient) -> None:
    """An update's result carries the mzxid of the state znode's new Stat, from the multi's
    own answer. A write that kafka-6082's any-version check lets through after another
    election commits at a zxid above that election's epoch bump, which is how
    `controller_writes_fenced` tells it from one that landed before."""
    zk = KafkaZkClient(zk_client)
    won = zk.register_controller_and_increment_epoch(1)
    zk_client.ensure_path(paths.topic("orders"))
    tp = TopicPartition("orders", 0)
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1,), 0), won.epoch)
    zk.create_partition_states({tp: state}, won.zk_version)
    moved = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2,), 0), won.epoch)
    written = zk.update_leader_and_isr({tp: moved}, won.zk_version)[tp]
    _, stat = zk_client.get(paths.partition_state("orders", 0))
    assert (written, committed_zxid(written)) == (1, stat.mzxid)
    assert won.zxid is not None
    assert stat.mzxid > won.zxid
    bump = zk_client.set(paths.CONTROLLER_EPOCH, ControllerEpochZNode.encode(won.epoch + 1))
    late = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 2, (1,), 1), won.epoch)
    unfenced = zk.update_leader_and_isr({tp: late}, ANY_EPOCH_VERSION)[tp]
    late_zxid = committed_zxid(unfenced)
    assert late_zxid is not None
    assert late_zxid > bump.mzxid
