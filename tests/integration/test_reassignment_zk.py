"""`ReassignmentZk` against the real ensemble: the request znode is created once, shrunk
entry by entry and removed when empty, never overwriting what an administrator wrote
meanwhile; a partition's assignment is rewritten in place keeping the other partitions
and the topic id; every controller write is fenced by the controller epoch."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from domain import TopicPartition
from zkdata import paths
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.client import KafkaZkClient
from zkdata.errors import ControllerMovedError, ZnodeFormatError
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment
from zkdata.reassignment import ReassignmentInProgressError, ReassignmentZk
from zkdata.znodes import TopicZNode

pytestmark = pytest.mark.integration

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
R0 = PartitionReassignment(T0, (2, 3))
R1 = PartitionReassignment(T1, (3, 1))


def setup(zk_client: KazooClient) -> tuple[ReassignmentZk, int]:
    """A controller epoch to fence with, and the reassignment client."""
    zk = KafkaZkClient(zk_client)
    epoch = zk.register_controller_and_increment_epoch(1)
    return ReassignmentZk(zk), epoch.zk_version


def test_a_second_request_is_refused_while_one_exists(zk_client: KazooClient) -> None:
    reassign, _ = setup(zk_client)
    assert reassign.get_reassignments() is None
    reassign.create_reassignments([R0])
    with pytest.raises(ReassignmentInProgressError, match="existing assignment"):
        reassign.create_reassignments([R1])
    assert reassign.get_reassignments() == (R0,)


def test_removing_entries_keeps_the_others_and_the_last_removes_the_znode(
    zk_client: KazooClient,
) -> None:
    reassign, version = setup(zk_client)
    reassign.create_reassignments([R0, R1])
    assert reassign.remove_reassignments(lambda r: r == R0, version) == (R0,)
    assert reassign.get_reassignments() == (R1,)
    assert reassign.remove_reassignments(lambda r: r == R0, version) == ()
    assert reassign.remove_reassignments(lambda r: True, version) == (R1,)
    assert zk_client.exists(paths.REASSIGN_PARTITIONS) is None
    assert reassign.remove_reassignments(lambda r: True, version) == ()


def test_an_entry_added_meanwhile_is_not_overwritten(zk_client: KazooClient) -> None:
    """The removal is conditional on the version read: when an administrator rewrites the
    request between the read and the write, the removal reads again and keeps the new
    entry."""
    reassign, version = setup(zk_client)
    reassign.create_reassignments([R0])
    calls: list[PartitionReassignment] = []

    def remove_r0(r: PartitionReassignment) -> bool:
        if not calls:  # first decision: someone adds R1 before our write lands
            zk_client.set(paths.REASSIGN_PARTITIONS, ReassignPartitionsZNode.encode((R0, R1)))
        calls.append(r)
        return r == R0

    assert reassign.remove_reassignments(remove_r0, version) == (R0,)
    assert reassign.get_reassignments() == (R1,)


def test_a_malformed_request_is_removed_whole(zk_client: KazooClient) -> None:
    reassign, version = setup(zk_client)
    zk_client.create(paths.REASSIGN_PARTITIONS, b"{not json", makepath=True)
    with pytest.raises(ZnodeFormatError) as raised:
        reassign.get_reassignments()
    assert raised.value.path == paths.REASSIGN_PARTITIONS
    assert reassign.remove_reassignments(lambda r: False, version) == ()
    assert zk_client.exists(paths.REASSIGN_PARTITIONS) is None


def test_a_stale_controller_epoch_cannot_remove_requests(zk_client: KazooClient) -> None:
    reassign, version = setup(zk_client)
    reassign.create_reassignments([R0])
    with pytest.raises(ControllerMovedError):
        reassign.remove_reassignments(lambda r: True, version + 1)
    assert reassign.get_reassignments() == (R0,)


def test_one_partition_is_rewritten_keeping_the_rest_and_the_topic_id(
    zk_client: KazooClient,
) -> None:
    reassign, version = setup(zk_client)
    zk_client.create(
        paths.topic("t"),
        b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":{"0":[1,2],"1":[2,1]}}',
        makepath=True,
    )
    moving = ReplicaAssignment((1, 2)).reassign_to((2, 3))
    assert reassign.set_partition_assignment(T0, moving, version)
    data, _ = zk_client.get(paths.topic("t"))
    assert TopicZNode.decode(data) == TopicAssignment(
        {0: moving, 1: ReplicaAssignment((2, 1))}, "AAAAAAAAAAAAAAAAAAAAAQ"
    )
    with pytest.raises(ControllerMovedError):
        reassign.set_partition_assignment(T0, ReplicaAssignment((2, 3)), version + 1)
    assert not reassign.set_partition_assignment(
        TopicPartition("gone", 0), ReplicaAssignment((1,)), version
    )
