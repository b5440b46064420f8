"""Topic deletion's decisions, as Kafka 2.8's TopicDeletionManager makes them: which
requests to queue, what to do next with each queued topic, and how a StopReplica answer
counts for the deleted partitions. Pure values and functions; any thread (the response
callback runs on a channel sender thread and only hands the narrowed answer on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from controller.channel_manager import ControlResponse, ResponseCallback
from controller.states import ReplicaState
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import TopicPartition

#: Why a topic was marked ineligible (Kafka's reasons).
REASON_OFFLINE_REPLICAS = "offline replicas"
REASON_DELETION_FAILURE = "replica deletion failure"
REASON_REASSIGNMENT = "topic reassignment in progress"


@dataclass(frozen=True, slots=True)
class RequestTriage:
    """What to do with the deletion requests found under `/admin/delete_topics`."""

    queue: tuple[str, ...]
    remove: tuple[str, ...]
    unknown: tuple[str, ...]


def triage_requests(requested: Iterable[str], known: Set[str], enabled: bool) -> RequestTriage:
    """Requests for known topics are queued, those for unknown topics removed; with
    deletion disabled every request is removed. Sorted, duplicates dropped."""
    names = sorted(set(requested))
    unknown = tuple(t for t in names if t not in known)
    if not enabled:
        return RequestTriage((), tuple(names), unknown)
    return RequestTriage(tuple(t for t in names if t in known), unknown, unknown)


@dataclass(frozen=True, slots=True)
class TopicDeletionView:
    """What deciding a queued topic's next step looks at."""

    replica_states: tuple[ReplicaState, ...]
    being_reassigned: bool = False
    marked_ineligible: bool = False


@dataclass(frozen=True, slots=True)
class DeletionPlan:
    """The next step of each queued topic: tear down (every replica deleted), start or
    restart deletion, and, among those, the ones whose failed replicas go back to Offline
    first."""

    complete: tuple[str, ...] = ()
    start: tuple[str, ...] = ()
    retry: tuple[str, ...] = ()


def plan_deletions(topics: Mapping[str, TopicDeletionView]) -> DeletionPlan:
    """Kafka's `resumeDeletions` decision. A topic whose replicas are all
    ReplicaDeletionSuccessful (or that has none) is complete. One with a replica in
    ReplicaDeletionStarted is in progress and waits. Any other is started unless it is
    marked ineligible or being reassigned; a started topic with ReplicaDeletionIneligible
    replicas is also retried."""
    complete, start, retry = [], [], []
    for topic in sorted(topics):
        view = topics[topic]
        states = view.replica_states
        if all(s is ReplicaState.DELETION_SUCCESSFUL for s in states):
            complete.append(topic)
        elif (
            ReplicaState.DELETION_STARTED not in states
            and not view.marked_ineligible
            and not view.being_reassigned
        ):
            start.append(topic)
            if ReplicaState.DELETION_INELIGIBLE in states:
                retry.append(topic)
    return DeletionPlan(tuple(complete), tuple(start), tuple(retry))


def narrow_stop_replica_response(
    response: ControlResponse, deleted: Sequence[TopicPartition]
) -> m.StopReplicaResponse:
    """The answer for exactly the `deleted` partitions, in order: the request-level error
    when there is one, else each partition's error; a partition the broker did not answer
    for counts as UNKNOWN_SERVER_ERROR (so that it is retried rather than waited for)."""
    errors: tuple[m.PartitionError, ...] = getattr(response, "partition_errors", ())
    answered = {e.topic_partition: e.error for e in errors}

    def error_of(tp: TopicPartition) -> Errors:
        if response.error is not Errors.NONE:
            return response.error
        return answered.get(tp, Errors.UNKNOWN_SERVER_ERROR)

    return m.StopReplicaResponse(
        response.error, tuple(m.PartitionError(tp, error_of(tp)) for tp in deleted)
    )


def deletion_response_callback(
    request: m.StopReplicaRequest, on_response: ResponseCallback
) -> ResponseCallback | None:
    """The response callback to attach to `request` (built on the event thread): None when
    it deletes no partition, otherwise one that hands `on_response` the response narrowed
    to the deleted partitions (called on the sender thread). A StopReplica without delete
    (OfflineReplica) thus never counts as a deletion, even when it is answered while the
    replica is already in ReplicaDeletionStarted."""
    deleted = tuple(
        sorted(s.topic_partition for s in request.partition_states if s.delete_partition)
    )
    if not deleted:
        return None

    def narrowed(broker_id: int, response: ControlResponse) -> None:
        on_response(broker_id, narrow_stop_replica_response(response, deleted))

    return narrowed
