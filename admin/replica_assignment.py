"""Kafka's replica assignment (`AdminUtils.assignReplicasToBrokers`, rack-unaware) and the
checks on an explicit assignment, as Kafka 2.8 makes them. Errors are `admin.errors`.

Pure: no I/O, logging or metrics; randomness comes only from the `random.Random` passed in.
Any thread may call these functions.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from admin.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

__all__ = [
    "assign_replicas_to_brokers",
    "validate_partition_replicas",
    "validate_replica_assignment",
]


def assign_replicas_to_brokers(
    partitions: int,
    replication_factor: int,
    brokers: Sequence[int],
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, tuple[int, ...]]:
    """Kafka's rack-unaware assignment: partition id -> replicas, preferred leader first.

    Brokers are taken in ascending id order (duplicates ignored). The first replica of each
    partition goes round-robin from a start index; the others follow at a shift that grows
    by one every `len(brokers)` partition ids, so later rounds do not repeat earlier
    replica sets. The start index and the initial shift are both `fixed_start_index` when
    it is >= 0; otherwise they are drawn from `rng` (start index first, as Kafka does), a
    fresh `random.Random()` when none is given. Partition ids start at
    `max(0, start_partition_id)`, which is how Kafka adds partitions to a topic.

    Raises `InvalidPartitionsError` or `InvalidReplicationFactorError` as Kafka does.
    """
    ordered = sorted(set(brokers))
    if partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(ordered):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: "
            f"{len(ordered)}."
        )
    count = len(ordered)
    if fixed_start_index >= 0:
        start_index = fixed_start_index
        replica_shift = fixed_start_index
    else:
        source = rng if rng is not None else random.Random()
        start_index = source.randrange(count)
        replica_shift = source.randrange(count)
    assignment: dict[int, tuple[int, ...]] = {}
    first_id = max(0, start_partition_id)
    for partition in range(first_id, first_id + partitions):
        if partition > 0 and partition % count == 0:
            replica_shift += 1
        first_index = (partition + start_index) % count
        followers = (
            ordered[_follower_index(first_index, replica_shift, j, count)]
            for j in range(replication_factor - 1)
        )
        assignment[partition] = (ordered[first_index], *followers)
    return assignment


def _follower_index(first_index: int, shift: int, follower: int, count: int) -> int:
    """Where follower number `follower` of a partition led from `first_index` sits: never
    on the leader's broker, since the offset is in 1..count-1."""
    offset = 1 + (shift + follower) % (count - 1)
    return (first_index + offset) % count


def validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]], live_brokers: AbstractSet[int]
) -> None:
    """Raise `InvalidReplicaAssignmentError` unless an explicit assignment is usable.

    Usable: partitions numbered 0..n-1 without gaps (n >= 1); in each partition at least one
    replica, no broker twice and every broker in `live_brokers`; and every partition with as
    many replicas as partition 0. Partitions are checked in id order and the message names
    the first offender.
    """
    if not assignment:
        raise InvalidReplicaAssignmentError("The replica assignment has no partitions.")
    partition_ids = sorted(assignment)
    if partition_ids != list(range(len(partition_ids))):
        raise InvalidReplicaAssignmentError(
            "partitions should be a consecutive 0-based integer sequence, got partitions "
            f"[{_join(partition_ids)}]"
        )
    validate_partition_replicas(assignment, len(assignment[0]), live_brokers)


def validate_partition_replicas(
    partitions: Mapping[int, Sequence[int]],
    replication_factor: int,
    live_brokers: AbstractSet[int],
) -> None:
    """Raise `InvalidReplicaAssignmentError` unless every partition (checked in id order)
    has at least one replica, no broker twice, only brokers in `live_brokers`, and
    `replication_factor` replicas (partition 0's, as Kafka words it). Used for a new
    topic and for partitions added to one."""
    for partition in sorted(partitions):
        replicas = partitions[partition]
        if not replicas:
            raise InvalidReplicaAssignmentError(
                f"Cannot have replication factor of 0 for partition id {partition}."
            )
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate brokers not allowed in replica assignment: {_join(replicas)} "
                f"for partition id {partition}."
            )
        if not set(replicas) <= live_brokers:
            raise InvalidReplicaAssignmentError(
                f"Some brokers specified for partition id {partition} are not available. "
                f"Specified brokers: {_join(replicas)}, "
                f"available brokers: {_join(sorted(live_brokers))}."
            )
    bad = [p for p in sorted(partitions) if len(partitions[p]) != replication_factor]
    if bad:
        raise InvalidReplicaAssignmentError(
            "Inconsistent replication factor between partitions, partition 0 has "
            f"{replication_factor} while partitions [{_join(bad)}] have replication factors "
            f"[{_join(len(partitions[p]) for p in bad)}], respectively."
        )


def _join(values: Iterable[int]) -> str:
    """Kafka's `mkString(", ")`."""
    return ", ".join(str(value) for value in values)
