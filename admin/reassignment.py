"""Partition reassignment rules shared by the controller and the command line: whether a
target replica list is usable, what a partition's current target is, a proposed new
assignment (`reassign generate`), and why a request would be rejected.

A target is usable when it is non-empty, names no broker twice, has no negative id and the
brokers it adds are registered (a replica the partition has already may be down, as in
Kafka); a request also needs an existing topic and partition, listed once.

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from admin.errors import InvalidPartitionsError, InvalidReplicationFactorError
from admin.replica_assignment import assign_replicas_to_brokers
from domain import TopicPartition
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment

__all__ = ["current_replicas", "propose_assignment", "reassignment_problems", "target_error"]


def target_error(
    target: Sequence[int], live_brokers: AbstractSet[int], adding: Iterable[int] | None = None
) -> str | None:
    """Why `target` cannot be a partition's replica list, or None when it can: it must be
    non-empty and without repeats, and the brokers it adds (`adding`; all of it when not
    given) must be registered (`live_brokers`): Kafka's `validateReassignment` lets a
    replica the partition already has be down."""
    if not target:
        return "the target replica list is empty"
    repeated = sorted(b for b, n in Counter(target).items() if n > 1)
    if repeated:
        return f"the target replica list {_ids(target)} names broker(s) {_ids(repeated)} twice"
    negative = sorted(b for b in set(target) if b < 0)
    if negative:
        return f"the target replica list {_ids(target)} has invalid broker id(s) {_ids(negative)}"
    absent = sorted(set(target if adding is None else adding) - set(live_brokers))
    if absent:
        return (
            f"broker(s) {_ids(absent)} of the target {_ids(target)} are not registered "
            f"(dead or unknown); live brokers: {_ids(sorted(live_brokers))}"
        )
    return None


def current_replicas(assignment: ReplicaAssignment) -> tuple[int, ...]:
    """What a partition is assigned now, as a reassignment target: its replicas, less any
    being added by a reassignment in flight (so that it also serves as a rollback)."""
    return tuple(r for r in assignment.replicas if r not in assignment.adding_replicas)


def propose_assignment(
    topics: Mapping[str, TopicAssignment],
    brokers: Sequence[int] | Mapping[int, str | None],
    rng: random.Random,
) -> dict[TopicPartition, tuple[int, ...]]:
    """A new assignment of every partition of `topics` over `brokers` (a list of ids, or ids
    with their racks: Kafka's assignment, rack-aware when every broker has a rack),
    keeping each topic's partition ids and replication factor: the replica count of its
    lowest partition (its target while that partition is being moved).

    Raises `InvalidPartitionsError` for a topic without partitions and
    `InvalidReplicationFactorError` for one with more replicas than there are brokers; the
    message names the topic."""
    proposal: dict[TopicPartition, tuple[int, ...]] = {}
    for topic, assignment in sorted(topics.items()):
        ids = sorted(assignment.partitions)
        if not ids:
            raise InvalidPartitionsError(f"topic {topic} has no partitions")
        replication_factor = len(assignment.partitions[ids[0]].target_replicas)
        try:
            chosen = assign_replicas_to_brokers(len(ids), replication_factor, brokers, rng=rng)
        except InvalidReplicationFactorError as exc:
            raise InvalidReplicationFactorError(f"topic {topic}: {exc}") from None
        for index, partition in enumerate(ids):
            proposal[TopicPartition(topic, partition)] = chosen[index]
    return proposal


def reassignment_problems(
    requests: Sequence[PartitionReassignment],
    topics: Mapping[str, TopicAssignment],
    live_brokers: AbstractSet[int],
) -> list[str]:
    """Why the controller would reject parts of `requests`, one sentence each (none when it
    can start them all): no partition at all, a partition listed twice, an unknown topic or
    partition (`topics` holds the assignments of the existing ones), or a target that
    `target_error` refuses."""
    if not requests:
        return ["the reassignment lists no partition"]
    counts = Counter(r.topic_partition for r in requests)
    problems = [f"{tp} is listed {n} times" for tp, n in counts.items() if n > 1]
    for request in requests:
        tp = request.topic_partition
        if tp.topic not in topics:
            problems.append(f"{tp}: topic {tp.topic} does not exist")
        elif tp.partition not in topics[tp.topic].partitions:
            problems.append(f"{tp}: topic {tp.topic} has no partition {tp.partition}")
        else:
            current = topics[tp.topic].partitions[tp.partition]
            adding = current.reassign_to(tuple(request.replicas)).adding_replicas
            if (reason := target_error(request.replicas, live_brokers, adding)) is not None:
                problems.append(f"{tp}: {reason}")
    return problems


def _ids(values: Iterable[int]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"
