"""Partition leader election, decided as Kafka 2.8's controller decides it.

Two layers, both pure: no I/O, logging or metrics, nothing read from the controller
context. Every function takes explicit values and returns a value, so any thread may call
them; in the controller it is the event thread.

- The four `elect_*` functions are Kafka's `PartitionLeaderElectionAlgorithms`: given
  replicas, the ISR and the live brokers, which replica leads (or `None`).
- The four `*_election` functions are Kafka's `Election.leaderFor*`: they add the new
  `LeaderAndIsr` (leader epoch + 1) and the replicas that must receive it.

`remove_replica_from_isr` is the replica state machine's ISR shrink when a replica goes
offline. Kafka bumps its unclean-election metric inside the offline election; here the
result carries `unclean=True` and the caller counts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from domain import NO_LEADER, LeaderAndIsr

__all__ = [
    "ElectionResult",
    "controlled_shutdown_election",
    "elect_controlled_shutdown_leader",
    "elect_offline_leader",
    "elect_preferred_leader",
    "elect_reassign_leader",
    "offline_election",
    "preferred_election",
    "reassign_election",
    "remove_replica_from_isr",
]


def elect_offline_leader(
    assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int], unclean_enabled: bool
) -> int | None:
    """The first replica, in assignment order, that is live and in the ISR.

    If no ISR member is live and unclean leader election is enabled, the first live
    replica in assignment order (data may be lost); otherwise `None`.
    """
    for replica in assignment:
        if replica in live and replica in isr:
            return replica
    if unclean_enabled:
        for replica in assignment:
            if replica in live:
                return replica
    return None


def elect_reassign_leader(
    target_replicas: Sequence[int], isr: Sequence[int], live: AbstractSet[int]
) -> int | None:
    """The first replica of the reassignment target that is live and in the ISR, else `None`."""
    for replica in target_replicas:
        if replica in live and replica in isr:
            return replica
    return None


def elect_preferred_leader(
    assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int]
) -> int | None:
    """The preferred replica (the first of the assignment) if it is live and in the ISR.

    Only the first replica is considered: when it cannot lead, the answer is `None` even
    if other replicas could.
    """
    if not assignment:
        return None
    preferred = assignment[0]
    return preferred if preferred in live and preferred in isr else None


def elect_controlled_shutdown_leader(
    assignment: Sequence[int],
    isr: Sequence[int],
    live: AbstractSet[int],
    shutting_down: AbstractSet[int],
) -> int | None:
    """The first replica, in assignment order, that is live, in the ISR and not shutting
    down, else `None`."""
    for replica in assignment:
        if replica in live and replica in isr and replica not in shutting_down:
            return replica
    return None


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """The outcome of one partition's election.

    `leader_and_isr` is `None` when no replica is eligible; `recipients` are the replicas
    that receive the LeaderAndIsr request (Kafka's `liveReplicas`, which for reassignment
    and preferred election is every target or assigned replica); `unclean` is True when the
    leader came from outside the ISR.
    """

    leader_and_isr: LeaderAndIsr | None
    recipients: tuple[int, ...]
    unclean: bool = False


def offline_election(
    current: LeaderAndIsr,
    assignment: Sequence[int],
    online: AbstractSet[int],
    unclean_enabled: bool,
) -> ElectionResult:
    """Elect a leader for a new or offline partition.

    `online` holds the brokers on which a replica counts as online; it excludes brokers
    that are shutting down (the caller decides). A leader from the ISR keeps the ISR
    members that are online; an unclean leader becomes the whole ISR. Recipients are the
    online replicas in assignment order.
    """
    live = tuple(replica for replica in assignment if replica in online)
    leader = elect_offline_leader(assignment, current.isr, frozenset(live), unclean_enabled)
    if leader is None:
        return ElectionResult(None, live)
    if leader in current.isr:
        new_isr = tuple(replica for replica in current.isr if replica in online)
        return ElectionResult(current.new_leader_and_isr(leader, new_isr), live)
    return ElectionResult(current.new_leader_and_isr(leader, (leader,)), live, unclean=True)


def reassign_election(
    current: LeaderAndIsr, target_replicas: Sequence[int], online: AbstractSet[int]
) -> ElectionResult:
    """Elect a leader from the reassignment target; the ISR is kept.

    Recipients are all target replicas, online or not.
    """
    live = frozenset(replica for replica in target_replicas if replica in online)
    leader = elect_reassign_leader(target_replicas, current.isr, live)
    recipients = tuple(target_replicas)
    if leader is None:
        return ElectionResult(None, recipients)
    return ElectionResult(current.new_leader_and_isr(leader, current.isr), recipients)


def preferred_election(
    current: LeaderAndIsr, assignment: Sequence[int], online: AbstractSet[int]
) -> ElectionResult:
    """Move leadership to the preferred replica; the ISR is kept.

    Recipients are all assigned replicas, online or not.
    """
    live = frozenset(replica for replica in assignment if replica in online)
    leader = elect_preferred_leader(assignment, current.isr, live)
    recipients = tuple(assignment)
    if leader is None:
        return ElectionResult(None, recipients)
    return ElectionResult(current.new_leader_and_isr(leader, current.isr), recipients)


def controlled_shutdown_election(
    current: LeaderAndIsr,
    assignment: Sequence[int],
    online_or_shutting_down: AbstractSet[int],
    shutting_down: AbstractSet[int],
) -> ElectionResult:
    """Move leadership off brokers that are shutting down.

    The new ISR is the current ISR without any shutting-down broker. Recipients are the
    replicas on brokers that are online or shutting down, in assignment order.
    """
    live = tuple(replica for replica in assignment if replica in online_or_shutting_down)
    leader = elect_controlled_shutdown_leader(
        assignment, current.isr, frozenset(live), shutting_down
    )
    if leader is None:
        return ElectionResult(None, live)
    new_isr = tuple(replica for replica in current.isr if replica not in shutting_down)
    return ElectionResult(current.new_leader_and_isr(leader, new_isr), live)


def remove_replica_from_isr(
    current: LeaderAndIsr, replica: int, keep_last_member: bool = True
) -> LeaderAndIsr:
    """Shrink the ISR because `replica` went offline (Kafka's replica state machine).

    The ISR never loses its last member (KAFKA-5083): a one-replica ISR is left as is, so
    that replica can lead again cleanly when it returns. Otherwise `replica` is removed. If
    it was the leader, the leader becomes `NO_LEADER`. The leader epoch is bumped. Without
    `keep_last_member` (bug switch `kafka-5083`) the last member is removed too and the ISR
    is left empty, as before KAFKA-5083.

    A replica outside the ISR changes nothing: Kafka leaves those partitions unwritten,
    and here `current` itself is returned, so `result == current` means "no write".
    """
    if replica not in current.isr:
        return current
    new_leader = NO_LEADER if replica == current.leader else current.leader
    if len(current.isr) == 1 and keep_last_member:
        return current.new_leader_and_isr(new_leader, current.isr)
    new_isr = tuple(member for member in current.isr if member != replica)
    return current.new_leader_and_isr(new_leader, new_isr)
