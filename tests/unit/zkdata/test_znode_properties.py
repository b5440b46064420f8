"""Hypothesis properties of the znode codecs.

Fuzz: every decoder, fed arbitrary bytes, arbitrary JSON, or a valid Kafka sample with keys
dropped or values replaced, either decodes or raises `ZnodeFormatError`; nothing else
escapes. Round trip: decoding what an encoder wrote gives back the same value object.
"""

from __future__ import annotations

import contextlib
import copy
import json
import string
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain import EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata.admin_znodes import (
    ConfigChangeNotificationZNode,
    IsrChangeNotificationSequenceZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicConfigZNode,
)
from zkdata.config_changes import sequence_of
from zkdata.errors import ZnodeFormatError
from zkdata.model import (
    BrokerInfo,
    ControllerRegistration,
    PartitionReassignment,
    ReplicaAssignment,
    TopicAssignment,
    TopicConfig,
)
from zkdata.topic_configs import (
    FLUSH_MESSAGES,
    MIN_INSYNC_REPLICAS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
    InvalidConfigError,
    flush_messages,
    min_insync_replicas,
    unclean_leader_election_enabled,
    validate_topic_config,
)
from zkdata.znodes import (
    BrokerIdZNode,
    ControllerEpochZNode,
    ControllerZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)

#: 300 examples in the default profile; `make fuzz` (profile `long`) raises it.
FUZZ = settings(
    max_examples=max(300, settings().max_examples),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ROUND_TRIP = settings(max_examples=200, deadline=None)

DECODERS: dict[str, Callable[[bytes | None], object]] = {
    "BrokerIdZNode": lambda data: BrokerIdZNode.decode(1, data),
    "ControllerZNode": ControllerZNode.decode,
    "ControllerEpochZNode": ControllerEpochZNode.decode,
    "TopicZNode": TopicZNode.decode,
    "TopicPartitionStateZNode": lambda data: TopicPartitionStateZNode.decode(data, 0),
    "ReassignPartitionsZNode": ReassignPartitionsZNode.decode,
    "PreferredReplicaElectionZNode": PreferredReplicaElectionZNode.decode,
    "IsrChangeNotificationSequenceZNode": IsrChangeNotificationSequenceZNode.decode,
    "TopicConfigZNode": TopicConfigZNode.decode,
    "ConfigChangeNotificationZNode": ConfigChangeNotificationZNode.decode,
    # never raises at all: a rewrite of a znode that does not parse replaces it whole
    "TopicPartitionStateZNode.unknown_fields": TopicPartitionStateZNode.unknown_fields,
}

#: Valid Kafka 2.x znode contents, as parsed JSON, that the mutation fuzz starts from.
#: (`/controller_epoch` is not JSON; its text is fuzzed on its own below.)
SAMPLES: dict[str, list[Any]] = {
    "BrokerIdZNode": [
        {
            "features": {},
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
            "endpoints": ["PLAINTEXT://broker1:9092", "SSL://[::1]:9093"],
            "jmx_port": -1,
            "port": 9092,
            "host": "broker1",
            "version": 5,
            "timestamp": "1700000000000",
            "rack": "r1",
        },
        {"jmx_port": -1, "timestamp": "1700000000000", "host": "h", "version": 1, "port": 9092},
        {
            "jmx_port": -1,
            "timestamp": "1700000000000",
            "endpoints": ["PLAINTEXT://h:9092"],
            "host": "h",
            "version": 2,
            "port": 9092,
        },
    ],
    "ControllerZNode": [{"version": 1, "brokerid": 2, "timestamp": "1700000000000"}],
    "TopicZNode": [
        {"version": 1, "partitions": {"0": [1, 2, 3], "1": [2, 3, 1]}},
        {
            "version": 2,
            "partitions": {"0": [4, 2, 3, 1], "1": [2, 3, 1]},
            "adding_replicas": {"0": [4]},
            "removing_replicas": {"0": [1]},
        },
        {
            "version": 3,
            "topic_id": "Hf5wG8TfRD6o0uPHUkBw3Q",
            "partitions": {"0": [1]},
            "adding_replicas": {},
            "removing_replicas": {},
        },
    ],
    "TopicPartitionStateZNode": [
        {"controller_epoch": 3, "leader": 1, "version": 1, "leader_epoch": 5, "isr": [1, 2, 3]}
    ],
    "ReassignPartitionsZNode": [
        {
            "version": 1,
            "partitions": [
                {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
                {"topic": "u", "partition": 3, "replicas": [3]},
            ],
        }
    ],
    "PreferredReplicaElectionZNode": [
        {
            "version": 1,
            "partitions": [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 1}],
        }
    ],
    "IsrChangeNotificationSequenceZNode": [
        {"version": 1, "partitions": [{"topic": "t", "partition": 0}]}
    ],
    "TopicConfigZNode": [{"version": 1, "config": {"unclean.leader.election.enable": "true"}}],
    "ConfigChangeNotificationZNode": [
        {"version": 2, "entity_path": "topics/orders"},
        {"version": 1, "entity_type": "topics", "entity_name": "orders"},
    ],
}

# -- strategies ----------------------------------------------------------------------------

#: Strings that look almost like numbers: where integer parsing goes wrong.
numberish = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["", "-", "--", "+", " ", "-+"]),
        st.text(alphabet="0123456789\u00b2\u0661", max_size=4),
        st.sampled_from(["", ".5", " ", "e3", "_0"]),
    ),
)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | numberish
)
json_keys = st.text(max_size=10) | numberish | st.sampled_from(["version", "partitions", "0"])
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(json_keys, children, max_size=4)
    ),
    max_leaves=12,
)


