"""`testbed reassign verify`: where the reassignment of each partition of a reassignment
file stands, read from `/admin/reassign_partitions` and the topic znodes, as Kafka 2.x's
`kafka-reassign-partitions.sh --verify --zookeeper` reports it.

`reassignment_status` decides one partition as a pure function; `verify` reads ZooKeeper;
`wait_for_reassignment` polls until nothing is in progress or time is up. Everything
blocks the calling thread (the CLI's main thread).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from domain import TopicPartition
from zkdata.client import KafkaZkClient
from zkdata.model import PartitionReassignment, ReplicaAssignment
from zkdata.reassignment import ReassignmentZk

#: Seconds between two readings while `wait_for_reassignment` polls.
POLL_INTERVAL_S = 0.5


class ReassignmentStatus(enum.Enum):
    """Where the reassignment of one partition stands."""

    COMPLETE = "complete"
    IN_PROGRESS = "in progress"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    """One partition's status and, when it failed, why."""

    topic_partition: TopicPartition
    status: ReassignmentStatus
    reason: str = ""


def reassignment_status(
    request: PartitionReassignment, requested: bool, current: ReplicaAssignment | None
) -> PartitionStatus:
    """Decide one partition: in progress while it is listed in `/admin/reassign_partitions`
    (`requested`) or its assignment (`current`, None when it does not exist) has replicas
    being added or removed; complete when its replicas are the target, in order; otherwise
    failed (e.g. the controller rejected the request and removed it)."""
    tp, target = request.topic_partition, request.replicas
    if requested:
        return PartitionStatus(tp, ReassignmentStatus.IN_PROGRESS)
    if current is None:
        return PartitionStatus(tp, ReassignmentStatus.FAILED, "the partition does not exist")
    if current.is_being_reassigned:
        return PartitionStatus(tp, ReassignmentStatus.IN_PROGRESS)
    if current.replicas == target:
        return PartitionStatus(tp, ReassignmentStatus.COMPLETE)
    return PartitionStatus(
        tp,
        ReassignmentStatus.FAILED,
        f"its replicas are {_ids(current.replicas)}, not the target {_ids(target)}",
    )


def verify(
    zk: KafkaZkClient, requests: Sequence[PartitionReassignment]
) -> tuple[PartitionStatus, ...]:
    """The status of each of `requests`, in order, from `/admin/reassign_partitions` and
    the topic znodes. A topic znode that does not decode counts as missing."""
    pending = ReassignmentZk(zk).get_reassignments() or ()
    requested = {r.topic_partition for r in pending}
    reads = zk.get_topic_assignments(sorted({r.topic_partition.topic for r in requests}))
    return tuple(
        reassignment_status(
            r,
            r.topic_partition in requested,
            reads.found[r.topic_partition.topic].partitions.get(r.topic_partition.partition)
            if r.topic_partition.topic in reads.found
            else None,
        )
        for r in requests
    )


def wait_for_reassignment(
    check: Callable[[], tuple[PartitionStatus, ...]],
    wait_s: float,
    on_progress: Callable[[int, int], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[PartitionStatus, ...]:
    """Call `check` every `POLL_INTERVAL_S` until no partition is in progress or `wait_s`
    seconds have passed; returns the last statuses. `on_progress(complete, total)` is called
    with the first reading and whenever the number of complete partitions changes."""
    deadline = clock() + wait_s
    reported: int | None = None
    while True:
        statuses = check()
        complete = sum(s.status is ReassignmentStatus.COMPLETE for s in statuses)
        if complete != reported:
            on_progress(complete, len(statuses))
            reported = complete
        remaining = deadline - clock()
        if remaining <= 0 or all(s.status is not ReassignmentStatus.IN_PROGRESS for s in statuses):
            return statuses
        sleep(min(POLL_INTERVAL_S, remaining))


def render_verification(statuses: Iterable[PartitionStatus]) -> str:
    """One line per partition."""
    lines = []
    for s in statuses:
        if s.status is ReassignmentStatus.COMPLETE:
            lines.append(f"Reassignment of partition {s.topic_partition} is complete.")
        elif s.status is ReassignmentStatus.IN_PROGRESS:
            lines.append(f"Reassignment of partition {s.topic_partition} is still in progress.")
        else:
            lines.append(f"Reassignment of partition {s.topic_partition} failed: {s.reason}.")
    return "\n".join(lines)


def verification_exit_code(statuses: Iterable[PartitionStatus]) -> int:
    """0 when every partition is complete, 1 when any failed, otherwise 3 (some are still
    in progress)."""
    seen = {s.status for s in statuses}
    if ReassignmentStatus.FAILED in seen:
        return 1
    return 3 if ReassignmentStatus.IN_PROGRESS in seen else 0


def _ids(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"
