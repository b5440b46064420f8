"""Rewrites of znodes that Kafka 2.8's tools also write keep the fields this project does
not use, against the real ensemble: a partition's state znode rewritten by the controller
(after reading it) and by a leader (that never read it), a topic znode rewritten for a
reassignment, and `/admin/reassign_partitions` shrunk as partitions complete."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from harness.zk_ensemble import open_client
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.fenced_writes import committed_zxid
from zkdata.model import ReplicaAssignment
from zkdata.reassignment import ReassignmentZk

pytestmark = pytest.mark.integration

TP = TopicPartition("t", 0)
STATE = paths.partition_state("t", 0)


@pytest.fixture
def leader_client(zk_connect: str) -> Iterator[KazooClient]:
    """A second session: a leader's, which has read none of the state znodes."""
    with open_client(zk_connect) as client:
        yield client


@pytest.fixture
def fenced(zk_client: KazooClient) -> tuple[KafkaZkClient, int]:
    """The client of a controller with epoch 1, and the zkVersion that fences its writes."""
    zk = KafkaZkClient(zk_client)
    return zk, zk.register_controller_and_increment_epoch(1).zk_version


def _write_state_with_extra(zk_client: KazooClient) -> None:
    body = {
        "controller_epoch": 1,
        "leader": 1,
        "version": 1,
        "leader_epoch": 4,
        "isr": [1, 2],
        "leader_recovery_state": 0,
    }
    zk_client.create(STATE, json.dumps(body).encode(), makepath=True)


def test_the_controller_keeps_unknown_state_fields(zk_client: KazooClient) -> None:
    zk = KafkaZkClient(zk_client)
    epoch = zk.register_controller_and_increment_epoch(1)
    _write_state_with_extra(zk_client)
    current = zk.get_partition_states([TP]).found[TP]
    new = LeaderIsrAndControllerEpoch(current.leader_and_isr.new_leader_and_isr(2, (2,)), 1)
    [result] = zk.update_leader_and_isr({TP: new}, epoch.zk_version).values()
    assert result == 1
    assert committed_zxid(result) == zk_client.exists(STATE).mzxid
    written = json.loads(zk_client.get(STATE)[0])
    assert (written["leader"], written["leader_recovery_state"]) == (2, 0)
    # A second write from the version this client wrote keeps it too, without a read.
    again = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 6, (2, 1), 1), 1)
    assert zk.update_leader_and_isr({TP: again}, epoch.zk_version)[TP] == 2
    assert json.loads(zk_client.get(STATE)[0])["leader_recovery_state"] == 0


def test_a_leader_that_never_read_the_state_keeps_unknown_fields(
    zk_client: KazooClient, leader_client: KazooClient
) -> None:
    _write_state_with_extra(zk_client)
    leader = KafkaZkClient(leader_client)
    shrunk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1,), 0), 1)
    assert leader.update_partition_state(TP, shrunk, 0) == 1
    written = json.loads(zk_client.get(STATE)[0])
    assert (written["isr"], written["leader_recovery_state"]) == ([1], 0)
    assert leader.update_partition_state(TP, shrunk, 0) is None  # stale version: refused


def test_a_reassignment_keeps_the_topic_id_and_unknown_topic_fields(
    zk_client: KazooClient, fenced: tuple[KafkaZkClient, int]
) -> None:
    zk, epoch_zk_version = fenced
    topic = {
        "version": 2,
        "topic_id": "Hf5wG8TfRD6o0uPHUkBw3Q",
        "partitions": {"0": [1, 2], "1": [2, 3]},
        "placement": {"constraints": ["a"]},
    }
    zk_client.create(paths.topic("t"), json.dumps(topic).encode(), makepath=True)
    moving = ReplicaAssignment((1, 2), ()).reassign_to((3, 2))
    assert ReassignmentZk(zk).set_partition_assignment(TP, moving, epoch_zk_version)
    written = json.loads(zk_client.get(paths.topic("t"))[0])
    assert written["topic_id"] == "Hf5wG8TfRD6o0uPHUkBw3Q"
    assert written["placement"] == {"constraints": ["a"]}
    assert written["partitions"] == {"0": [3, 2, 1], "1": [2, 3]}


def test_completed_reassignments_leave_the_others_with_their_fields(
    zk_client: KazooClient, fenced: tuple[KafkaZkClient, int]
) -> None:
    zk, epoch_zk_version = fenced
    request = {
        "version": 1,
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [2, 3]},
            {"topic": "t", "partition": 1, "replicas": [3, 1], "log_dirs": ["any", "any"]},
        ],
        "requested_by": "ops",
    }
    zk_client.create(paths.REASSIGN_PARTITIONS, json.dumps(request).encode(), makepath=True)
    removed = ReassignmentZk(zk).remove_reassignments(
        lambda r: r.topic_partition == TP, epoch_zk_version
    )
    assert [r.topic_partition for r in removed] == [TP]
    assert json.loads(zk_client.get(paths.REASSIGN_PARTITIONS)[0]) == {
        "version": 1,
        "partitions": [
            {"topic": "t", "partition": 1, "replicas": [3, 1], "log_dirs": ["any", "any"]}
        ],
        "requested_by": "ops",
    }
