"""What a broker writes to its event log about the control requests it answers:
`request_accepted` for an obeyed LeaderAndIsr, UpdateMetadata or StopReplica,
`request_rejected` for one refused by the fencing rules, one `partition_fenced` per
request for the partitions it could not apply, `replicas_deleted` for the replicas a
StopReplica deleted, and `live_brokers_changed` when an UpdateMetadata changed the
brokers the metadata lists as live. Each of the first three
names the broker epoch the fencing check used, so the invariants judge a request against
the registration it was checked with. Called by `broker_node.control_requests` on gRPC
worker threads, under its lock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from domain import TopicPartition
from eventlog import (
    EventLog,
    LiveBrokersChanged,
    PartitionFenced,
    ReplicasDeleted,
    RequestAccepted,
    RequestRejected,
)
from rpc import messages as m
from rpc.errors import Errors

#: How many fenced partitions a `partition_fenced` event lists by name.
FENCED_SAMPLE = 10

#: A partition a request could not apply: its error, the request's leader epoch for it
#: and the one this broker holds (None: not hosted).
Fenced = tuple[TopicPartition, Errors, int, int | None]


def rejected(
    events: EventLog,
    api: str,
    header: m.ControlHeader,
    error: Errors,
    broker_epoch: int,
    highest_controller_epoch: int,
) -> Errors:
    """Write `request_rejected` for a request refused as a whole; returns `error`."""
    events.emit(
        RequestRejected(
            api=api,
            error=error.name,
            error_code=int(error),
            controller_id=header.controller_id,
            controller_epoch=header.controller_epoch,
            request_broker_epoch=header.broker_epoch,
            broker_epoch=broker_epoch,
            highest_controller_epoch=highest_controller_epoch,
        ),
    )
    return error


def accepted(
    events: EventLog,
    api: str,
    header: m.ControlHeader,
    broker_epoch: int,
    results: tuple[m.PartitionError, ...],
    partitions: int | None = None,
) -> None:
    """Write `request_accepted`: how many partitions the request named (`partitions`, or
    one per result) and how many were answered with an error."""
    events.emit(
        RequestAccepted(
            api=api,
            controller_id=header.controller_id,
            controller_epoch=header.controller_epoch,
            request_broker_epoch=header.broker_epoch,
            broker_epoch=broker_epoch,
            partitions=len(results) if partitions is None else partitions,
            partition_errors=sum(1 for r in results if r.error is not Errors.NONE),
        ),
    )


def live_brokers(
    events: EventLog, header: m.ControlHeader, before: Collection[int], after: Collection[int]
) -> None:
    """Write `live_brokers_changed` if an accepted UpdateMetadata listed other live brokers
    (`after`) than the metadata held (`before`); nothing when they are the same."""
    if set(before) == set(after):
        return
    events.emit(
        LiveBrokersChanged(
            live_brokers=sorted(after),
            added=sorted(set(after) - set(before)),
            removed=sorted(set(before) - set(after)),
            controller_id=header.controller_id,
            controller_epoch=header.controller_epoch,
        ),
    )


def fenced(events: EventLog, api: str, header: m.ControlHeader, found: Sequence[Fenced]) -> None:
    """One `partition_fenced` per request for the partitions it could not apply (a
    failover resends every partition at its current epoch, so these come in thousands);
    nothing when there are none."""
    if not found:
        return
    counts = Counter(error for _, error, _, _ in found)
    events.emit(
        PartitionFenced(
            api=api,
            controller_id=header.controller_id,
            controller_epoch=header.controller_epoch,
            count=len(found),
            errors={error.name: n for error, n in counts.items()},
            sample=[
                {
                    "topic": tp.topic,
                    "partition": tp.partition,
                    "error": error.name,
                    "leader_epoch": epoch,
                    "current_leader_epoch": current,
                }
                for tp, error, epoch, current in found[:FENCED_SAMPLE]
            ],
        ),
    )


def deleted(events: EventLog, partitions: Sequence[TopicPartition]) -> None:
    """Write `replicas_deleted` for the replicas a StopReplica deleted; nothing when none."""
    if partitions:
        events.emit(
            ReplicasDeleted(
                topics=[tp.topic for tp in partitions],
                partitions=[tp.partition for tp in partitions],
            )
        )
