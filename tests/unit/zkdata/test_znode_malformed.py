"""Malformed znode data: every decoder raises `ZnodeFormatError` and nothing else.

One table of cases per format: absent data, bytes that are not UTF-8 or not JSON, JSON of
the wrong shape, missing fields, wrong types (booleans where integers belong), unsupported
versions, bad partition keys and bad endpoint strings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from zkdata.admin_znodes import (
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicConfigZNode,
)
from zkdata.errors import ZnodeFormatError
from zkdata.znodes import (
    BrokerIdZNode,
    ControllerEpochZNode,
    ControllerZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

DECODERS: dict[str, Callable[[bytes | None], object]] = {
    "broker": lambda data: BrokerIdZNode.decode(1, data),
    "controller": ControllerZNode.decode,
    "controller_epoch": ControllerEpochZNode.decode,
    "topic": TopicZNode.decode,
    "partition_state": lambda data: TopicPartitionStateZNode.decode(data, 0),
    "reassign": ReassignPartitionsZNode.decode,
    "preferred": PreferredReplicaElectionZNode.decode,
    "isr_change": IsrChangeNotificationSequenceZNode.decode,
    "log_dir_event": LogDirEventNotificationSequenceZNode.decode,
    "topic_config": TopicConfigZNode.decode,
}

JSON_DECODERS = sorted(set(DECODERS) - {"controller_epoch"})


def j(obj: Any) -> bytes:
    """Compact JSON bytes of `obj`."""
    return json.dumps(obj, separators=(",", ":")).encode()


BROKER_V4: dict[str, Any] = {
    "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
    "endpoints": ["PLAINTEXT://broker1:9092"],
    "jmx_port": -1,
    "host": "broker1",
    "timestamp": "1700000000000",
    "port": 9092,
    "version": 4,
}
BROKER_V1: dict[str, Any] = {"jmx_port": -1, "timestamp": "1", "host": "h", "version": 1, "port": 1}
CONTROLLER: dict[str, Any] = {"version": 1, "brokerid": 2, "timestamp": "1700000000000"}
TOPIC: dict[str, Any] = {
    "version": 2,
    "partitions": {"0": [1, 2]},
    "adding_replicas": {},
    "removing_replicas": {},
}
STATE: dict[str, Any] = {
    "controller_epoch": 3,
    "leader": 1,
    "version": 1,
    "leader_epoch": 5,
    "isr": [1, 2, 3],
}
REASSIGN_ENTRY: dict[str, Any] = {"topic": "t", "partition": 0, "replicas": [1, 2]}
TP_ENTRY: dict[str, Any] = {"topic": "t", "partition": 0}


def with_(base: dict[str, Any], **changes: Any) -> bytes:
    """`base` with `changes` applied, as JSON bytes."""
    return j({**base, **changes})


def without(base: dict[str, Any], key: str) -> bytes:
    """`base` without `key`, as JSON bytes."""
    return j({k: v for k, v in base.items() if k != key})


def broker_endpoint(endpoint: Any) -> bytes:
    """A version 4 registration whose only endpoint is `endpoint`."""
    return with_(BROKER_V4, endpoints=[endpoint])


def reassign(entry: dict[str, Any] | Any) -> bytes:
    """A reassignment request with one entry."""
    return j({"version": 1, "partitions": [entry]})


def tp_list(entry: dict[str, Any] | Any) -> bytes:
    """A partition list (preferred election / ISR change) with one entry."""
    return j({"version": 1, "partitions": [entry]})


def entry_without(base: dict[str, Any], key: str) -> dict[str, Any]:
    """`base` without `key`."""
    return {k: v for k, v in base.items() if k != key}


GENERIC_CASES = [
    pytest.param(name, data, id=f"{name}-{case}")
    for name in DECODERS
    for case, data in [
        ("none", None),
        ("empty", b""),
        ("not-utf8", b"\xff\xfe\xfd"),
        ("not-json", b"{version: 1"),
        ("truncated", b'{"version":1,"partitions"'),
    ]
] + [
    pytest.param(name, data, id=f"{name}-{case}")
    for name in JSON_DECODERS
    for case, data in [
        ("json-array", b"[1,2,3]"),
        ("json-string", b'"version"'),
        ("json-number", b"7"),
        ("json-null", b"null"),
        ("json-true", b"true"),
        ("empty-object", b"{}"),
        ("version-missing", b'{"partitions":{}}'),
        ("version-string", b'{"version":"1","partitions":[]}'),
        ("version-boolean", b'{"version":true,"partitions":[]}'),
        ("version-float", b'{"version":1.0,"partitions":[]}'),
        ("version-unsupported", b'{"version":99,"partitions":[]}'),
    ]
    if not (name == "controller" and case.startswith("version-"))
]

SPECIFIC_CASES = [
    # /brokers/ids/N
    pytest.param("broker", with_(BROKER_V4, version=0), id="broker-version-0"),
    pytest.param("broker", with_(BROKER_V4, version=6), id="broker-version-6"),
    pytest.param("broker", without(BROKER_V1, "host"), id="broker-v1-host-missing"),
    pytest.param("broker", without(BROKER_V1, "port"), id="broker-v1-port-missing"),
    pytest.param("broker", with_(BROKER_V1, port="9092"), id="broker-v1-port-string"),
    pytest.param("broker", with_(BROKER_V1, port=True), id="broker-v1-port-boolean"),
    pytest.param("broker", with_(BROKER_V1, port=-2), id="broker-v1-port-negative"),
    pytest.param("broker", with_(BROKER_V1, host=5), id="broker-v1-host-number"),
    pytest.param("broker", with_(BROKER_V1, host=None), id="broker-v1-host-null"),
    pytest.param("broker", without(BROKER_V4, "endpoints"), id="broker-endpoints-missing"),
    pytest.param("broker", with_(BROKER_V4, endpoints=[]), id="broker-endpoints-empty"),
    pytest.param(
        "broker", with_(BROKER_V4, endpoints="PLAINTEXT://h:1"), id="broker-endpoints-str"
    ),
    pytest.param("broker", broker_endpoint(9092), id="broker-endpoint-number"),
    pytest.param("broker", broker_endpoint(None), id="broker-endpoint-null"),
    pytest.param("broker", broker_endpoint({"host": "h"}), id="broker-endpoint-object"),
    pytest.param("broker", broker_endpoint("broker1:9092"), id="broker-endpoint-no-listener"),
    pytest.param("broker", broker_endpoint("PLAINTEXT://broker1"), id="broker-endpoint-no-port"),
    pytest.param("broker", broker_endpoint("PLAINTEXT://h:port"), id="broker-endpoint-port-word"),
    pytest.param("broker", broker_endpoint("PLAINTEXT://h:"), id="broker-endpoint-port-empty"),
    pytest.param("broker", broker_endpoint("PLAIN TEXT://h:1"), id="broker-endpoint-space"),
    pytest.param("broker", broker_endpoint("PLAINTEXT://h:1/x"), id="broker-endpoint-trailing"),
    pytest.param("broker", broker_endpoint("://h:1"), id="broker-endpoint-no-listener-name"),
    pytest.param("broker", broker_endpoint("PLAINTEXT:/h:1"), id="broker-endpoint-one-slash"),
    pytest.param("broker", broker_endpoint(""), id="broker-endpoint-empty-string"),
    pytest.param(
        "broker",
        broker_endpoint("PLAINTEXT://h:" + "9" * 5000),
        id="broker-endpoint-port-5000-digits",
    ),
    pytest.param(
        "broker",
        with_(BROKER_V4, listener_security_protocol_map=["PLAINTEXT"]),
        id="broker-protocol-map-list",
    ),
    pytest.param(
        "broker",
        with_(BROKER_V4, listener_security_protocol_map={"PLAINTEXT": 1}),
        id="broker-protocol-map-value-number",
    ),
    pytest.param("broker", with_(BROKER_V4, jmx_port="-1"), id="broker-jmx-port-string"),
    pytest.param("broker", with_(BROKER_V4, jmx_port=False), id="broker-jmx-port-boolean"),
    pytest.param("broker", with_(BROKER_V4, jmx_port=1.5), id="broker-jmx-port-float"),
    pytest.param("broker", with_(BROKER_V4, rack=5), id="broker-rack-number"),
    pytest.param("broker", with_(BROKER_V4, rack=["r"]), id="broker-rack-list"),
    pytest.param("broker", with_(BROKER_V4, timestamp="soon"), id="broker-timestamp-word"),
    pytest.param("broker", with_(BROKER_V4, timestamp=""), id="broker-timestamp-empty"),
    pytest.param("broker", with_(BROKER_V4, timestamp="-"), id="broker-timestamp-dash"),
    pytest.param("broker", with_(BROKER_V4, timestamp="1.5"), id="broker-timestamp-decimal"),
    pytest.param("broker", with_(BROKER_V4, timestamp=True), id="broker-timestamp-boolean"),
    pytest.param("broker", with_(BROKER_V4, timestamp=1.5), id="broker-timestamp-float"),
    pytest.param("broker", with_(BROKER_V4, timestamp=None), id="broker-timestamp-null"),
    pytest.param("broker", with_(BROKER_V4, timestamp="--5"), id="broker-timestamp-double-minus"),
    pytest.param(
        "broker", with_(BROKER_V4, timestamp="\u00b2"), id="broker-timestamp-superscript-digit"
    ),
    pytest.param(
        "broker", with_(BROKER_V4, timestamp="1" * 5000), id="broker-timestamp-5000-digits"
    ),
    # /controller
    pytest.param("controller", without(CONTROLLER, "brokerid"), id="controller-brokerid-missing"),
    pytest.param("controller", with_(CONTROLLER, brokerid="2"), id="controller-brokerid-string"),
    pytest.param("controller", with_(CONTROLLER, brokerid=True), id="controller-brokerid-boolean"),
    pytest.param("controller", with_(CONTROLLER, brokerid=2.0), id="controller-brokerid-float"),
    pytest.param("controller", with_(CONTROLLER, brokerid=-1), id="controller-brokerid-negative"),
    pytest.param("controller", with_(CONTROLLER, brokerid=None), id="controller-brokerid-null"),
    pytest.param("controller", with_(CONTROLLER, timestamp="x"), id="controller-timestamp-word"),
    pytest.param("controller", with_(CONTROLLER, timestamp=[1]), id="controller-timestamp-list"),
    pytest.param(
        "controller", with_(CONTROLLER, timestamp="--1"), id="controller-timestamp-double-minus"
    ),
    pytest.param("controller", b"[1]", id="controller-json-array"),
    pytest.param("controller", b"2", id="controller-bare-number"),
    # /controller_epoch
    pytest.param("controller_epoch", b"-1", id="controller-epoch-negative"),
    pytest.param("controller_epoch", b"1.5", id="controller-epoch-decimal"),
    pytest.param("controller_epoch", b"7a", id="controller-epoch-trailing-letter"),
    pytest.param("controller_epoch", b"0x7", id="controller-epoch-hex"),
    pytest.param("controller_epoch", b"1_000", id="controller-epoch-underscore"),
    pytest.param("controller_epoch", b"   ", id="controller-epoch-blank"),
    pytest.param("controller_epoch", b'{"epoch":7}', id="controller-epoch-json"),
    pytest.param("controller_epoch", "\u0661".encode(), id="controller-epoch-non-ascii-digit"),
    pytest.param("controller_epoch", b"9" * 5000, id="controller-epoch-5000-digits"),
    # /brokers/topics/T
    pytest.param("topic", with_(TOPIC, version=0), id="topic-version-0"),
    pytest.param("topic", with_(TOPIC, version=4), id="topic-version-4"),
    pytest.param("topic", without(TOPIC, "partitions"), id="topic-partitions-missing"),
    pytest.param("topic", with_(TOPIC, partitions=[[1, 2]]), id="topic-partitions-list"),
    pytest.param("topic", with_(TOPIC, partitions=None), id="topic-partitions-null"),
    pytest.param("topic", with_(TOPIC, partitions={"a": [1]}), id="topic-key-word"),
    pytest.param("topic", with_(TOPIC, partitions={"-1": [1]}), id="topic-key-negative"),
    pytest.param("topic", with_(TOPIC, partitions={"1.0": [1]}), id="topic-key-decimal"),
    pytest.param("topic", with_(TOPIC, partitions={" 1": [1]}), id="topic-key-space"),
    pytest.param("topic", with_(TOPIC, partitions={"": [1]}), id="topic-key-empty"),
    pytest.param("topic", with_(TOPIC, partitions={"\u0661": [1]}), id="topic-key-non-ascii"),
    pytest.param("topic", with_(TOPIC, partitions={"9" * 5000: [1]}), id="topic-key-5000-digits"),
    pytest.param("topic", with_(TOPIC, partitions={"0": 1}), id="topic-replicas-number"),
    pytest.param("topic", with_(TOPIC, partitions={"0": {"1": 1}}), id="topic-replicas-object"),
    pytest.param("topic", with_(TOPIC, partitions={"0": ["1"]}), id="topic-replica-string"),
    pytest.param("topic", with_(TOPIC, partitions={"0": [True]}), id="topic-replica-boolean"),
    pytest.param("topic", with_(TOPIC, partitions={"0": [1.0]}), id="topic-replica-float"),
    pytest.param("topic", with_(TOPIC, partitions={"0": [-1]}), id="topic-replica-negative"),
    pytest.param("topic", with_(TOPIC, partitions={"0": [None]}), id="topic-replica-null"),
    pytest.param("topic", with_(TOPIC, adding_replicas=[]), id="topic-adding-list"),
    pytest.param("topic", with_(TOPIC, removing_replicas=5), id="topic-removing-number"),
    pytest.param("topic", with_(TOPIC, adding_replicas={"0": [True]}), id="topic-adding-boolean"),
    pytest.param("topic", with_(TOPIC, removing_replicas={"0": "1"}), id="topic-removing-string"),
    pytest.param(
        "topic", with_(TOPIC, adding_replicas={"7": [3]}), id="topic-adding-unknown-partition"
    ),
    pytest.param("topic", with_(TOPIC, removing_replicas={"x": [3]}), id="topic-removing-bad-key"),
    pytest.param("topic", with_(TOPIC, version=3, topic_id=5), id="topic-v3-topic-id-number"),
    # /brokers/topics/T/partitions/P/state
    pytest.param("partition_state", with_(STATE, version=2), id="state-version-2"),
    pytest.param("partition_state", without(STATE, "version"), id="state-version-missing"),
    pytest.param("partition_state", without(STATE, "leader"), id="state-leader-missing"),
    pytest.param("partition_state", with_(STATE, leader="1"), id="state-leader-string"),
    pytest.param("partition_state", with_(STATE, leader=True), id="state-leader-boolean"),
    pytest.param("partition_state", with_(STATE, leader=1.0), id="state-leader-float"),
    pytest.param("partition_state", with_(STATE, leader=-2), id="state-leader-below-no-leader"),
    pytest.param("partition_state", with_(STATE, leader=None), id="state-leader-null"),
    pytest.param(
        "partition_state", without(STATE, "leader_epoch"), id="state-leader-epoch-missing"
    ),
    pytest.param(
        "partition_state", with_(STATE, leader_epoch=-1), id="state-leader-epoch-negative"
    ),
    pytest.param(
        "partition_state", with_(STATE, leader_epoch=False), id="state-leader-epoch-boolean"
    ),
    pytest.param("partition_state", without(STATE, "isr"), id="state-isr-missing"),
    pytest.param("partition_state", with_(STATE, isr=1), id="state-isr-number"),
    pytest.param("partition_state", with_(STATE, isr="1,2"), id="state-isr-string"),
    pytest.param("partition_state", with_(STATE, isr=[1, True]), id="state-isr-boolean"),
    pytest.param("partition_state", with_(STATE, isr=[1, None]), id="state-isr-null"),
    pytest.param("partition_state", with_(STATE, isr=[-1]), id="state-isr-negative"),
    pytest.param(
        "partition_state",
        without(STATE, "controller_epoch"),
        id="state-controller-epoch-missing",
    ),
    pytest.param(
        "partition_state",
        with_(STATE, controller_epoch=True),
        id="state-controller-epoch-boolean",
    ),
    pytest.param(
        "partition_state",
        with_(STATE, controller_epoch="3"),
        id="state-controller-epoch-string",
    ),
    # /admin/reassign_partitions
    pytest.param("reassign", j({"version": 1}), id="reassign-partitions-missing"),
    pytest.param("reassign", j({"version": 1, "partitions": {}}), id="reassign-partitions-object"),
    pytest.param("reassign", j({"version": 2, "partitions": []}), id="reassign-version-2"),
    pytest.param("reassign", reassign([1, 2]), id="reassign-entry-list"),
    pytest.param("reassign", reassign("t-0"), id="reassign-entry-string"),
    pytest.param(
        "reassign", reassign(entry_without(REASSIGN_ENTRY, "topic")), id="reassign-topic-missing"
    ),
    pytest.param("reassign", reassign({**REASSIGN_ENTRY, "topic": 5}), id="reassign-topic-number"),
    pytest.param(
        "reassign",
        reassign(entry_without(REASSIGN_ENTRY, "partition")),
        id="reassign-partition-missing",
    ),
    pytest.param(
        "reassign", reassign({**REASSIGN_ENTRY, "partition": "0"}), id="reassign-partition-string"
    ),
    pytest.param(
        "reassign", reassign({**REASSIGN_ENTRY, "partition": True}), id="reassign-partition-bool"
    ),
    pytest.param(
        "reassign", reassign({**REASSIGN_ENTRY, "partition": -1}), id="reassign-partition-negative"
    ),
    pytest.param(
        "reassign",
        reassign(entry_without(REASSIGN_ENTRY, "replicas")),
        id="reassign-replicas-missing",
    ),
    pytest.param(
        "reassign", reassign({**REASSIGN_ENTRY, "replicas": 1}), id="reassign-replicas-number"
    ),
    pytest.param(
        "reassign",
        reassign({**REASSIGN_ENTRY, "replicas": [1, False]}),
        id="reassign-replica-boolean",
    ),
    # /admin/preferred_replica_election and /isr_change_notification/isr_change_N
    *[
        pytest.param(name, data, id=f"{name}-{case}")
        for name in ("preferred", "isr_change")
        for case, data in [
            ("partitions-missing", j({"version": 1})),
            ("partitions-object", j({"version": 1, "partitions": {"t": 0}})),
            ("version-2", j({"version": 2, "partitions": []})),
            ("entry-list", tp_list(["t", 0])),
            ("entry-null", tp_list(None)),
            ("topic-missing", tp_list(entry_without(TP_ENTRY, "topic"))),
            ("topic-null", tp_list({**TP_ENTRY, "topic": None})),
            ("partition-missing", tp_list(entry_without(TP_ENTRY, "partition"))),
            ("partition-string", tp_list({**TP_ENTRY, "partition": "0"})),
            ("partition-boolean", tp_list({**TP_ENTRY, "partition": True})),
            ("partition-negative", tp_list({**TP_ENTRY, "partition": -1})),
        ]
    ],
    # /config/topics/T
    pytest.param("topic_config", j({"version": 2, "config": {}}), id="config-version-2"),
    pytest.param("topic_config", j({"version": 1, "config": []}), id="config-list"),
    pytest.param("topic_config", j({"version": 1, "config": "a=b"}), id="config-string"),
    pytest.param(
        "topic_config", j({"version": 1, "config": {"retention.ms": 1}}), id="config-value-number"
    ),
    pytest.param(
        "topic_config",
        j({"version": 1, "config": {"unclean.leader.election.enable": True}}),
        id="config-value-boolean",
    ),
    pytest.param(
        "topic_config", j({"version": 1, "config": {"retention.ms": None}}), id="config-value-null"
    ),
]


@pytest.mark.parametrize(("decoder", "data"), GENERIC_CASES + SPECIFIC_CASES)
def test_malformed_znode_raises_znode_format_error(decoder: str, data: bytes | None) -> None:
    with pytest.raises(ZnodeFormatError) as excinfo:
        DECODERS[decoder](data)
    assert excinfo.value.reason


def test_znode_format_error_names_the_path_when_given() -> None:
    error = ZnodeFormatError("bad version", path="/controller")
    assert str(error) == "/controller: bad version"
    assert error.path == "/controller"
    assert error.reason == "bad version"
