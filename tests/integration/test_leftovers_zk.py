"""`chaos.cluster.leftovers` against the real ensemble: every kind of admin work in
flight is found (a reassignment request, a topic znode still moving replicas, a deletion
request, a preferred election request, a request that does not decode), and wiping it
removes the requests and the topics they name while other topics stay."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from admin.topics import delete_topic
from chaos.cluster.leftovers import Leftovers, find_leftovers, wipe_leftovers
from domain import TopicPartition
from zkdata import paths
from zkdata.admin_znodes import PreferredReplicaElectionZNode
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment
from zkdata.reassignment import ReassignmentZk
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

ASSIGNMENT = {0: (1, 2), 1: (2, 3)}


def cluster(zk_client: KazooClient) -> KafkaZkClient:
    """Three topics, none with work in flight."""
    zk = KafkaZkClient(zk_client)
    still = TopicAssignment({p: ReplicaAssignment(r) for p, r in ASSIGNMENT.items()})
    for topic in ("kept", "moved", "doomed"):
        zk_client.create(paths.topic(topic), TopicZNode.encode(still), makepath=True)
    return zk


def test_a_cluster_with_nothing_in_flight_has_no_leftovers(zk_client: KazooClient) -> None:
    found = find_leftovers(cluster(zk_client))
    assert not found
    assert found.describe() == "nothing"


def test_every_kind_of_work_in_flight_is_found_and_named(zk_client: KazooClient) -> None:
    zk = cluster(zk_client)
    ReassignmentZk(zk).create_reassignments(
        [PartitionReassignment(TopicPartition("moved", 1), (3, 1))]
    )
    moving = TopicAssignment(
        {0: ReplicaAssignment((3, 1, 2), (3,), (2,)), 1: ReplicaAssignment((2, 3))}
    )
    zk_client.create(paths.topic("half-moved"), TopicZNode.encode(moving), makepath=True)
    delete_topic(zk, "doomed")
    zk_client.create(
        PreferredReplicaElectionZNode.path(),
        PreferredReplicaElectionZNode.encode((TopicPartition("kept", 0),)),
    )
    found = find_leftovers(zk)
    assert found == Leftovers(("half-moved-0", "moved-1"), ("doomed",), electing=True)
    assert found.topics == ("doomed", "half-moved", "moved")
    assert found.describe() == (
        "reassigning half-moved-0, moved-1; deleting topics doomed; "
        "a preferred-replica election requested"
    )


def test_wiping_removes_the_requests_and_their_topics_only(zk_client: KazooClient) -> None:
    zk = cluster(zk_client)
    ReassignmentZk(zk).create_reassignments(
        [PartitionReassignment(TopicPartition("moved", 1), (3, 1))]
    )
    delete_topic(zk, "doomed")
    config = b'{"version":1,"config":{"min.insync.replicas":"2"}}'
    zk_client.create(paths.topic_config("doomed"), config, makepath=True)
    wipe_leftovers(zk, find_leftovers(zk))
    assert not find_leftovers(zk)
    assert zk.get_all_topics() == {"kept"}
    assert zk_client.exists(paths.topic_config("doomed")) is None
    wipe_leftovers(zk, Leftovers(("moved-1",), ("doomed",)))  # idempotent


def test_a_request_that_does_not_decode_is_a_leftover_and_is_wiped(
    zk_client: KazooClient,
) -> None:
    zk = cluster(zk_client)
    zk_client.create(paths.REASSIGN_PARTITIONS, b"{not json", makepath=True)
    found = find_leftovers(zk)
    assert found.reassigning == ()
    assert len(found.unreadable) == 1
    assert paths.REASSIGN_PARTITIONS in found.unreadable[0]
    assert found
    wipe_leftovers(zk, found)
    assert not find_leftovers(zk)
    assert zk.get_all_topics() == {"kept", "moved", "doomed"}
