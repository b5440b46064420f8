"""Topic deletion's decisions, as Kafka 2.8's TopicDeletionManager makes them: which
requests to queue, what to do next with each queued topic, and which StopReplica answers
do not count (how an answer counts for the deleted partitions is
`controller.control_responses`). Pure values and functions; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from controller.context import PartitionReplica
from controller.control_responses import StopReplicaResult
from controller.states import ReplicaState
from domain import NO_EPOCH
from eventlog import TopicDeletionAnswerOutdated, TopicDeletionIneligible

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
    restart deletion, and the ones whose failed replicas go back to Offline (first, for
    those also started)."""

    complete: tuple[str, ...] = ()
    start: tuple[str, ...] = ()
    retry: tuple[str, ...] = ()


def plan_deletions(topics: Mapping[str, TopicDeletionView]) -> DeletionPlan:
    """Kafka's `resumeDeletions` decision. A topic whose replicas are all
    ReplicaDeletionSuccessful (or that has none) is complete. One with a replica in
    ReplicaDeletionStarted is in progress and waits. Any other is retried if it has
    ReplicaDeletionIneligible replicas (they go back to Offline, even while the topic is
    halted, as in Kafka) and started unless it is marked ineligible or being reassigned."""
    complete, start, retry = [], [], []
    for topic in sorted(topics):
        view = topics[topic]
        states = view.replica_states
        if all(s is ReplicaState.DELETION_SUCCESSFUL for s in states):
            complete.append(topic)
        elif ReplicaState.DELETION_STARTED not in states:
            if ReplicaState.DELETION_INELIGIBLE in states:
                retry.append(topic)
            if not view.marked_ineligible and not view.being_reassigned:
                start.append(topic)
    return DeletionPlan(tuple(complete), tuple(start), tuple(retry))


def outdated_answer(
    broker_id: int, result: StopReplicaResult, known_epoch: int, controller_epoch: int
) -> TopicDeletionAnswerOutdated | None:
    """The event saying `result` does not count, or None when it does. An answer to a
    request addressed to a broker epoch older than the one the controller knows now
    (`known_epoch`, -1 for a broker not live) was meant for the broker's previous life:
    the controller has since taken that broker's replicas offline and back, and resumed
    the deletion with a round addressed to the new life, whose answer is the one to wait
    for. Kafka 2.8 counts it, and its STALE_BROKER_EPOCH fails the new round's replicas
    and halts the topic until some later broker start (docs/kafka-differences.md)."""
    addressed = result.broker_epoch
    if addressed == NO_EPOCH or known_epoch <= addressed or not result.partition_errors:
        return None
    return TopicDeletionAnswerOutdated(
        broker=broker_id,
        addressed_epoch=addressed,
        broker_epoch=known_epoch,
        topics=sorted({tp.topic for tp in result.partition_errors}),
        partitions=len(result.partition_errors),
        errors=sorted({e.name for e in result.partition_errors.values()} - {"NONE"}),
        controller_epoch=controller_epoch,
    )


def ineligible_events(
    halted: Iterable[str],
    reason: str,
    replicas: Iterable[PartitionReplica],
    errors: Sequence[str],
    controller_epoch: int,
) -> list[TopicDeletionIneligible]:
    """One `topic_deletion_ineligible` per newly halted topic, naming its `replicas`."""
    concerned = sorted(replicas)
    return [
        TopicDeletionIneligible(
            topic=topic,
            reason=reason,
            replicas=[
                [r.topic_partition.partition, r.replica]
                for r in concerned
                if r.topic_partition.topic == topic
            ],
            errors=list(errors),
            controller_epoch=controller_epoch,
        )
        for topic in halted
    ]
