"""Broker, controller, topic and partition-state znode codecs against Kafka 2.x's bytes.

Decoding takes literal samples as Kafka 2.x writes them to ZooKeeper; encoding asserts
the exact bytes of the formats docs/zookeeper-layout.md lists.
"""

from __future__ import annotations

import json

import pytest

from domain import EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkdata.model import BrokerInfo, ControllerRegistration, ReplicaAssignment, TopicAssignment
from zkdata.znodes import (
    BrokerIdZNode,
    ControllerEpochZNode,
    ControllerZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

TS = 1700000000000

KAFKA_BROKER_V5 = (
    b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
    b'"endpoints":["PLAINTEXT://broker1:9092"],"jmx_port":-1,"port":9092,"host":"broker1",'
    b'"version":5,"timestamp":"1700000000000"}'
)


# -- paths -------------------------------------------------------------------------------


def test_paths_are_kafkas() -> None:
    assert BrokerIdZNode.path(3) == "/brokers/ids/3"
    assert ControllerZNode.path() == "/controller"
    assert ControllerEpochZNode.path() == "/controller_epoch"
    assert TopicZNode.path("orders") == "/brokers/topics/orders"
    assert TopicPartitionStateZNode.path("orders", 7) == "/brokers/topics/orders/partitions/7/state"


# -- /brokers/ids/N ------------------------------------------------------------------------

BROKER_SAMPLES = [
    pytest.param(
        KAFKA_BROKER_V5,
        BrokerInfo(1, (EndPoint("broker1", 9092),), jmx_port=-1, timestamp_ms=TS),
        id="v5-kafka-2.8",
    ),
    pytest.param(
        b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://broker1:9092"],"jmx_port":-1,"host":"broker1",'
        b'"timestamp":"1700000000000","port":9092,"version":4}',
        BrokerInfo(1, (EndPoint("broker1", 9092),), timestamp_ms=TS),
        id="v4-no-features",
    ),
    pytest.param(
        b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
        b'"endpoints":["PLAINTEXT://broker1:9092","SSL://broker1:9093"],"rack":"rack-a",'
        b'"jmx_port":9999,"host":"broker1","timestamp":"1700000000000","port":9092,"version":4}',
        BrokerInfo(
            1,
            (EndPoint("broker1", 9092), EndPoint("broker1", 9093, "SSL", "SSL")),
            rack="rack-a",
            jmx_port=9999,
            timestamp_ms=TS,
        ),
        id="v4-rack-two-listeners",
    ),
    pytest.param(
        b'{"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"SASL_SSL"},'
        b'"endpoints":["INTERNAL://10.0.0.1:9092","EXTERNAL://broker1.example.com:9094"],'
        b'"jmx_port":-1,"host":null,"timestamp":"1700000000000","port":-1,"version":4}',
        BrokerInfo(
            1,
            (
                EndPoint("10.0.0.1", 9092, "INTERNAL", "PLAINTEXT"),
                EndPoint("broker1.example.com", 9094, "EXTERNAL", "SASL_SSL"),
            ),
            timestamp_ms=TS,
        ),
        id="v4-named-listeners-null-host",
    ),
    pytest.param(
        b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://[::1]:9092"],"jmx_port":-1,"host":"::1",'
        b'"timestamp":"1700000000000","port":9092,"version":4}',
        BrokerInfo(1, (EndPoint("::1", 9092),), timestamp_ms=TS),
        id="v4-ipv6-bracketed",
    ),
    pytest.param(
        b'{"jmx_port":-1,"timestamp":"1700000000000","endpoints":["PLAINTEXT://h:9092"],'
        b'"rack":"r1","host":"h","version":3,"port":9092}',
        BrokerInfo(1, (EndPoint("h", 9092),), rack="r1", timestamp_ms=TS),
        id="v3-rack",
    ),
    pytest.param(
        b'{"jmx_port":-1,"timestamp":"1700000000000","endpoints":["SSL://h:9093"],'
        b'"host":null,"version":2,"port":-1}',
        BrokerInfo(1, (EndPoint("h", 9093, "SSL", "SSL"),), timestamp_ms=TS),
        id="v2-listener-is-protocol",
    ),
    pytest.param(
        b'{"jmx_port":-1,"timestamp":"1700000000000","host":"h","version":1,"port":9092}',
        BrokerInfo(1, (EndPoint("h", 9092),), timestamp_ms=TS),
        id="v1-host-port",
    ),
    pytest.param(
        b'{"jmx_port":-1,"timestamp":1700000000000,"host":"h","version":1,"port":9092}',
        BrokerInfo(1, (EndPoint("h", 9092),), timestamp_ms=TS),
        id="timestamp-as-integer-tolerated",
    ),
    pytest.param(
        b'{"host":"h","version":1,"port":9092}',
        BrokerInfo(1, (EndPoint("h", 9092),), jmx_port=-1, timestamp_ms=0),
        id="no-timestamp-no-jmx-defaults",
    ),
]


@pytest.mark.parametrize(("data", "expected"), BROKER_SAMPLES)
def test_broker_registration_decodes_kafka_samples(data: bytes, expected: BrokerInfo) -> None:
    assert BrokerIdZNode.decode(1, data) == expected


def test_broker_registration_decode_takes_the_id_from_the_path() -> None:
    assert BrokerIdZNode.decode(42, KAFKA_BROKER_V5).id == 42


def test_broker_registration_encodes_exactly_as_kafka_2_8() -> None:
    info = BrokerInfo(1, (EndPoint("broker1", 9092),), timestamp_ms=TS)
    assert BrokerIdZNode.encode(info) == KAFKA_BROKER_V5


def test_broker_registration_encodes_listeners_rack_and_first_endpoint_as_host_port() -> None:
    info = BrokerInfo(
        3,
        (
            EndPoint("b3", 9093, "INTERNAL", "PLAINTEXT"),
            EndPoint("b3.example.com", 9094, "EXTERNAL", "SSL"),
        ),
        rack="rack-b",
        jmx_port=9999,
        timestamp_ms=TS,
    )
    encoded = BrokerIdZNode.encode(info)
    assert encoded == (
        b'{"features":{},"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT",'
        b'"EXTERNAL":"SSL"},"endpoints":["INTERNAL://b3:9093","EXTERNAL://b3.example.com:9094"],'
        b'"jmx_port":9999,"port":9093,"host":"b3","version":5,"timestamp":"1700000000000",'
        b'"rack":"rack-b"}'
    )
    assert BrokerIdZNode.decode(3, encoded) == info


def test_broker_registration_timestamp_is_a_string_of_ms() -> None:
    body = json.loads(BrokerIdZNode.encode(BrokerInfo(1, (EndPoint("h", 1),), timestamp_ms=TS)))
    assert body["timestamp"] == "1700000000000"


# -- /controller and /controller_epoch -----------------------------------------------------


def test_controller_decodes_kafka_sample() -> None:
    data = b'{"version":1,"brokerid":2,"timestamp":"1700000000000"}'
    assert ControllerZNode.decode(data) == ControllerRegistration(2, TS)


def test_controller_decodes_without_checking_version_like_kafka() -> None:
    data = b'{"version":2,"brokerid":2,"timestamp":"1700000000000"}'
    assert ControllerZNode.decode(data) == ControllerRegistration(2, TS)


def test_controller_encodes_exactly_as_kafka() -> None:
    encoded = ControllerZNode.encode(ControllerRegistration(2, TS))
    assert encoded == b'{"version":1,"brokerid":2,"timestamp":"1700000000000"}'


@pytest.mark.parametrize(
    ("data", "epoch"),
    [
        pytest.param(b"7", 7, id="seven"),
        pytest.param(b"0", 0, id="zero"),
        pytest.param(b"2147483647", 2**31 - 1, id="int-max"),
        pytest.param(b"12\n", 12, id="trailing-newline-from-zkcli"),
    ],
)
def test_controller_epoch_decodes_a_bare_integer(data: bytes, epoch: int) -> None:
    assert ControllerEpochZNode.decode(data) == epoch


@pytest.mark.parametrize(("epoch", "data"), [(7, b"7"), (0, b"0"), (1234, b"1234")])
def test_controller_epoch_encodes_a_bare_integer(epoch: int, data: bytes) -> None:
    assert ControllerEpochZNode.encode(epoch) == data


# -- /brokers/topics/T ---------------------------------------------------------------------

TOPIC_SAMPLES = [
    pytest.param(
        b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}',
        TopicAssignment({0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1))}),
        id="v1",
    ),
    pytest.param(
        b'{"version":1,"partitions":{"0":[1]},"adding_replicas":{"0":[2]}}',
        TopicAssignment({0: ReplicaAssignment((1,))}),
        id="v1-ignores-adding",
    ),
    pytest.param(
        b'{"version":2,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},'
        b'"removing_replicas":{}}',
        TopicAssignment({0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1))}),
        id="v2-not-reassigning",
    ),
    pytest.param(
        b'{"version":2,"partitions":{"0":[4,2,3,1],"1":[2,3,1]},"adding_replicas":{"0":[4]},'
        b'"removing_replicas":{"0":[1]}}',
        TopicAssignment(
            {
                0: ReplicaAssignment((4, 2, 3, 1), adding_replicas=(4,), removing_replicas=(1,)),
                1: ReplicaAssignment((2, 3, 1)),
            }
        ),
        id="v2-reassigning",
    ),
    pytest.param(
        b'{"version":2,"partitions":{"0":[1,2]}}',
        TopicAssignment({0: ReplicaAssignment((1, 2))}),
        id="v2-without-adding-removing-keys",
    ),
    pytest.param(
        b'{"version":3,"topic_id":"Hf5wG8TfRD6o0uPHUkBw3Q","partitions":{"0":[1,2]},'
        b'"adding_replicas":{},"removing_replicas":{}}',
        TopicAssignment({0: ReplicaAssignment((1, 2))}, topic_id="Hf5wG8TfRD6o0uPHUkBw3Q"),
        id="v3-topic-id",
    ),
    pytest.param(
        b'{"version":1,"partitions":{}}',
        TopicAssignment({}),
        id="no-partitions",
    ),
]


