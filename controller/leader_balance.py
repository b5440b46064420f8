"""Preferred-replica election and auto leader rebalance: which partitions to move, and
what each gets answered, as Kafka 2.8 decides them. Pure functions; any thread.

`election_outcomes` sorts requested partitions before any election runs (unknown,
being deleted, not needed); `rebalance_candidates` is Kafka's
`checkAndTriggerAutoLeaderRebalance` over explicit values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import IntEnum

from admin.leader_imbalance import imbalance_ratios
from domain import LeaderAndIsr, TopicPartition
from rpc.errors import Errors


class ElectionType(IntEnum):
    """Kafka's `ElectionType` values."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True, slots=True)
class Triage:
    """Requested partitions split before electing: those to elect and those already
    answered (with Kafka's error for each)."""

    to_elect: tuple[TopicPartition, ...]
    answered: dict[TopicPartition, Errors]


def triage(
    requested: Iterable[TopicPartition],
    election: ElectionType,
    replicas: Callable[[TopicPartition], tuple[int, ...]],
    leadership: Callable[[TopicPartition], LeaderAndIsr | None],
    being_deleted: Callable[[str], bool],
    is_live: Callable[[int], bool],
) -> Triage:
    """Unknown partitions: UNKNOWN_TOPIC_OR_PARTITION; topics being deleted:
    INVALID_TOPIC_EXCEPTION; partitions without a known leadership:
    UNKNOWN_TOPIC_OR_PARTITION; preferred election where the preferred replica already
    leads, or unclean election where the leader is live: ELECTION_NOT_NEEDED."""
    to_elect: list[TopicPartition] = []
    answered: dict[TopicPartition, Errors] = {}
    for tp in sorted(set(requested)):
        assigned = replicas(tp)
        current = leadership(tp)
        if not assigned:
            answered[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
        elif being_deleted(tp.topic):
            answered[tp] = Errors.INVALID_TOPIC_EXCEPTION
        elif current is None:  # Kafka's event fails on it and answers nothing
            answered[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
        elif _not_needed(election, current.leader, assigned[0], is_live):
            answered[tp] = Errors.ELECTION_NOT_NEEDED
        else:
            to_elect.append(tp)
    return Triage(tuple(to_elect), answered)


def _not_needed(
    election: ElectionType, leader: int, preferred: int, is_live: Callable[[int], bool]
) -> bool:
    if election is ElectionType.PREFERRED:
        return leader == preferred
    return leader >= 0 and is_live(leader)


def failure_error(election: ElectionType) -> Errors:
    """What a partition whose election found no leader is answered."""
    if election is ElectionType.PREFERRED:
        return Errors.PREFERRED_LEADER_NOT_AVAILABLE
    return Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE


def rebalance_candidates(
    assignments: Mapping[TopicPartition, tuple[int, ...]],
    leaders: Mapping[TopicPartition, int],
    isrs: Mapping[TopicPartition, tuple[int, ...]],
    live: AbstractSet[int],
    imbalance_percentage: int,
    reassignment_in_progress: bool,
) -> list[TopicPartition]:
    """Partitions an auto rebalance moves back to their preferred replica: for each broker
    whose imbalance ratio exceeds the threshold, those of its partitions whose preferred
    replica is live and in the ISR; nothing while a reassignment is in progress."""
    if reassignment_in_progress:
        return []
    chosen: list[TopicPartition] = []
    for broker, (ratio, not_led) in imbalance_ratios(assignments, leaders).items():
        if ratio <= imbalance_percentage / 100 or broker not in live:
            continue
        chosen += [tp for tp in not_led if broker in isrs.get(tp, ())]
    return sorted(chosen)