def to_bytes(value: Any) -> bytes:
    """JSON bytes as any writer might produce them."""
    return json.dumps(value).encode("utf-8")


@st.composite
def mutated(draw: st.DrawFn, sample: Any) -> Any:
    """`sample` with one to three edits at any depth, each dropping a key (or list item),
    renaming a key, or replacing a value with arbitrary JSON or a number-like string."""
    value = copy.deepcopy(sample)
    for _ in range(draw(st.integers(1, 3))):
        node = value
        while isinstance(node, dict | list) and node:
            key: Any
            if isinstance(node, dict):
                key = draw(st.sampled_from(sorted(node)))
            else:
                key = draw(st.integers(0, len(node) - 1))
            child = node[key]
            if isinstance(child, dict | list) and child and draw(st.booleans()):
                node = child
                continue
            action = draw(st.sampled_from(["drop", "replace", "rename"]))
            if action == "drop":
                del node[key]
            elif action == "rename" and isinstance(node, dict):
                node[draw(json_keys)] = node.pop(key)
            else:
                node[key] = draw(numberish | json_values)
            break
    return value


def decodes_or_raises_format_error(decoder: Callable[[bytes | None], object], data: bytes) -> None:
    """Decode `data`; a `ZnodeFormatError` is fine, any other exception fails the test."""
    with contextlib.suppress(ZnodeFormatError):
        decoder(data)


# -- fuzz ----------------------------------------------------------------------------------


@pytest.mark.fuzz
@FUZZ
@given(data=st.binary(max_size=200))
def test_every_decoder_survives_arbitrary_bytes(data: bytes) -> None:
    for decoder in DECODERS.values():
        decodes_or_raises_format_error(decoder, data)


@pytest.mark.fuzz
@FUZZ
@given(value=json_values)
def test_every_decoder_survives_arbitrary_json(value: Any) -> None:
    data = to_bytes(value)
    for decoder in DECODERS.values():
        decodes_or_raises_format_error(decoder, data)


@pytest.mark.fuzz
@pytest.mark.parametrize("name", sorted(SAMPLES))
@FUZZ
@given(data=st.data())
def test_decoder_survives_mutated_kafka_samples(name: str, data: st.DataObject) -> None:
    sample = data.draw(st.sampled_from(SAMPLES[name]), label="sample")
    value = data.draw(mutated(sample), label="mutated")
    decodes_or_raises_format_error(DECODERS[name], to_bytes(value))


@pytest.mark.fuzz
@FUZZ
@given(text=numberish | st.text(max_size=12))
def test_controller_epoch_survives_arbitrary_text(text: str) -> None:
    decodes_or_raises_format_error(ControllerEpochZNode.decode, text.encode("utf-8"))


