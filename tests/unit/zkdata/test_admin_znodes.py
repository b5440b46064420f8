"""Admin, ISR-change and topic-config znode codecs against Kafka 2.x's bytes."""

from __future__ import annotations

import pytest

from domain import TopicPartition
from zkdata.admin_znodes import (
    DeleteTopicsZNode,
    IsrChangeNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicConfigZNode,
)
from zkdata.model import PartitionReassignment, TopicConfig


def test_paths_are_kafkas() -> None:
    assert DeleteTopicsZNode.path("orders") == "/admin/delete_topics/orders"
    assert ReassignPartitionsZNode.path() == "/admin/reassign_partitions"
    assert PreferredReplicaElectionZNode.path() == "/admin/preferred_replica_election"
    assert IsrChangeNotificationSequenceZNode.path_prefix() == (
        "/isr_change_notification/isr_change_"
    )
    assert IsrChangeNotificationSequenceZNode.path("isr_change_0000000003") == (
        "/isr_change_notification/isr_change_0000000003"
    )
    assert TopicConfigZNode.path("orders") == "/config/topics/orders"


# -- /admin/reassign_partitions ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3,4]},'
            b'{"topic":"orders","partition":1,"replicas":[3,4,2]}]}',
            (
                PartitionReassignment(TopicPartition("orders", 0), (2, 3, 4)),
                PartitionReassignment(TopicPartition("orders", 1), (3, 4, 2)),
            ),
            id="kafka-reassign-partitions-tool",
        ),
        pytest.param(
            b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3],'
            b'"log_dirs":["any","/data/kafka-logs-2"]}]}',
            (PartitionReassignment(TopicPartition("orders", 0), (2, 3)),),
            id="with-log-dirs",
        ),
        pytest.param(
            b'{"version":1,"partitions":[]}',
            (),
            id="empty",
        ),
    ],
)
def test_reassign_partitions_decodes_kafka_samples(
    data: bytes, expected: tuple[PartitionReassignment, ...]
) -> None:
    assert ReassignPartitionsZNode.decode(data) == expected


def test_reassign_partitions_encodes_kafka_json() -> None:
    encoded = ReassignPartitionsZNode.encode(
        (
            PartitionReassignment(TopicPartition("orders", 0), (2, 3, 4)),
            PartitionReassignment(TopicPartition("audit", 5), (1,)),
        )
    )
    assert encoded == (
        b'{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[2,3,4]},'
        b'{"topic":"audit","partition":5,"replicas":[1]}]}'
    )


# -- /admin/preferred_replica_election and /isr_change_notification ------------------------

PARTITION_LIST_SAMPLES = [
    pytest.param(
        b'{"version":1,"partitions":[{"topic":"orders","partition":0},'
        b'{"topic":"audit","partition":3}]}',
        (TopicPartition("orders", 0), TopicPartition("audit", 3)),
        id="two-partitions",
    ),
    pytest.param(
        b'{"partitions":[{"partition":0,"topic":"orders"}],"version":1}',
        (TopicPartition("orders", 0),),
        id="any-key-order",
    ),
    pytest.param(b'{"version":1,"partitions":[]}', (), id="empty"),
]

PARTITION_LIST_CODECS = [
    pytest.param(PreferredReplicaElectionZNode, id="preferred-replica-election"),
    pytest.param(IsrChangeNotificationSequenceZNode, id="isr-change-notification"),
]


@pytest.mark.parametrize("codec", PARTITION_LIST_CODECS)
@pytest.mark.parametrize(("data", "expected"), PARTITION_LIST_SAMPLES)
def test_partition_list_znodes_decode_kafka_samples(
    codec: type[PreferredReplicaElectionZNode] | type[IsrChangeNotificationSequenceZNode],
    data: bytes,
    expected: tuple[TopicPartition, ...],
) -> None:
    assert codec.decode(data) == expected


@pytest.mark.parametrize("codec", PARTITION_LIST_CODECS)
def test_partition_list_znodes_encode_kafka_json(
    codec: type[PreferredReplicaElectionZNode] | type[IsrChangeNotificationSequenceZNode],
) -> None:
    encoded = codec.encode((TopicPartition("orders", 0), TopicPartition("audit", 3)))
    assert encoded == (
        b'{"version":1,"partitions":[{"topic":"orders","partition":0},'
        b'{"topic":"audit","partition":3}]}'
    )


# -- /config/topics/T ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            b'{"version":1,"config":{"unclean.leader.election.enable":"true"}}',
            TopicConfig({"unclean.leader.election.enable": "true"}),
            id="unclean-election",
        ),
        pytest.param(
            b'{"version":1,"config":{"min.insync.replicas":"2","retention.ms":"86400000"}}',
            TopicConfig({"min.insync.replicas": "2", "retention.ms": "86400000"}),
            id="two-overrides",
        ),
        pytest.param(b'{"version":1,"config":{}}', TopicConfig({}), id="no-overrides"),
        pytest.param(b'{"version":1}', TopicConfig({}), id="no-config-key"),
    ],
)
def test_topic_config_decodes_kafka_samples(data: bytes, expected: TopicConfig) -> None:
    assert TopicConfigZNode.decode(data) == expected


def test_topic_config_encodes_kafka_json_with_sorted_keys() -> None:
    encoded = TopicConfigZNode.encode(
        TopicConfig({"unclean.leader.election.enable": "true", "min.insync.replicas": "2"})
    )
    assert encoded == (
        b'{"version":1,"config":{"min.insync.replicas":"2",'
        b'"unclean.leader.election.enable":"true"}}'
    )


def test_reassign_partitions_decodes_negative_broker_ids_for_the_controller_to_reject() -> None:
    data = b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,-1]}]}'
    assert ReassignPartitionsZNode.decode(data) == (
        PartitionReassignment(TopicPartition("t", 0), (1, -1)),
    )