@pytest.mark.parametrize(("data", "expected"), TOPIC_SAMPLES)
def test_topic_decodes_kafka_samples(data: bytes, expected: TopicAssignment) -> None:
    assert TopicZNode.decode(data) == expected


def test_topic_decoded_reassignment_is_flagged() -> None:
    data = (
        b'{"version":2,"partitions":{"0":[4,1]},"adding_replicas":{"0":[4]},"removing_replicas":{}}'
    )
    assert TopicZNode.decode(data).partitions[0].is_being_reassigned


def test_topic_encodes_version_2_with_sorted_partitions() -> None:
    assignment = TopicAssignment({1: ReplicaAssignment((2, 3, 1)), 0: ReplicaAssignment((1, 2, 3))})
    assert TopicZNode.encode(assignment) == (
        b'{"version":2,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},'
        b'"removing_replicas":{}}'
    )


def test_topic_encodes_adding_and_removing_replicas_of_reassigned_partitions_only() -> None:
    assignment = TopicAssignment(
        {
            0: ReplicaAssignment((4, 2, 3, 1), adding_replicas=(4,), removing_replicas=(1,)),
            1: ReplicaAssignment((2, 3, 1)),
            10: ReplicaAssignment((3, 5), adding_replicas=(5,)),
        }
    )
    assert TopicZNode.encode(assignment) == (
        b'{"version":2,"partitions":{"0":[4,2,3,1],"1":[2,3,1],"10":[3,5]},'
        b'"adding_replicas":{"0":[4],"10":[5]},"removing_replicas":{"0":[1]}}'
    )


