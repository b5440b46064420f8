"""The `vacate` action against the real ensemble: one reassignment request moves every
replica off the broker a role names, for every topic but one queued for deletion, and a
broker hosting nothing asks for nothing."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from chaos.run.vacate import vacate
from domain import EndPoint, TopicPartition
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import BrokerInfo, PartitionReassignment
from zkdata.reassignment import ReassignmentZk

pytestmark = pytest.mark.integration


def _cluster(zk_client: KazooClient) -> KafkaZkClient:
    """Brokers 1 to 3 registered, broker 1 controller, topics `a` and `b` (`b` queued for
    deletion) with replicas on broker 3."""
    zk = KafkaZkClient(zk_client)
    for i in (1, 2, 3):
        zk.register_broker(BrokerInfo(i, (EndPoint(f"broker{i}", 9092),)))
    zk.register_controller_and_increment_epoch(1)
    for topic, parts in (("a", '{"0":[1,3],"1":[3,2],"2":[1,2]}'), ("b", '{"0":[3]}')):
        data = f'{{"version":2,"partitions":{parts}}}'.encode()
        zk_client.create(paths.topic(topic), data, makepath=True)
    TopicDeletionZk(zk).mark_topic_for_deletion("b")
    return zk


def test_every_replica_moves_off_the_named_broker_in_one_request(zk_client: KazooClient) -> None:
    zk = _cluster(zk_client)
    said = vacate(zk, "non-controller:2")
    assert said == "vacate broker 3: 2 partitions of a"
    assert ReassignmentZk(zk).get_reassignments() == (
        PartitionReassignment(TopicPartition("a", 0), (1, 2)),
        PartitionReassignment(TopicPartition("a", 1), (1, 2)),
    )


def test_a_broker_hosting_nothing_writes_no_request(zk_client: KazooClient) -> None:
    zk = _cluster(zk_client)
    zk_client.set(paths.topic("a"), b'{"version":2,"partitions":{"0":[1,2]}}')
    assert vacate(zk, "broker:3") == "vacate broker 3: it hosts no replica"
    assert zk_client.exists(paths.REASSIGN_PARTITIONS) is None


def test_a_running_reassignment_is_waited_for_then_named(zk_client: KazooClient) -> None:
    zk = _cluster(zk_client)
    ReassignmentZk(zk).create_reassignments([PartitionReassignment(TopicPartition("a", 2), (2, 1))])
    with pytest.raises(Exception, match="existing assignment"):
        vacate(zk, "broker:3", wait_s=0.5)
