"""Topic creation, deletion and partition addition through ZooKeeper, as Kafka 2.x's
`AdminZkClient` does them: creation writes `/brokers/topics/T` (and `/config/topics/T`),
adding partitions rewrites `/brokers/topics/T` conditionally on its zkVersion, and
deletion writes `/admin/delete_topics/T`, for the controller to act on. Deciding the new
partitions (`new_partitions`) is pure; the operations block the calling thread (the CLI's
main thread, a chaos step or a benchmark's set-up) on its ZooKeeper session.

Errors are `admin` errors (`AdminError`); a topic znode that does not decode raises
`zkdata.errors.ZnodeFormatError`, and a lost session kazoo's errors.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from kazoo.exceptions import BadVersionError, NoNodeError

from admin.errors import (
    InvalidReplicaAssignmentError,
    InvalidTopicConfigError,
    ReassignmentInProgressError,
    TopicExistsError,
    TopicOperationError,
)
from admin.racks import RackAwareMode, broker_racks
from admin.replica_assignment import (
    assign_replicas_to_brokers,
    validate_partition_replicas,
    validate_replica_assignment,
)
from admin.topic_names import validate_topic_creation
from zkdata import errors as zk_errors
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.errors import ZnodeFormatError
from zkdata.model import ReplicaAssignment, TopicAssignment, TopicConfig
from zkdata.topic_configs import InvalidConfigError, validate_topic_config
from zkdata.znodes import TopicZNode, new_topic_id

__all__ = ["add_partitions", "create_topic", "delete_topic", "new_partitions"]


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
    `AdminOperationError` when only some brokers have a rack and racks are not disabled;
    `InvalidTopicConfigError` for a config Kafka would refuse; `TopicOperationError`
    without a size or an assignment), nothing written then, and `TopicExistsError` if the
    topic exists.
    """
    validate_topic_creation(name, zk.get_all_topics())
    try:
        validate_topic_config(config or {})
    except InvalidConfigError as exc:
        raise InvalidTopicConfigError(str(exc)) from None
    registered = _registered_racks(zk)
    live = set(registered)
    if assignment is None:
        if partitions is None or replication_factor is None:
            raise TopicOperationError(
                "give --partitions and --replication-factor, or --replica-assignment"
            )
        racks = broker_racks(registered, rack_aware)
        chosen = assign_replicas_to_brokers(partitions, replication_factor, racks, rng=rng)
    else:
        validate_replica_assignment(assignment, live)
        chosen = {p: tuple(r) for p, r in assignment.items()}
    try:
        zk.create_topic(
            name,
            TopicAssignment({p: ReplicaAssignment(r) for p, r in chosen.items()}, new_topic_id()),
            TopicConfig(dict(config or {})),
        )
    except zk_errors.TopicExistsError as exc:
        raise TopicExistsError(str(exc)) from None
    return chosen


def _registered_racks(zk: KafkaZkClient) -> dict[int, str | None]:
    """Registered broker id -> the rack it registered (None without one)."""
    return {b: broker.info.rack for b, broker in zk.get_all_brokers().brokers.items()}


def delete_topic(zk: KafkaZkClient, name: str) -> bool:
    """Mark a topic for deletion (`kafka-topics.sh --delete`): write
    `/admin/delete_topics/T`; the controller deletes the topic. Returns False when it was
    already marked. Raises `TopicOperationError` if the topic does not exist."""
    if name not in zk.get_all_topics():
        raise TopicOperationError(f"Topic '{name}' does not exist as expected")
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

    Refused while any partition is being reassigned (`ReassignmentInProgressError`),
    and (`TopicOperationError`) when the existing ids are not 0..n-1, when `partitions`
    is not above the current count, and when partition 0 has no replica.
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
        raise ReassignmentInProgressError(
            f"Topic '{topic}' has a partition reassignment in progress (partitions "
            f"{_ids(moving)}); add partitions once `testbed reassign verify` reports it complete"
        )
    current = len(existing)
    if sorted(existing) != list(range(current)) or current == 0:
        raise TopicOperationError(
            f"Topic '{topic}' has partitions [{_ids(sorted(existing))}], not 0..n-1 with "
            "n >= 1; partitions cannot be added to it"
        )
    if partitions <= current:
        raise TopicOperationError(
            f"A topic's partition count can only grow: topic '{topic}' has {current} "
            f"partitions, so --partitions {partitions} adds none"
        )
    first = existing[0].replicas
    if not first:
        raise TopicOperationError(
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

    Raises `TopicOperationError` when the topic does not exist, is marked for deletion, or
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
        raise TopicOperationError(f"Topic '{topic}' does not exist") from None
    if pending_deletion.get() is not None:
        raise TopicOperationError(
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
        raise TopicOperationError(
            f"Topic '{topic}' changed while its partitions were being added (version "
            f"{stat.version} of {path} was read); nothing was written, run the command again"
        ) from None
    except NoNodeError:
        raise TopicOperationError(
            f"Topic '{topic}' was deleted while its partitions were being added"
        ) from None
    return added


def _ids(ids: Sequence[int]) -> str:
    return ",".join(str(i) for i in ids)
