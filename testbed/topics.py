"""The `testbed topics` command's own parts, as Kafka 2.x's `kafka-topics.sh --zookeeper`
has them: parsing `--replica-assignment` and `--config`, describing topics from their
assignment and state znodes (read pipelined) with Kafka's filters and layout, and the line
printed after partitions were added. Creating, deleting and growing a topic are
`admin.topics`'. Parsing and rendering are pure; description blocks the calling thread (the
CLI's main thread)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from admin import InvalidReplicaAssignmentError
from domain import LeaderIsrAndControllerEpoch, TopicPartition
from zkdata.client import KafkaZkClient


class TopicCommandError(Exception):
    """A topic command that cannot be carried out; the message is for the user."""


def parse_replica_assignment(text: str) -> dict[int, tuple[int, ...]]:
    """Kafka's `--replica-assignment` syntax: partitions separated by commas, the brokers of
    one partition by colons (`1:2,2:3,3:1`)."""
    assignment: dict[int, tuple[int, ...]] = {}
    for partition, part in enumerate(text.split(",")):
        try:
            assignment[partition] = tuple(int(b) for b in part.split(":"))
        except ValueError:
            raise InvalidReplicaAssignmentError(
                f"Replica assignment {text!r} is not of the form 1:2,2:3 (partition {partition})"
            ) from None
    return assignment


def parse_configs(entries: Sequence[str]) -> dict[str, str]:
    """`key=value` pairs (Kafka's `--config`)."""
    config = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key:
            raise TopicCommandError(f"Invalid config {entry!r}: expected key=value")
        config[key.strip()] = value.strip()
    return config


def render_added(topic: str, added: Iterable[int]) -> str:
    """The line printed after partitions were added: `Added partitions 3..5 to topic T.`
    (`Added partition 3 to topic T.` for one)."""
    ids = sorted(added)
    if len(ids) == 1:
        return f"Added partition {ids[0]} to topic {topic}."
    return f"Added partitions {ids[0]}..{ids[-1]} to topic {topic}."


@dataclass(frozen=True)
class PartitionDescription:
    """One partition's replicas and, if it has one, its leadership; and its topic's id when
    the topic znode holds one."""

    topic_partition: TopicPartition
    replicas: tuple[int, ...]
    state: LeaderIsrAndControllerEpoch | None
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    topic_id: str | None = None

    @property
    def leader(self) -> int | None:
        """The leader, or None."""
        return self.state.leader_and_isr.leader if self.state else None

    @property
    def isr(self) -> tuple[int, ...]:
        """The ISR (empty if unknown)."""
        return self.state.leader_and_isr.isr if self.state else ()


def describe_topics(
    zk: KafkaZkClient, topics: Sequence[str] = ()
) -> dict[str, list[PartitionDescription]]:
    """Assignments and state znodes of `topics` (all when empty), read pipelined."""
    names = sorted(topics) if topics else sorted(zk.get_all_topics())
    reads = zk.get_topic_assignments(names)
    missing = [t for t in names if t not in reads.found and t not in reads.malformed]
    if missing:
        raise TopicCommandError(f"Topic {', '.join(repr(t) for t in missing)} does not exist")
    partitions = [
        TopicPartition(topic, p) for topic, a in reads.found.items() for p in sorted(a.partitions)
    ]
    states = zk.get_partition_states(partitions)
    out: dict[str, list[PartitionDescription]] = {}
    for topic in names:
        if topic not in reads.found:
            continue
        out[topic] = [
            PartitionDescription(
                TopicPartition(topic, p),
                a.replicas,
                states.found.get(TopicPartition(topic, p)),
                a.adding_replicas,
                a.removing_replicas,
                reads.found[topic].topic_id,
            )
            for p, a in sorted(reads.found[topic].partitions.items())
        ]
    return out


def filter_partitions(
    described: Mapping[str, list[PartitionDescription]],
    live: set[int],
    under_replicated: bool,
    unavailable: bool,
) -> dict[str, list[PartitionDescription]]:
    """Kafka's `--under-replicated-partitions` (ISR smaller than the replicas) and
    `--unavailable-partitions` (no leader, or a leader that is not live) filters; topics left
    with no partition are dropped."""
    if not (under_replicated or unavailable):
        return dict(described)
    out: dict[str, list[PartitionDescription]] = {}
    for topic, parts in described.items():
        kept = [
            d
            for d in parts
            if (under_replicated and len(d.isr) < len(d.replicas))
            or (unavailable and (d.leader is None or d.leader not in live))
        ]
        if kept:
            out[topic] = kept
    return out


def render_description(described: Mapping[str, list[PartitionDescription]], live: set[int]) -> str:
    """Kafka's `--describe` layout: the topic id after the name when the topic has one (as
    Kafka 2.8 shows it); a partition being reassigned also shows its adding and removing
    replicas, as Kafka 2.4+ does."""
    lines = []
    for topic, parts in described.items():
        rf = len(parts[0].replicas) if parts else 0
        topic_id = parts[0].topic_id if parts else None
        shown_id = f"\tTopicId: {topic_id}" if topic_id else ""
        lines.append(
            f"Topic: {topic}{shown_id}\tPartitionCount: {len(parts)}\tReplicationFactor: {rf}"
        )
        for d in parts:
            leader = "none" if d.leader is None or d.leader < 0 else str(d.leader)
            offline = [r for r in d.replicas if r not in live]
            line = (
                f"\tTopic: {topic}\tPartition: {d.topic_partition.partition}\tLeader: {leader}"
                f"\tReplicas: {_ids(d.replicas)}\tIsr: {_ids(d.isr)}"
            )
            if d.adding_replicas:
                line += f"\tAdding Replicas: {_ids(d.adding_replicas)}"
            if d.removing_replicas:
                line += f"\tRemoving Replicas: {_ids(d.removing_replicas)}"
            if offline:
                line += f"\tOffline: {_ids(offline)}"
            lines.append(line)
    return "\n".join(lines)


def _ids(ids: Sequence[int]) -> str:
    return ",".join(str(i) for i in ids)
