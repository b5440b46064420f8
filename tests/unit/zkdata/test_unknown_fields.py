"""Fields this project does not use survive a decode and the following encode, in the
znodes that both this project and Kafka 2.8's tools rewrite: `/brokers/topics/T` (with
KIP-516's `topic_id`), partition state znodes and `/admin/reassign_partitions`."""

from __future__ import annotations

import base64
import json

import pytest

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.errors import ZnodeFormatError
from zkdata.znodes import TopicPartitionStateZNode, TopicZNode, new_topic_id


def test_a_topic_id_in_a_version_2_znode_is_read_and_kept() -> None:
    """Kafka reads `topic_id` whatever the version; a rewrite keeps it (as version 3)."""
    data = b'{"version":2,"topic_id":"Hf5wG8TfRD6o0uPHUkBw3Q","partitions":{"0":[1,2]}}'
    decoded = TopicZNode.decode(data)
    assert decoded.topic_id == "Hf5wG8TfRD6o0uPHUkBw3Q"
    rewritten = json.loads(TopicZNode.encode(decoded))
    assert (rewritten["version"], rewritten["topic_id"]) == (3, "Hf5wG8TfRD6o0uPHUkBw3Q")


def test_unknown_topic_fields_survive_a_rewrite() -> None:
    data = (
        b'{"version":3,"topic_id":"Hf5wG8TfRD6o0uPHUkBw3Q","partitions":{"0":[1,2]},'
        b'"adding_replicas":{},"removing_replicas":{},"confluent_placement":{"v":1,"r":[2]}}'
    )
    rewritten = json.loads(TopicZNode.encode(TopicZNode.decode(data)))
    assert rewritten["confluent_placement"] == {"v": 1, "r": [2]}
    assert rewritten["partitions"] == {"0": [1, 2]}


@pytest.mark.parametrize(
    "topic_id",
    ["abc", "Hf5wG8TfRD6o0uPHUkBw3Q==", "Hf5wG8TfRD6o0uPHUkBw3", "Hf5wG8TfRD6o0uPHUkBw3Q+"],
)
def test_a_topic_id_that_is_not_a_base64_uuid_does_not_decode(topic_id: str) -> None:
    data = json.dumps({"version": 3, "topic_id": topic_id, "partitions": {}}).encode()
    with pytest.raises(ZnodeFormatError, match="topic_id"):
        TopicZNode.decode(data)


def test_new_topic_ids_are_kafka_uuids() -> None:
    ids = {new_topic_id() for _ in range(200)}
    assert len(ids) == 200
    for topic_id in ids:
        assert len(topic_id) == 22
        assert not topic_id.startswith("-")
        assert len(base64.urlsafe_b64decode(topic_id + "==")) == 16
        data = json.dumps({"version": 3, "topic_id": topic_id, "partitions": {}}).encode()
        assert TopicZNode.decode(data).topic_id == topic_id


def test_unknown_state_fields_are_written_back() -> None:
    data = (
        b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":7,"isr":[1,2],'
        b'"leader_recovery_state":0}'
    )
    kept = TopicPartitionStateZNode.unknown_fields(data)
    assert kept == (("leader_recovery_state", "0"),)
    new = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 8, (2,), 4), 3)
    written = json.loads(TopicPartitionStateZNode.encode(new, kept))
    assert written == {
        "controller_epoch": 3,
        "leader": 2,
        "version": 1,
        "leader_epoch": 8,
        "isr": [2],
        "leader_recovery_state": 0,
    }


def test_a_kept_field_never_overrides_a_known_one() -> None:
    new = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 8, (2,), 4), 3)
    written = json.loads(TopicPartitionStateZNode.encode(new, (("leader", "9"),)))
    assert written["leader"] == 2


def test_reassignment_entries_keep_log_dirs_and_the_request_its_other_fields() -> None:
    data = (
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3],'
        b'"log_dirs":["any","/data/2"]},{"topic":"t","partition":1,"replicas":[3]}],'
        b'"requested_by":"ops"}'
    )
    entries = ReassignPartitionsZNode.decode(data)
    rest = ReassignPartitionsZNode.encode(entries[:1], ReassignPartitionsZNode.unknown_fields(data))
    assert json.loads(rest) == {
        "version": 1,
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [2, 3], "log_dirs": ["any", "/data/2"]}
        ],
        "requested_by": "ops",
    }
