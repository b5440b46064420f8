"""Topic configuration overrides as Kafka 2.x names them (`LogConfig`): which names exist,
the two the testbed acts on, how an override is checked before it is written, and how
brokers and the controller read them.

Every Kafka topic config name is accepted, so that files and commands written for Kafka
work here; only `min.insync.replicas` (acks=all, read by the partition leader),
`flush.messages` (when a replica fsyncs its log) and `unclean.leader.election.enable`
(read by the controller's offline election) change behaviour. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "FLUSH_MESSAGES",
    "KAFKA_TOPIC_CONFIGS",
    "MIN_INSYNC_REPLICAS",
    "UNCLEAN_LEADER_ELECTION_ENABLE",
    "InvalidConfigError",
    "flush_messages",
    "min_insync_replicas",
    "unclean_leader_election_enabled",
    "validate_topic_config",
]

MIN_INSYNC_REPLICAS = "min.insync.replicas"
FLUSH_MESSAGES = "flush.messages"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"

#: Kafka 2.8's topic-level config names.
KAFKA_TOPIC_CONFIGS = frozenset(
    {
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "file.delete.delay.ms",
        FLUSH_MESSAGES,
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        MIN_INSYNC_REPLICAS,
        "preallocate",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        UNCLEAN_LEADER_ELECTION_ENABLE,
    }
)


class InvalidConfigError(ValueError):
    """A topic config override that Kafka would refuse; the message names it."""


def validate_topic_config(config: Mapping[str, str]) -> None:
    """Raise `InvalidConfigError` for an unknown name, a `min.insync.replicas` that is not
    an integer >= 1, or an `unclean.leader.election.enable` that is not true or false."""
    unknown = sorted(set(config) - KAFKA_TOPIC_CONFIGS)
    if unknown:
        raise InvalidConfigError(f"Unknown topic config name: {', '.join(unknown)}")
    if MIN_INSYNC_REPLICAS in config:
        value = config[MIN_INSYNC_REPLICAS].strip()
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise InvalidConfigError(
                f"Invalid value {config[MIN_INSYNC_REPLICAS]} for configuration "
                f"{MIN_INSYNC_REPLICAS}: must be an integer of at least 1"
            )
    if UNCLEAN_LEADER_ELECTION_ENABLE in config:
        value = config[UNCLEAN_LEADER_ELECTION_ENABLE].strip().lower()
        if value not in ("true", "false"):
            raise InvalidConfigError(
                f"Invalid value {config[UNCLEAN_LEADER_ELECTION_ENABLE]} for configuration "
                f"{UNCLEAN_LEADER_ELECTION_ENABLE}: expected true or false"
            )


def unclean_leader_election_enabled(config: Mapping[str, str], default: bool) -> bool:
    """The topic's override, else the broker's `default`."""
    value = config.get(UNCLEAN_LEADER_ELECTION_ENABLE)
    return default if value is None else value.strip().lower() == "true"


def min_insync_replicas(config: Mapping[str, str], default: int) -> int:
    """The topic's override, else the broker's `default` (also for a value that does not
    parse: a znode written by hand must not stop a partition from loading)."""
    try:
        value = int(config[MIN_INSYNC_REPLICAS])
    except (KeyError, ValueError):
        return default
    return value if value >= 1 else default


def flush_messages(config: Mapping[str, str], default: int | None) -> int | None:
    """The topic's `flush.messages`, else the broker's `default` (None: never); a value
    that does not parse or is below 1 reads as the default, as for `min_insync_replicas`.
    Kafka's Long.MAX_VALUE, its "never", reads as None."""
    try:
        value = int(config[FLUSH_MESSAGES])
    except (KeyError, ValueError):
        return default
    if value < 1:
        return default
    return None if value >= 2**63 - 1 else value
