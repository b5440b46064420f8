"""Kafka's replica assignment (`AdminUtils.assignReplicasToBrokers`, rack-unaware and
rack-aware) and the checks on an explicit assignment, as Kafka 2.8 makes them. Errors are
`admin.errors`.

Pure: no I/O, logging or metrics; randomness comes only from the `random.Random` passed in.
Any thread may call these functions.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from admin.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)
from admin.racks import rack_alternated_brokers

__all__ = [
    "assign_replicas_to_brokers",
    "validate_partition_replicas",
    "validate_replica_assignment",
]


def assign_replicas_to_brokers(
    partitions: int,
    replication_factor: int,
    brokers: Sequence[int] | Mapping[int, str | None],
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, tuple[int, ...]]:
    """Kafka's replica assignment (`AdminUtils.assignReplicasToBrokers`): partition id ->
    replicas, preferred leader first.

    `brokers` is a list of broker ids, or a mapping of broker id to rack (None for a broker
    without one, as `admin.racks.broker_racks` gives them). Without any rack the
    rack-unaware rule applies; when every broker has a rack, the rack-aware one. Brokers
    are taken in ascending id order (duplicates ignored).

    Rack-unaware: the first replica of each partition goes round-robin from a start index;
    the others follow at a shift that grows by one every `len(brokers)` partition ids, so
    later rounds do not repeat earlier replica sets. Rack-aware: the same walk over the
    rack-alternated broker order (`admin.racks.rack_alternated_brokers`), the shift counted
    in whole rounds of racks, and a candidate skipped while its rack already holds a
    replica and some rack holds none, or while it holds one itself and some broker holds
    none.

    The start index and the initial shift are both `fixed_start_index` when it is >= 0;
    otherwise they are drawn from `rng` (start index first, as Kafka does), a fresh
    `random.Random()` when none is given. Partition ids start at
    `max(0, start_partition_id)`, which is how Kafka adds partitions to a topic.

    Raises `InvalidPartitionsError` or `InvalidReplicationFactorError` as Kafka does, and
    `AdminOperationError` when only some brokers have a rack.
    """
    racks: dict[int, str | None] = (
        {b: brokers[b] for b in sorted(brokers)}
        if isinstance(brokers, Mapping)
        else dict.fromkeys(sorted(set(brokers)))
    )
    if partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(racks):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(racks)}."
        )
    known = {b: r for b, r in racks.items() if r is not None}
    if known and len(known) < len(racks):
        raise AdminOperationError(
            "A rack-aware assignment needs a rack for every broker; broker(s) "
            f"{_join(b for b in racks if racks[b] is None)} have none."
        )
    ordered = rack_alternated_brokers(known) if known else list(racks)
    count = len(ordered)
    if fixed_start_index >= 0:
        start_index = fixed_start_index
        replica_shift = fixed_start_index
    else:
        source = rng if rng is not None else random.Random()
        start_index = source.randrange(count)
        replica_shift = source.randrange(count)
    rack_count = len(set(known.values()))
    assignment: dict[int, tuple[int, ...]] = {}
    first_id = max(0, start_partition_id)
    for partition in range(first_id, first_id + partitions):
        if partition > 0 and partition % count == 0:
            replica_shift += 1
        first_index = (partition + start_index) % count
        if known:
            assignment[partition] = _rack_aware_replicas(
                ordered, known, first_index, replica_shift * rack_count, replication_factor
            )
            continue
        followers = (
            ordered[_follower_index(first_index, replica_shift, j, count)]
            for j in range(replication_factor - 1)
        )
        assignment[partition] = (ordered[first_index], *followers)
    return assignment


def _rack_aware_replicas(
    ordered: Sequence[int],
    racks: Mapping[int, str],
    first_index: int,
    shift: int,
    replication_factor: int,
) -> tuple[int, ...]:
    """One partition's replicas under the rack-aware rule: the leader at `first_index` of
    the rack-alternated order, then candidates along the follower walk, each taken only if
    its rack is new (or every rack has one) and it is new (or every broker has one)."""
    leader = ordered[first_index]
    chosen = [leader]
    used_racks = {racks[leader]}
    rack_count = len(set(racks.values()))
    step = 0
    while len(chosen) < replication_factor:
        broker = ordered[_follower_index(first_index, shift, step, len(ordered))]
        step += 1
        rack_ok = racks[broker] not in used_racks or len(used_racks) == rack_count
        broker_ok = broker not in chosen or len(chosen) == len(ordered)
        if rack_ok and broker_ok:
            chosen.append(broker)
            used_racks.add(racks[broker])
    return tuple(chosen)


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
