"""Topic administration through ZooKeeper, as Kafka 2.x's `kafka-topics.sh --zookeeper`
does it: creation writes `/brokers/topics/T` (and `/config/topics/T`) and deletion
`/admin/delete_topics/T` for the controller to act on; description reads the assignment
and state znodes. Blocks the calling thread."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from controller.replica_assignment import (
    InvalidReplicaAssignmentError,
    assign_replicas_to_brokers,
    validate_replica_assignment,
    validate_topic_name,
)
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.model import (
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicConfig,
    TopicPartition,
)
from zkdata.topic_configs import validate_topic_config


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


def create_topic(
    zk: KafkaZkClient,
    name: str,
    partitions: int | None = None,
    replication_factor: int | None = None,
    assignment: Mapping[int, Sequence[int]] | None = None,
    config: Mapping[str, str] | None = None,
    rng: random.Random | None = None,
) -> dict[int, tuple[int, ...]]:
    """Create a topic from a partition count and replication factor (Kafka's assignment
    over the live brokers) or from an explicit assignment; returns the assignment.

    Raises the `controller.replica_assignment` errors for bad input,
    `zkdata.topic_configs.InvalidConfigError` for a config Kafka would refuse (nothing is
    written then) and `zkdata.errors.TopicExistsError` if the topic exists.
    """
    validate_topic_name(name)
    validate_topic_config(config or {})
    live = set(zk.get_all_brokers().brokers)
    if assignment is None:
        if partitions is None or replication_factor is None:
            raise TopicCommandError(
                "give --partitions and --replication-factor, or --replica-assignment"
            )
        chosen = assign_replicas_to_brokers(partitions, replication_factor, sorted(live), rng=rng)
    else:
        validate_replica_assignment(assignment, live)
        chosen = {p: tuple(r) for p, r in assignment.items()}
    zk.create_topic(
        name,
        TopicAssignment({p: ReplicaAssignment(r) for p, r in chosen.items()}),
        TopicConfig(dict(config or {})),
    )
    return chosen


def delete_topic(zk: KafkaZkClient, name: str) -> bool:
    """Mark a topic for deletion (`kafka-topics.sh --delete`): write
    `/admin/delete_topics/T`; the controller deletes the topic. Returns False when it was
    already marked. Raises `TopicCommandError` if the topic does not exist."""
    if name not in zk.get_all_topics():
        raise TopicCommandError(f"Topic '{name}' does not exist as expected")
    return TopicDeletionZk(zk).mark_topic_for_deletion(name)


@dataclass(frozen=True)
class PartitionDescription:
    """One partition's replicas and, if it has one, its leadership."""

    topic_partition: TopicPartition
    replicas: tuple[int, ...]
    state: LeaderIsrAndControllerEpoch | None

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
    """Kafka's `--describe` layout."""
    lines = []
    for topic, parts in described.items():
        rf = len(parts[0].replicas) if parts else 0
        lines.append(f"Topic: {topic}\tPartitionCount: {len(parts)}\tReplicationFactor: {rf}")
        for d in parts:
            leader = "none" if d.leader is None or d.leader < 0 else str(d.leader)
            offline = [r for r in d.replicas if r not in live]
            line = (
                f"\tTopic: {topic}\tPartition: {d.topic_partition.partition}\tLeader: {leader}"
                f"\tReplicas: {_ids(d.replicas)}\tIsr: {_ids(d.isr)}"
            )
            if offline:
                line += f"\tOffline: {_ids(offline)}"
            lines.append(line)
    return "\n".join(lines)


def _ids(ids: Sequence[int]) -> str:
    return ",".join(str(i) for i in ids)
