"""Topic administration through ZooKeeper, as Kafka 2.x's `kafka-topics.sh --zookeeper`
does it: creation writes `/brokers/topics/T` (and `/config/topics/T`), adding partitions
rewrites `/brokers/topics/T` conditionally on its zkVersion, and deletion writes
`/admin/delete_topics/T`, for the controller to act on; description reads the assignment
and state znodes. Parsing, deciding and rendering are pure; the rest blocks the calling
thread (the CLI's main thread)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from kazoo.exceptions import BadVersionError, NoNodeError

from admin import (
    InvalidReplicaAssignmentError,
    RackAwareMode,
    assign_replicas_to_brokers,
    broker_racks,
    validate_partition_replicas,
    validate_replica_assignment,
    validate_topic_creation,
)
from domain import LeaderIsrAndControllerEpoch, TopicPartition
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.errors import ZnodeFormatError
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig
from zkdata.topic_configs import validate_topic_config
from zkdata.znodes import TopicZNode, new_topic_id


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
    rack_aware: RackAwareMode = RackAwareMode.ENFORCED,
) -> dict[int, tuple[int, ...]]:
    """Create a topic from a partition count and replication factor (Kafka's assignment
    over the live brokers, rack-aware when they all registered a rack, unless
    `rack_aware` is DISABLED) or from an explicit assignment; returns the assignment. The
    topic znode gets a new topic id, as Kafka 2.8 gives one.

    Raises the `admin` errors for bad input (`InvalidTopicError` also for a name that
    collides with an existing topic's, as Kafka's `AdminZkClient` refuses it;
    `AdminOperationError` when only some brokers have a rack and racks are not disabled),
    `zkdata.topic_configs.InvalidConfigError` for a config Kafka would refuse (nothing is
    written then) and `zkdata.errors.TopicExistsError` if the topic exists.
    """
    validate_topic_creation(name, zk.get_all_topics())
    validate_topic_config(config or {})
    registered = _registered_racks(zk)
    live = set(registered)
    if assignment is None:
        if partitions is None or replication_factor is None:
            raise TopicCommandError(
                "give --partitions and --replication-factor, or --replica-assignment"
            )
        racks = broker_racks(registered, rack_aware)
        chosen = assign_replicas_to_brokers(partitions, replication_factor, racks, rng=rng)
    else:
        validate_replica_assignment(assignment, live)
        chosen = {p: tuple(r) for p, r in assignment.items()}
    zk.create_topic(
        name,
        TopicAssignment({p: ReplicaAssignment(r) for p, r in chosen.items()}, new_topic_id()),
        TopicConfig(dict(config or {})),
    )
    return chosen


def _registered_racks(zk: KafkaZkClient) -> dict[int, str | None]:
    """Registered broker id -> the rack it registered (None without one)."""
    return {b: broker.info.rack for b, broker in zk.get_all_brokers().brokers.items()}


def delete_topic(zk: KafkaZkClient, name: str) -> bool:
    """Mark a topic for deletion (`kafka-topics.sh --delete`): write
    `/admin/delete_topics/T`; the controller deletes the topic. Returns False when it was
    already marked. Raises `TopicCommandError` if the topic does not exist."""
    if name not in zk.get_all_topics():
        raise TopicCommandError(f"Topic '{name}' does not exist as expected")
    return TopicDeletionZk(zk).mark_topic_for_deletion(name)


def new_partitions(
    topic: str,
    existing: Mapping[int, ReplicaAssignment],
    partitions: int,
    live_brokers: AbstractSet[int] | Mapping[int, str | None],
    requested: Mapping[int, Sequence[int]] | None = None,
) -> dict[int, tuple[int, ...]]:
    """The replicas of the partitions to add so that `topic` has `partitions` of them, as
    Kafka's `AdminZkClient.addPartitions` decides: partition id -> replicas, ids from the
    current count up to `partitions - 1`.

    Refused (`TopicCommandError`) while any partition is being reassigned, when the
    existing ids are not 0..n-1, when `partitions` is not above the current count, and
    when partition 0 has no replica.
    Without `requested`, the new partitions get Kafka's assignment over `live_brokers`
    (rack-aware when it maps every broker to a rack) with partition 0's replication
    factor, starting from the first live broker whose id is at least partition 0's
    preferred replica (the first live broker if none is); as in Kafka, that index is
    counted in id order even when the rack-aware rule then walks the brokers by rack.
    `requested` lists every partition, as `--replica-assignment` does; its entries for
    existing partitions are ignored, and each new one must pass Kafka's checks
    (`InvalidReplicaAssignmentError`). `InvalidReplicationFactorError` when partition 0
    has more replicas than there are live brokers.
    """
    moving = sorted(p for p, a in existing.items() if a.is_being_reassigned)
    if moving:
        raise TopicCommandError(
            f"Topic '{topic}' has a partition reassignment in progress (partitions "
            f"{_ids(moving)}); add partitions once `testbed reassign verify` reports it complete"
        )
    current = len(existing)
    if sorted(existing) != list(range(current)) or current == 0:
        raise TopicCommandError(
            f"Topic '{topic}' has partitions [{_ids(sorted(existing))}], not 0..n-1 with "
            "n >= 1; partitions cannot be added to it"
        )
    if partitions <= current:
        raise TopicCommandError(
            f"A topic's partition count can only grow: topic '{topic}' has {current} "
            f"partitions, so --partitions {partitions} adds none"
        )
    first = existing[0].replicas
    if not first:
        raise TopicCommandError(
            f"Partition 0 of topic '{topic}' has no replicas, so the new partitions have no "
            "replication factor to follow"
        )
    racks = dict(live_brokers) if isinstance(live_brokers, Mapping) else dict.fromkeys(live_brokers)
    if requested is None:
        ordered = sorted(racks)
        start = next((i for i, b in enumerate(ordered) if b >= first[0]), 0)
        return assign_replicas_to_brokers(
            partitions - current,
            len(first),
            racks,
            fixed_start_index=start,
            start_partition_id=current,
        )
    if len(requested) != partitions:
        raise InvalidReplicaAssignmentError(
            f"--replica-assignment lists {len(requested)} partitions but --partitions is "
            f"{partitions}; list every partition, existing ones included (they are ignored)"
        )
    added = {p: tuple(requested[p]) for p in range(current, partitions)}
    validate_partition_replicas(added, len(first), set(racks))
    return added


def add_partitions(
    zk: KafkaZkClient,
    topic: str,
    partitions: int,
    requested: Mapping[int, Sequence[int]] | None = None,
) -> dict[int, tuple[int, ...]]:
    """Grow an existing topic to `partitions` partitions (`kafka-topics.sh --alter
    --partitions --zookeeper`): read `/brokers/topics/T` with its zkVersion, decide the new
    partitions (`new_partitions`) over the registered brokers, and set the znode to the
    existing partitions (unchanged, topic id kept) plus the new ones, conditionally on the
    version read. The controller creates the new partitions. Returns the new partitions.

    Raises `TopicCommandError` when the topic does not exist, is marked for deletion, or
    changed between the read and the write, `ZnodeFormatError` when its znode does not
    decode, and the errors of `new_partitions`. Nothing is written when it raises.
    """
    path = paths.topic(topic)
    kazoo = zk.kazoo
    pending_read = kazoo.get_async(path)
    pending_deletion = kazoo.exists_async(paths.delete_topic(topic))
    try:
        data, stat = pending_read.get()
    except NoNodeError:
        raise TopicCommandError(f"Topic '{topic}' does not exist") from None
    if pending_deletion.get() is not None:
        raise TopicCommandError(
            f"Topic '{topic}' is marked for deletion; partitions cannot be added to it"
        )
    try:
        current = TopicZNode.decode(data)
    except ZnodeFormatError as exc:
        raise ZnodeFormatError(exc.reason, path) from None
    racks = broker_racks(_registered_racks(zk), RackAwareMode.ENFORCED)
    added = new_partitions(topic, current.partitions, partitions, racks, requested)
    grown = dataclasses.replace(
        current,
        partitions={**current.partitions, **{p: ReplicaAssignment(r) for p, r in added.items()}},
    )
    try:
        kazoo.retry(kazoo.set, path, TopicZNode.encode(grown), version=stat.version)
    except BadVersionError:
        raise TopicCommandError(
            f"Topic '{topic}' changed while its partitions were being added (version "
            f"{stat.version} of {path} was read); nothing was written, run the command again"
        ) from None
    except NoNodeError:
        raise TopicCommandError(
            f"Topic '{topic}' was deleted while its partitions were being added"
        ) from None
    return added


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
