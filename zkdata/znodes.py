"""Codecs of the broker, controller and topic znodes, byte-compatible with Kafka 2.x.

Each class pairs a znode's path with its encoder and decoder (Kafka's `ZkData` objects).
Decoders raise `ZnodeFormatError` and nothing else. The `/admin`, ISR-change and config
znodes are in `admin_znodes`. Pure, any thread.
"""

from __future__ import annotations

import base64
import re
import secrets
from typing import Any

from domain import EndPoint, LeaderAndIsr, LeaderIsrAndControllerEpoch
from zkdata import jsonfields as jf
from zkdata import paths
from zkdata.errors import ZnodeFormatError
from zkdata.model import (
    BrokerInfo,
    ControllerRegistration,
    ReplicaAssignment,
    TopicAssignment,
    UnknownFields,
)

_ENDPOINT = re.compile(r"([A-Za-z0-9_]+)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]{1,5})")
_EPOCH = re.compile(r"[0-9]{1,10}")
_TOPIC_FIELDS = ("version", "topic_id", "partitions", "adding_replicas", "removing_replicas")
_STATE_FIELDS = ("controller_epoch", "leader", "version", "leader_epoch", "isr")


def new_topic_id() -> str:
    """A fresh topic id as Kafka 2.8 writes one (KIP-516): 16 random bytes in URL-safe
    base64 without padding (22 characters); never the all-zero id, and never one starting
    with '-', which command lines would take for an option."""
    while True:
        raw = secrets.token_bytes(16)
        text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
        if any(raw) and not text.startswith("-"):
            return text


def _topic_id(value: object) -> str:
    """Check a `topic_id` field as Kafka's `Uuid.fromString` does: URL-safe base64 of
    exactly 16 bytes."""
    if not isinstance(value, str):
        raise ZnodeFormatError(f"topic_id must be a string, got {value!r}")
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 16 or not re.fullmatch(r"[A-Za-z0-9_-]{22}", value):
        raise ZnodeFormatError(f"topic_id must be a base64 UUID (22 characters), got {value!r}")
    return value


class BrokerIdZNode:
    """`/brokers/ids/N` (ephemeral), written as version 5 like Kafka 2.8; reads 1-5."""

    VERSION = 5

    @staticmethod
    def path(broker_id: int) -> str:
        """The znode's path."""
        return paths.broker_id(broker_id)

    @staticmethod
    def encode(info: BrokerInfo) -> bytes:
        """Kafka 2.8's registration JSON (host/port of the first endpoint kept for old tools)."""
        primary = info.endpoint
        body: dict[str, object] = {
            "features": {},
            "listener_security_protocol_map": {
                ep.listener: ep.security_protocol for ep in info.endpoints
            },
            "endpoints": [ep.connection_string() for ep in info.endpoints],
            "jmx_port": info.jmx_port,
            "port": primary.port,
            "host": primary.host,
            "version": BrokerIdZNode.VERSION,
            "timestamp": str(info.timestamp_ms),
        }
        if info.rack is not None:
            body["rack"] = info.rack
        return jf.encode(body)

    @staticmethod
    def decode(broker_id: int, data: bytes | None) -> BrokerInfo:
        """Parse a registration of any version 1-5."""
        obj = jf.parse_object(data)
        version = jf.check_version(obj, (1, 2, 3, 4, 5))
        jmx_port = jf.as_int(obj.get("jmx_port", -1), "jmx_port")
        rack = obj.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise ZnodeFormatError(f"rack must be a string, got {rack!r}")
        if version == 1:
            endpoints: tuple[EndPoint, ...] = (
                EndPoint(jf.get_str(obj, "host"), jf.get_int(obj, "port", minimum=-1)),
            )
        else:
            protocols = jf.get_object(obj, "listener_security_protocol_map", default={})
            endpoints = tuple(
                _parse_endpoint(raw, protocols) for raw in jf.get_list(obj, "endpoints")
            )
            if not endpoints:
                raise ZnodeFormatError("endpoints must not be empty")
        return BrokerInfo(
            id=broker_id,
            endpoints=endpoints,
            rack=rack,
            jmx_port=jmx_port,
            timestamp_ms=jf.timestamp_ms(obj),
        )