# -- round trips ---------------------------------------------------------------------------

broker_ids = st.integers(min_value=0, max_value=2**31 - 1)
non_negative = st.integers(min_value=0, max_value=2**31 - 1)
timestamps = st.integers(min_value=-(2**63), max_value=2**63 - 1)
replica_lists = st.lists(non_negative, max_size=5).map(tuple)
topics = st.text(min_size=1, max_size=20)

endpoints = st.builds(
    EndPoint,
    host=st.text(alphabet=string.ascii_letters + string.digits + "-%._:", max_size=20),
    port=st.integers(min_value=0, max_value=65535),
    listener=st.text(alphabet=string.ascii_letters + string.digits + "_", min_size=1, max_size=12),
    security_protocol=st.text(max_size=12),
)
broker_infos = st.builds(
    BrokerInfo,
    id=broker_ids,
    endpoints=st.lists(endpoints, min_size=1, max_size=3, unique_by=lambda e: e.listener).map(
        tuple
    ),
    rack=st.none() | st.text(max_size=10),
    jmx_port=st.integers(min_value=-1, max_value=65535),
    timestamp_ms=timestamps,
)
replica_assignments = st.builds(
    ReplicaAssignment,
    replicas=replica_lists,
    adding_replicas=replica_lists,
    removing_replicas=replica_lists,
)
topic_assignments = st.builds(
    TopicAssignment,
    partitions=st.dictionaries(st.integers(0, 100_000), replica_assignments, max_size=6),
    topic_id=st.none(),
)
partition_states = st.builds(
    LeaderIsrAndControllerEpoch,
    leader_and_isr=st.builds(
        LeaderAndIsr,
        leader=st.integers(min_value=-1, max_value=2**31 - 1),
        leader_epoch=st.integers(min_value=0, max_value=2**31 - 2),
        isr=replica_lists,
        zk_version=non_negative,
    ),
    controller_epoch=non_negative,
)
topic_partitions = st.builds(TopicPartition, topic=topics, partition=non_negative)


@ROUND_TRIP
@given(info=broker_infos)
def test_broker_registration_round_trips(info: BrokerInfo) -> None:
    assert BrokerIdZNode.decode(info.id, BrokerIdZNode.encode(info)) == info


@ROUND_TRIP
@given(
    registration=st.builds(ControllerRegistration, broker_id=broker_ids, timestamp_ms=timestamps)
)
def test_controller_round_trips(registration: ControllerRegistration) -> None:
    assert ControllerZNode.decode(ControllerZNode.encode(registration)) == registration


@ROUND_TRIP
@given(epoch=non_negative)
def test_controller_epoch_round_trips(epoch: int) -> None:
    assert ControllerEpochZNode.decode(ControllerEpochZNode.encode(epoch)) == epoch


@ROUND_TRIP
@given(assignment=topic_assignments)
def test_topic_round_trips(assignment: TopicAssignment) -> None:
    assert TopicZNode.decode(TopicZNode.encode(assignment)) == assignment


@ROUND_TRIP
@given(state=partition_states)
def test_partition_state_round_trips(state: LeaderIsrAndControllerEpoch) -> None:
    zk_version = state.leader_and_isr.zk_version
    assert TopicPartitionStateZNode.decode(TopicPartitionStateZNode.encode(state), zk_version) == (
        state
    )


@ROUND_TRIP
@given(state=partition_states)
def test_partition_state_bytes_are_kafkas_compact_json(state: LeaderIsrAndControllerEpoch) -> None:
    """The directly formatted state (no kept fields) is byte for byte the compact JSON of
    the same object, the shape Kafka writes, with its field order."""
    lai = state.leader_and_isr
    body = {
        "controller_epoch": state.controller_epoch,
        "leader": lai.leader,
        "version": 1,
        "leader_epoch": lai.leader_epoch,
        "isr": list(lai.isr),
    }
    assert TopicPartitionStateZNode.encode(state) == json.dumps(body, separators=(",", ":")).encode(
        "utf-8"
    )
    decoded, unknown = TopicPartitionStateZNode.decode_keeping_unknown(
        TopicPartitionStateZNode.encode(state, (("zz_kept", "[1]"),)), lai.zk_version
    )
    assert (decoded, unknown) == (state, (("zz_kept", "[1]"),))


