"""Codecs of the admin, ISR-change, log-directory event and config znodes,
byte-compatible with Kafka 2.x.

Decoders raise `ZnodeFormatError` and nothing else. Pure, any thread.
"""

from __future__ import annotations

from domain import TopicPartition
from zkdata import jsonfields as jf
from zkdata import paths
from zkdata.errors import ZnodeFormatError
from zkdata.model import PartitionReassignment, TopicConfig, UnknownFields

_REASSIGN_ENTRY_FIELDS = ("topic", "partition", "replicas")


def _encode_partitions(partitions: tuple[TopicPartition, ...]) -> bytes:
    return jf.encode(
        {
            "version": 1,
            "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions],
        }
    )


def _decode_partitions(data: bytes | None) -> tuple[TopicPartition, ...]:
    obj = jf.parse_object(data)
    jf.check_version(obj, (1,))
    out = []
    for entry in jf.get_list(obj, "partitions"):
        item = jf.as_object(entry, "partitions[]")
        out.append(
            TopicPartition(jf.get_str(item, "topic"), jf.get_int(item, "partition", minimum=0))
        )
    return tuple(out)


class DeleteTopicsZNode:
    """`/admin/delete_topics/T`: the child's name is the topic; the data is empty."""

    @staticmethod
    def path(topic: str) -> str:
        """The znode's path."""
        return paths.delete_topic(topic)


class ReassignPartitionsZNode:
    """`/admin/reassign_partitions`: a list of topic, partition and target replicas. Fields
    this project does not use (an entry's `log_dirs`, anything else) are kept: per entry in
    `PartitionReassignment.unknown`, at the top level through `unknown_fields`."""

    @staticmethod
    def path() -> str:
        """The znode's path."""
        return paths.REASSIGN_PARTITIONS

    @staticmethod
    def encode(
        reassignments: tuple[PartitionReassignment, ...], unknown: UnknownFields = ()
    ) -> bytes:
        """Kafka's JSON; each entry followed by the unknown fields it carries, the object by
        `unknown` (the top-level fields of the request being rewritten)."""
        return jf.encode(
            jf.with_unknown_fields(
                {
                    "version": 1,
                    "partitions": [
                        jf.with_unknown_fields(
                            {
                                "topic": r.topic_partition.topic,
                                "partition": r.topic_partition.partition,
                                "replicas": list(r.replicas),
                            },
                            r.unknown,
                        )
                        for r in reassignments
                    ],
                },
                unknown,
            )
        )

    @staticmethod
    def unknown_fields(data: bytes | None) -> UnknownFields:
        """The top-level fields of a request that this project does not use; none when the
        bytes are not a JSON object."""
        try:
            return jf.unknown_fields(jf.parse_object(data), ("version", "partitions"))
        except ZnodeFormatError:
            return ()

    @staticmethod
    def decode(data: bytes | None) -> tuple[PartitionReassignment, ...]:
        """Parse Kafka's JSON (an entry's optional `log_dirs` is not used, but kept with
        the entry's other unknown fields). Broker ids are not range-checked here: a request
        naming a negative id decodes, and the controller rejects that one entry rather than
        the whole request."""
        obj = jf.parse_object(data)
        jf.check_version(obj, (1,))
        out = []
        for entry in jf.get_list(obj, "partitions"):
            item = jf.as_object(entry, "partitions[]")
            out.append(
                PartitionReassignment(
                    TopicPartition(
                        jf.get_str(item, "topic"), jf.get_int(item, "partition", minimum=0)
                    ),
                    jf.get_int_list(item, "replicas"),
                    jf.unknown_fields(item, _REASSIGN_ENTRY_FIELDS),
                )
            )
        return tuple(out)


class PreferredReplicaElectionZNode:
    """`/admin/preferred_replica_election`: `{"version":1,"partitions":[{"topic","partition"}]}`."""

    @staticmethod
    def path() -> str:
        """The znode's path."""
        return paths.PREFERRED_REPLICA_ELECTION

    @staticmethod
    def encode(partitions: tuple[TopicPartition, ...]) -> bytes:
        """Kafka's JSON."""
        return _encode_partitions(partitions)

    @staticmethod
    def decode(data: bytes | None) -> tuple[TopicPartition, ...]:
        """Parse Kafka's JSON."""
        return _decode_partitions(data)