def _parse_endpoint(raw: object, protocols: dict[str, object]) -> EndPoint:
    if not isinstance(raw, str):
        raise ZnodeFormatError(f"endpoint must be a string, got {raw!r}")
    match = _ENDPOINT.fullmatch(raw)
    if match is None:
        raise ZnodeFormatError(f"malformed endpoint {raw!r}")
    listener, host, port = match.group(1), match.group(2), int(match.group(3))
    if not -1 <= port <= 65535:
        raise ZnodeFormatError(f"endpoint port out of range in {raw!r}")
    protocol = protocols.get(listener, listener)
    if not isinstance(protocol, str):
        raise ZnodeFormatError(f"security protocol of {listener} must be a string")
    return EndPoint(host=host, port=port, listener=listener, security_protocol=protocol)


class ControllerZNode:
    """`/controller` (ephemeral): `{"version":1,"brokerid":N,"timestamp":"<ms>"}`."""

    @staticmethod
    def path() -> str:
        """The znode's path."""
        return paths.CONTROLLER

    @staticmethod
    def encode(registration: ControllerRegistration) -> bytes:
        """Kafka's JSON."""
        return jf.encode(
            {
                "version": 1,
                "brokerid": registration.broker_id,
                "timestamp": str(registration.timestamp_ms),
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> ControllerRegistration:
        """Parse Kafka's JSON (the version field is not checked, as in Kafka)."""
        obj = jf.parse_object(data)
        return ControllerRegistration(
            broker_id=jf.get_int(obj, "brokerid", minimum=0),
            timestamp_ms=jf.timestamp_ms(obj),
        )


class ControllerEpochZNode:
    """`/controller_epoch`: the epoch as a bare decimal integer."""

    @staticmethod
    def path() -> str:
        """The znode's path."""
        return paths.CONTROLLER_EPOCH

    @staticmethod
    def encode(epoch: int) -> bytes:
        """`b"7"`."""
        return str(epoch).encode("ascii")

    @staticmethod
    def decode(data: bytes | None) -> int:
        """Parse the decimal integer."""
        if data is None:
            raise ZnodeFormatError("znode has no data")
        try:
            text = data.decode("ascii").strip()
        except UnicodeDecodeError:
            raise ZnodeFormatError("controller epoch is not ASCII") from None
        if not _EPOCH.fullmatch(text) or int(text) > jf.INT32_MAX:
            raise ZnodeFormatError(f"controller epoch must be a non-negative int, got {text!r}")
        return int(text)


class TopicZNode:
    """`/brokers/topics/T`: replica assignment, written as version 2 (version 3 with a
    topic id); reads 1-3. Fields this project does not use are kept in the value and
    written back."""

    @staticmethod
    def path(topic: str) -> str:
        """The znode's path."""
        return paths.topic(topic)

    @staticmethod
    def encode(assignment: TopicAssignment) -> bytes:
        """Version 2: partitions plus the adding/removing replicas of reassigned partitions;
        version 3 (with `topic_id` first) when the assignment carries a topic id, as Kafka
        2.8 writes it. The unknown fields the assignment carries follow."""
        ordered = sorted(assignment.partitions.items())
        head: dict[str, object] = (
            {"version": 2}
            if assignment.topic_id is None
            else {"version": 3, "topic_id": assignment.topic_id}
        )
        body = {
            **head,
            "partitions": {str(p): list(a.replicas) for p, a in ordered},
            "adding_replicas": {
                str(p): list(a.adding_replicas) for p, a in ordered if a.adding_replicas
            },
            "removing_replicas": {
                str(p): list(a.removing_replicas) for p, a in ordered if a.removing_replicas
            },
        }
        return jf.encode(jf.with_unknown_fields(body, assignment.unknown))

    @staticmethod
    def decode(data: bytes | None) -> TopicAssignment:
        """Parse versions 1 (partitions only), 2 (adding/removing) and 3. A `topic_id` is
        read whatever the version, as Kafka reads it, and must be a base64 UUID."""
        obj = jf.parse_object(data)
        version = jf.check_version(obj, (1, 2, 3))
        raw_partitions = jf.get_object(obj, "partitions")
        adding = jf.get_object(obj, "adding_replicas", default={}) if version >= 2 else {}
        removing = jf.get_object(obj, "removing_replicas", default={}) if version >= 2 else {}
        partitions: dict[int, ReplicaAssignment] = {}
        for key, replicas in raw_partitions.items():
            partition = jf.partition_number(key)
            partitions[partition] = ReplicaAssignment(
                replicas=jf.as_int_list(replicas, f"partitions[{key}]", minimum=0),
                adding_replicas=jf.as_int_list(
                    adding.get(key, []), f"adding_replicas[{key}]", minimum=0
                ),
                removing_replicas=jf.as_int_list(
                    removing.get(key, []), f"removing_replicas[{key}]", minimum=0
                ),
            )
        for extra in (set(adding) | set(removing)) - set(raw_partitions):
            raise ZnodeFormatError(f"adding/removing replicas for unknown partition {extra!r}")
        raw_id = obj.get("topic_id")
        return TopicAssignment(
            partitions=partitions,
            topic_id=None if raw_id is None else _topic_id(raw_id),
            unknown=jf.unknown_fields(obj, _TOPIC_FIELDS),
        )


class TopicPartitionStateZNode:
    """`/brokers/topics/T/partitions/P/state`: leader, leader epoch, ISR, controller epoch."""

    @staticmethod
    def path(topic: str, partition: int) -> str:
        """The znode's path."""
        return paths.partition_state(topic, partition)

    @staticmethod
    def encode(state: LeaderIsrAndControllerEpoch, unknown: UnknownFields = ()) -> bytes:
        """`{"controller_epoch":E,"leader":L,"version":1,"leader_epoch":LE,"isr":[..]}`,
        followed by `unknown`: the fields of the znode being replaced that this project
        does not use (`unknown_fields`)."""
        lai = state.leader_and_isr
        if not unknown:  # the common case, formatted directly: the same bytes as `jf.encode`
            isr = ",".join([str(int(r)) for r in lai.isr])
            return (
                f'{{"controller_epoch":{int(state.controller_epoch)},"leader":{int(lai.leader)},'
                f'"version":1,"leader_epoch":{int(lai.leader_epoch)},"isr":[{isr}]}}'
            ).encode()
        body = {
            "controller_epoch": state.controller_epoch,
            "leader": lai.leader,
            "version": 1,
            "leader_epoch": lai.leader_epoch,
            "isr": list(lai.isr),
        }
        return jf.encode(jf.with_unknown_fields(body, unknown))

    @staticmethod
    def unknown_fields(data: bytes | None) -> UnknownFields:
        """The fields of a state znode this project does not use; none when the bytes are
        not a JSON object (a rewrite then replaces them whole)."""
        try:
            return jf.unknown_fields(jf.parse_object(data), _STATE_FIELDS)
        except ZnodeFormatError:
            return ()

    @staticmethod
    def decode(data: bytes | None, zk_version: int) -> LeaderIsrAndControllerEpoch:
        """Parse the state; `zk_version` (from the znode's Stat) is carried in LeaderAndIsr."""
        return TopicPartitionStateZNode._from_object(jf.parse_object(data), zk_version)

    @staticmethod
    def decode_keeping_unknown(
        data: bytes | None, zk_version: int
    ) -> tuple[LeaderIsrAndControllerEpoch, UnknownFields]:
        """`decode` and `unknown_fields` from one parse of the bytes."""
        obj = jf.parse_object(data)
        state = TopicPartitionStateZNode._from_object(obj, zk_version)
        return state, jf.unknown_fields(obj, _STATE_FIELDS)

    @staticmethod
    def _from_object(obj: dict[str, Any], zk_version: int) -> LeaderIsrAndControllerEpoch:
        jf.check_version(obj, (1,))
        leader_epoch = jf.get_int(obj, "leader_epoch", minimum=0)
        if leader_epoch == jf.INT32_MAX:  # the next election's epoch would not fit an int32
            raise ZnodeFormatError(f"leader_epoch {leader_epoch} leaves no room for an election")
        return LeaderIsrAndControllerEpoch(
            leader_and_isr=LeaderAndIsr(
                leader=jf.get_int(obj, "leader", minimum=-1),
                leader_epoch=leader_epoch,
                isr=jf.get_int_list(obj, "isr", minimum=0),
                zk_version=zk_version,
            ),
            controller_epoch=jf.get_int(obj, "controller_epoch", minimum=0),
        )
