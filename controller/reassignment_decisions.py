"""What the controller decides about partition reassignments, as pure functions: which
entries of `/admin/reassign_partitions` to start, which to reject and why, and when a
reassignment in flight is complete.

The vocabulary is Kafka's (2.4+): for a partition being moved, ORS are the origin
replicas, TRS the target replicas, RS = TRS + ORS the replica set while moving, AR the
replicas being added (TRS - ORS) and RR those being removed (ORS - TRS); see
`ReplicaAssignment.reassign_to`.

A request is rejected, and nothing about the partition changes, when:

- its topic is queued for deletion, or the partition does not exist
  (UNKNOWN_TOPIC_OR_PARTITION);
- the target is empty, names a broker twice, names a negative broker id, or would add
  a replica on a broker that is not registered (INVALID_REPLICA_ASSIGNMENT; Kafka's
  `validateReassignment` asks only the replicas being added to be live, so a request
  whose target the partition already holds, as after a controller that wrote it died
  before it cleared the request, still completes);
- the partition is listed more than once in the same request (INVALID_REQUEST).

Pure: no I/O, logging or metrics. Any thread.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from admin.reassignment import target_error
from domain import TopicPartition
from rpc.errors import Errors
from zkdata.model import PartitionReassignment, ReplicaAssignment

__all__ = [
    "ReassignmentPlan",
    "Rejection",
    "is_reassignment_complete",
    "plan_reassignments",
]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A requested reassignment that will not run: Kafka's error code and a reason for
    people."""

    topic_partition: TopicPartition
    target: tuple[int, ...]
    error: Errors
    reason: str


@dataclass(frozen=True, slots=True)
class ReassignmentPlan:
    """What to do with one reading of `/admin/reassign_partitions`.

    `start`: partition -> the assignment to move to (RS, AR, RR), in request order;
    `in_flight`: partitions already moving to the requested target (nothing to redo);
    `rejected`: requests to drop, with their reason.
    """

    start: dict[TopicPartition, ReplicaAssignment] = field(default_factory=dict)
    in_flight: tuple[TopicPartition, ...] = ()
    rejected: tuple[Rejection, ...] = ()


def plan_reassignments(
    requests: Iterable[PartitionReassignment],
    assignment_of: Callable[[TopicPartition], ReplicaAssignment],
    queued_for_deletion: Callable[[str], bool],
    live_brokers: AbstractSet[int],
    redo_in_flight: bool = False,
) -> ReassignmentPlan:
    """Decide each request (Kafka's `maybeBuildReassignment` plus the checks in the module
    docstring). `assignment_of` gives a partition's current assignment (no replicas when it
    does not exist). A request whose target is the one already in flight is `in_flight`,
    unless `redo_in_flight` (a new controller resuming) starts it again."""
    ordered = list(requests)
    counts = Counter(r.topic_partition for r in ordered)
    start: dict[TopicPartition, ReplicaAssignment] = {}
    in_flight: list[TopicPartition] = []
    rejected: list[Rejection] = []
    for request in ordered:
        tp, target = request.topic_partition, request.replicas
        current = assignment_of(tp)
        if counts[tp] > 1:
            rejected.append(
                Rejection(
                    tp,
                    target,
                    Errors.INVALID_REQUEST,
                    f"{tp} is listed {counts[tp]} times in the request",
                )
            )
        elif queued_for_deletion(tp.topic):
            rejected.append(
                Rejection(
                    tp,
                    target,
                    Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    f"topic {tp.topic} is being deleted",
                )
            )
        elif not current.replicas:
            rejected.append(
                Rejection(tp, target, Errors.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} does not exist")
            )
        elif (
            reason := target_error(
                target, live_brokers, current.reassign_to(target).adding_replicas
            )
        ) is not None:
            rejected.append(Rejection(tp, target, Errors.INVALID_REPLICA_ASSIGNMENT, reason))
        elif (
            not redo_in_flight and current.is_being_reassigned and current.target_replicas == target
        ):
            in_flight.append(tp)
        else:
            start[tp] = current.reassign_to(target)
    return ReassignmentPlan(start, tuple(in_flight), tuple(rejected))


def is_reassignment_complete(assignment: ReplicaAssignment, isr: Sequence[int] | None) -> bool:
    """Kafka's `isReassignmentComplete`: nothing is in flight, or every target replica is
    in the ISR (`isr` is None when the partition has no state znode)."""
    if not assignment.is_being_reassigned:
        return True
    return isr is not None and set(assignment.target_replicas) <= set(isr)