@ROUND_TRIP
@given(
    reassignments=st.lists(
        st.builds(PartitionReassignment, topic_partition=topic_partitions, replicas=replica_lists),
        max_size=5,
    ).map(tuple)
)
def test_reassign_partitions_round_trips(
    reassignments: tuple[PartitionReassignment, ...],
) -> None:
    assert ReassignPartitionsZNode.decode(ReassignPartitionsZNode.encode(reassignments)) == (
        reassignments
    )


@ROUND_TRIP
@given(partitions=st.lists(topic_partitions, max_size=5).map(tuple))
def test_preferred_replica_election_round_trips(partitions: tuple[TopicPartition, ...]) -> None:
    encoded = PreferredReplicaElectionZNode.encode(partitions)
    assert PreferredReplicaElectionZNode.decode(encoded) == partitions


@ROUND_TRIP
@given(partitions=st.lists(topic_partitions, max_size=5).map(tuple))
def test_isr_change_notification_round_trips(partitions: tuple[TopicPartition, ...]) -> None:
    encoded = IsrChangeNotificationSequenceZNode.encode(partitions)
    assert IsrChangeNotificationSequenceZNode.decode(encoded) == partitions


@ROUND_TRIP
@given(config=st.builds(TopicConfig, config=st.dictionaries(st.text(), st.text(), max_size=6)))
def test_topic_config_round_trips(config: TopicConfig) -> None:
    assert TopicConfigZNode.decode(TopicConfigZNode.encode(config)) == config


# -- names and values read from ZooKeeper outside the codecs -----------------------------

child_names = st.text(max_size=12) | st.builds(
    "".join, st.tuples(st.sampled_from(["config_change_", ""]), numberish)
)


@pytest.mark.fuzz
@FUZZ
@given(child=child_names)
def test_a_config_change_child_name_parses_or_is_none(child: str) -> None:
    """Digits other than ASCII ('²', Arabic-Indic) pass `str.isdigit` but not `int`: never raise."""
    sequence = sequence_of(child)
    assert sequence is None or sequence >= 0


@pytest.mark.fuzz
@FUZZ
@given(
    config=st.dictionaries(
        st.sampled_from([MIN_INSYNC_REPLICAS, UNCLEAN_LEADER_ELECTION_ENABLE])
        | st.text(max_size=8),
        numberish | st.text(max_size=8),
        max_size=3,
    )
)
def test_topic_config_checks_raise_only_their_own_error(config: dict[str, str]) -> None:
    with contextlib.suppress(InvalidConfigError):
        validate_topic_config(config)
    assert min_insync_replicas(config, 2) >= 1
    assert unclean_leader_election_enabled(config, False) in (True, False)
    interval = flush_messages(config, None)
    assert interval is None or 1 <= interval < 2**63


@pytest.mark.parametrize(
    ("value", "default", "expected"),
    [("1", None, 1), ("500", 7, 500), ("0", 7, 7), ("many", None, None),
     (str(2**63 - 1), 1, None), (None, 3, 3)],
)  # fmt: skip
def test_flush_messages_overrides_the_broker_default(
    value: str | None, default: int | None, expected: int | None
) -> None:
    config = {} if value is None else {FLUSH_MESSAGES: value}
    assert flush_messages(config, default) == expected


@pytest.mark.parametrize("name", ["²", "1²", "\u0661", "config_change_²"])
def test_non_ascii_digits_are_not_numbers(name: str) -> None:
    assert sequence_of(f"config_change_{name}") is None
    with pytest.raises(InvalidConfigError):
        validate_topic_config({MIN_INSYNC_REPLICAS: name})


@pytest.mark.parametrize("depth", [10, 900, 5_000, 200_000])
def test_every_decoder_survives_deeply_nested_json(depth: int) -> None:
    data = b'{"version":1,"partitions":' + b"[" * depth + b"]" * depth + b"}"
    for decoder in DECODERS.values():
        decodes_or_raises_format_error(decoder, data)