class IsrChangeNotificationSequenceZNode:
    """`/isr_change_notification/isr_change_<seq>`: partitions whose ISR changed."""

    @staticmethod
    def path_prefix() -> str:
        """Prefix for `create(..., sequence=True)`."""
        return paths.isr_change_prefix()

    @staticmethod
    def path(child: str) -> str:
        """The path of one notification child."""
        return paths.isr_change_notification(child)

    @staticmethod
    def encode(partitions: tuple[TopicPartition, ...]) -> bytes:
        """Kafka's JSON."""
        return _encode_partitions(partitions)

    @staticmethod
    def decode(data: bytes | None) -> tuple[TopicPartition, ...]:
        """Parse Kafka's JSON."""
        return _decode_partitions(data)


class LogDirEventNotificationSequenceZNode:
    """`/log_dir_event_notification/log_dir_event_<seq>`: a broker lost a log directory
    (KIP-112): `{"version":1,"broker":N,"event":1}`, event 1 being a log-directory failure,
    the only event Kafka defines."""

    #: Kafka's `LogDirEventNotificationSequenceZNode.LogDirFailureEvent`.
    LOG_DIR_FAILURE_EVENT = 1

    @staticmethod
    def path_prefix() -> str:
        """Prefix for `create(..., sequence=True)`."""
        return paths.log_dir_event_prefix()

    @staticmethod
    def path(child: str) -> str:
        """The path of one notification child."""
        return paths.log_dir_event_notification(child)

    @staticmethod
    def encode(broker_id: int) -> bytes:
        """Kafka's JSON."""
        event = LogDirEventNotificationSequenceZNode.LOG_DIR_FAILURE_EVENT
        return jf.encode({"version": 1, "broker": broker_id, "event": event})

    @staticmethod
    def decode(data: bytes | None) -> int:
        """The broker that lost a log directory (Kafka reads only `broker`)."""
        obj = jf.parse_object(data)
        return jf.get_int(obj, "broker", minimum=0)


class ConfigChangeNotificationZNode:
    """`/config/changes/config_change_<seq>`: which entity's config changed. Written as
    version 2 (`{"version":2,"entity_path":"topics/T"}`); version 1
    (`{"version":1,"entity_type":"topics","entity_name":"T"}`) is read too."""

    @staticmethod
    def path_prefix() -> str:
        """Prefix for `create(..., sequence=True)`."""
        return paths.config_change_prefix()

    @staticmethod
    def path(child: str) -> str:
        """The path of one notification child."""
        return paths.config_change_notification(child)

    @staticmethod
    def encode(entity_type: str, entity_name: str) -> bytes:
        """Kafka's version 2 JSON."""
        return jf.encode({"version": 2, "entity_path": f"{entity_type}/{entity_name}"})

    @staticmethod
    def decode(data: bytes | None) -> tuple[str, str]:
        """(entity type, entity name), e.g. `("topics", "orders")`."""
        obj = jf.parse_object(data)
        if jf.check_version(obj, (1, 2)) == 1:
            return jf.get_str(obj, "entity_type"), jf.get_str(obj, "entity_name")
        entity_type, slash, entity_name = jf.get_str(obj, "entity_path").partition("/")
        if not slash or not entity_type or not entity_name:
            raise ZnodeFormatError(f"entity_path must be <type>/<name>, got {obj['entity_path']!r}")
        return entity_type, entity_name


class TopicConfigZNode:
    """`/config/topics/T`: `{"version":1,"config":{"key":"value"}}` (values are strings)."""

    @staticmethod
    def path(topic: str) -> str:
        """The znode's path."""
        return paths.topic_config(topic)

    @staticmethod
    def encode(config: TopicConfig) -> bytes:
        """Kafka's JSON."""
        return jf.encode({"version": 1, "config": dict(sorted(config.config.items()))})

    @staticmethod
    def decode(data: bytes | None) -> TopicConfig:
        """Parse Kafka's JSON; every value must be a string."""
        obj = jf.parse_object(data)
        jf.check_version(obj, (1,))
        raw = jf.get_object(obj, "config", default={})
        config: dict[str, str] = {}
        for key, value in raw.items():
            if not isinstance(value, str):
                raise ZnodeFormatError(f"config value of {key!r} must be a string, got {value!r}")
            config[key] = value
        return TopicConfig(config)