def test_topic_with_a_topic_id_is_rewritten_as_version_3_keeping_the_id() -> None:
    data = b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":{"0":[1,2]}}'
    decoded = TopicZNode.decode(data)
    assert decoded.topic_id == "AAAAAAAAAAAAAAAAAAAAAQ"
    encoded = TopicZNode.encode(decoded)
    assert encoded.startswith(b'{"version":3,"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ",')
    assert TopicZNode.decode(encoded) == decoded


# -- /brokers/topics/T/partitions/P/state --------------------------------------------------


def test_partition_state_decodes_kafka_sample_with_the_stat_version() -> None:
    data = b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2,3]}'
    assert TopicPartitionStateZNode.decode(data, zk_version=4) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(leader=1, leader_epoch=5, isr=(1, 2, 3), zk_version=4), controller_epoch=3
    )


def test_partition_state_decodes_no_leader_and_empty_isr() -> None:
    data = b'{"controller_epoch":9,"leader":-1,"version":1,"leader_epoch":6,"isr":[]}'
    state = TopicPartitionStateZNode.decode(data, zk_version=0)
    assert state.leader_and_isr == LeaderAndIsr(-1, 6, ())
    assert state.controller_epoch == 9


def test_partition_state_encodes_exactly_as_kafka() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 5, (1, 2, 3), zk_version=17), 3)
    assert TopicPartitionStateZNode.encode(state) == (
        b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2,3]}'
    )


def test_partition_state_round_trip_keeps_everything_but_the_zk_version() -> None:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 11, (2, 3), zk_version=5), 7)
    decoded = TopicPartitionStateZNode.decode(TopicPartitionStateZNode.encode(state), 5)
    assert decoded == state
