"""`testbed configs`: topic config overrides through ZooKeeper, as Kafka 2.x's
`kafka-configs.sh --zookeeper --entity-type topics` handles them.

- describe: read `/config/topics/T` of one topic, or of every topic in
  `/brokers/topics`, and print `Configs for topic 'T' are k1=v1,k2=v2`.
- alter: read the current overrides, add `--add-config` entries, remove
  `--delete-config` names, check the result (`zkdata.topic_configs`), then rewrite
  `/config/topics/T` and announce the change with `/config/changes/config_change_<seq>`
  (`zkdata.config_changes`), which every broker follows.

Parsing, merging and rendering are pure; `describe_configs` reads ZooKeeper and
`alter_config` reads then writes. Everything blocks the calling thread (the CLI's main
thread).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from zkdata.client import KafkaZkClient
from zkdata.config_changes import ConfigChangesZk
from zkdata.model import TopicConfig
from zkdata.topic_configs import validate_topic_config

#: The one entity type the command knows (Kafka's also has brokers, users, clients, ips).
TOPICS = "topics"


class ConfigsCommandError(Exception):
    """A configs command that cannot be carried out; the message is for the user."""


# -- the options --------------------------------------------------------------------------


def parse_add_config(entries: Iterable[str]) -> dict[str, str]:
    """`--add-config` values, each `k1=v1,k2=v2`, as one mapping (a later key wins). Keys
    and values are stripped; a value may be empty. Kafka's bracket syntax for values with
    commas (`k=[a,b]`) is not supported."""
    config: dict[str, str] = {}
    for text in entries:
        for entry in text.split(","):
            key, sep, value = entry.partition("=")
            if not sep or not key.strip():
                raise ConfigsCommandError(
                    f"Invalid config {entry!r} in --add-config {text!r}: expected key=value"
                )
            config[key.strip()] = value.strip()
    return config


def parse_delete_config(entries: Iterable[str]) -> tuple[str, ...]:
    """`--delete-config` values, each `k1,k2`, as names in the order given (each once)."""
    names: dict[str, None] = {}
    for text in entries:
        for entry in text.split(","):
            name = entry.strip()
            if not name:
                raise ConfigsCommandError(
                    f"Invalid --delete-config {text!r}: expected config names separated by ','"
                )
            names[name] = None
    return tuple(names)


# -- deciding -----------------------------------------------------------------------------


def altered_config(
    current: Mapping[str, str], additions: Mapping[str, str], deletions: Sequence[str]
) -> dict[str, str]:
    """The overrides after an alter, as Kafka computes them: every name to delete must be
    set now (`Invalid config(s): k`, checked before the additions), then the additions are
    applied, then the deletions. The result must pass `validate_topic_config`
    (`zkdata.topic_configs.InvalidConfigError` otherwise)."""
    not_set = [name for name in deletions if name not in current]
    if not_set:
        raise ConfigsCommandError(f"Invalid config(s): {','.join(not_set)}")
    config = {**current, **additions}
    for name in deletions:
        config.pop(name, None)
    validate_topic_config(config)
    return config


# -- output -------------------------------------------------------------------------------


def render_description(topic: str, config: Mapping[str, str]) -> str:
    """Kafka 2.x's describe line, keys sorted: `Configs for topic 'T' are k1=v1,k2=v2`
    (`are ` and nothing after it when the topic has no override)."""
    pairs = ",".join(f"{key}={value}" for key, value in sorted(config.items()))
    return f"Configs for topic '{topic}' are {pairs}"


def render_altered(topic: str) -> str:
    """The line printed after a successful alter."""
    return f"Completed updating config for topic {topic}."


# -- ZooKeeper ----------------------------------------------------------------------------


def describe_configs(zk: KafkaZkClient, topic: str | None = None) -> dict[str, dict[str, str]]:
    """The overrides of `topic`, or of every topic in `/brokers/topics` when None, sorted by
    topic (a topic without `/config/topics/T` has none). Raises `ConfigsCommandError` for
    an unknown topic and `ZnodeFormatError` for a config znode that does not decode."""
    topics = sorted(zk.get_all_topics())
    if topic is not None:
        _check_exists(topic, topics)
        topics = [topic]
    reads = zk.get_topic_configs(topics)
    for name in topics:
        if name in reads.malformed:
            raise reads.malformed[name]
    return {name: dict(reads.found[name].config) if name in reads.found else {} for name in topics}


def alter_config(
    zk: KafkaZkClient, topic: str, additions: Mapping[str, str], deletions: Sequence[str]
) -> dict[str, str]:
    """Change the overrides of an existing topic (`altered_config`), write them and
    announce the change; returns the new overrides. Nothing is written when the topic does
    not exist, its config znode does not decode, or the change is refused."""
    if not additions and not deletions:
        raise ConfigsCommandError("--alter needs --add-config or --delete-config")
    current = describe_configs(zk, topic)[topic]
    config = altered_config(current, additions, deletions)
    ConfigChangesZk(zk).change_topic_config(topic, TopicConfig(config))
    return config


def _check_exists(topic: str, topics: Sequence[str]) -> None:
    if topic not in topics:
        raise ConfigsCommandError(f"Topic '{topic}' does not exist")
