"""`TopicDeletionManager`: deletes the topics requested under `/admin/delete_topics`, as
Kafka 2.8's TopicDeletionManager does. Everything here runs on `controller-event-thread`;
a broker's answer to a StopReplica that deleted partitions arrives as the
`TopicDeletionStopReplicaResponseReceived` the request batch's response callback enqueued
(`controller.request_batch`, `controller.control_responses`).

A request queues a known topic (unknown ones are removed); a queued topic is deleted once
it is eligible: StopReplica to its replicas, then one fenced write removes its znodes when
every replica answered. The steps, eligibility and failure handling are tabled in
docs/controller.md (Topic deletion).

Failover reads `/admin/delete_topics` (`init`, before the state machines start: topics
with a replica on a dead broker or a reassignment in flight start ineligible) and
resumes after the state machines have started (`try_topic_deletion`). A failed epoch
check raises `ControllerMovedError` from the write, before the context is touched.

Its events are the `TopicDeletion*` types of `eventlog.events.topics` (docs/events.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence, Set
from typing import Protocol

from kazoo.exceptions import NoNodeError

from controller.context import ControllerContext, PartitionReplica
from controller.control_responses import StopReplicaResult
from controller.deletion_decisions import (
    REASON_DELETION_FAILURE,
    REASON_OFFLINE_REPLICAS,
    REASON_REASSIGNMENT,
    RequestTriage,
    TopicDeletionView,
    ineligible_events,
    outdated_answer,
    plan_deletions,
    triage_requests,
)
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from eventlog import (
    EventLog,
    TopicDeletionCompleted,
    TopicDeletionFailed,
    TopicDeletionRequested,
    TopicDeletionStarted,
)
from rpc.errors import Errors
from zkdata.fenced_writes import OpResult


class DeletionZk(Protocol):
    """The ZooKeeper operations of topic deletion (`zkdata.deletion.TopicDeletionZk`)."""

    def delete_topic_deletions(
        self, topics: Iterable[str], epoch_zk_version: int
    ) -> dict[str, OpResult]:
        """Remove deletion requests, fenced."""

    def delete_topic(self, topic: str, epoch_zk_version: int) -> dict[str, OpResult]:
        """Remove a deleted topic's znodes, fenced; one result per path."""


# -- the manager ----------------------------------------------------------------------------


class TopicDeletionManager:
    """Topic deletion for the active controller; lives as long as its term. The queue and
    the topics whose deletion started live in the context (OfflinePartitionsCount needs
    the latter); the halted topics are kept here and go with the active controller on
    resignation."""

    def __init__(
        self,
        context: ControllerContext,
        zk: DeletionZk,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        batch: RequestBatch,
        event_log: EventLog,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._partitions = partitions
        self._replicas = replicas
        self._batch = batch
        self._events = event_log
        self._enabled = enabled
        self._clock = clock
        self._ineligible: set[str] = set()
        self._queued_at: dict[str, float] = {}

    @property
    def enabled(self) -> bool:
        """`delete.topic.enable`."""
        return self._enabled

    def queued_topics(self) -> list[str]:
        """Topics queued for deletion and not deleted yet, sorted."""
        return sorted(t for t in self._ctx.all_topics() if self._queued(t))

    def ineligible_topics(self) -> list[str]:
        """Queued topics whose deletion is halted until something resumes it, sorted."""
        return sorted(t for t in self._ineligible if self._queued(t))

    # -- entry points --------------------------------------------------------------------------

    def init(self, requested: Iterable[str]) -> None:
        """Failover, once the context is loaded and before the state machines start: queue
        the requested topics, halting those with an offline replica or a reassignment in
        flight, and remove the requests to drop."""
        triage = triage_requests(requested, self._ctx.all_topics(), self._enabled)
        self._remove_requests(triage.remove)
        offline = [r for t in self._queue(triage, "failover") for r in self._offline(t)]
        self.mark_ineligible(_topics(offline), REASON_OFFLINE_REPLICAS, offline)

    def try_topic_deletion(self) -> None:
        """Failover, after the state machines started: resume every queued deletion."""
        self.resume_deletions()

    def on_deletion_requests(self, requested: Iterable[str]) -> None:
        """`/admin/delete_topics` changed (Kafka's `processTopicDeletion`)."""
        triage = triage_requests(requested, self._ctx.all_topics(), self._enabled)
        self._remove_requests(triage.remove)
        self._queue(triage, "watch")
        self.resume_deletions()

    def on_stop_replica_response(self, broker_id: int, result: StopReplicaResult) -> None:
        """A broker answered a StopReplica that deleted partitions; `result` lists exactly
        those partitions (`controller.control_responses`). Only replicas still in
        ReplicaDeletionStarted are moved, and none by an answer meant for the broker's
        previous life (`outdated_answer`)."""
        epoch = self._ctx.broker_epoch(broker_id)
        if (outdated := outdated_answer(broker_id, result, epoch, self._ctx.epoch)) is not None:
            if self._enabled:
                self._events.emit(outdated)
            return
        answers = {
            PartitionReplica(tp, broker_id): error for tp, error in result.partition_errors.items()
        }
        started = self._in_states(answers, ReplicaState.DELETION_STARTED)
        if not self._enabled or not started:
            return
        failed = [r for r in started if answers[r] is not Errors.NONE]
        self._replicas.handle_state_changes(
            [r for r in started if answers[r] is Errors.NONE], ReplicaState.DELETION_SUCCESSFUL
        )
        errors = sorted({answers[r].name for r in failed})
        self._fail(failed, REASON_DELETION_FAILURE, errors)
        self.resume_deletions()

    def on_replicas_offline(self, replicas: Iterable[PartitionReplica]) -> None:
        """Replicas went offline with their brokers (Kafka's `failReplicaDeletion` from
        `onReplicasBecomeOffline`): those of queued topics not deleted yet fail, and their
        topics wait for the brokers to return."""
        doomed = [
            r
            for r in replicas
            if self._queued(r.topic_partition.topic)
            and self._ctx.replica_state(r) is not ReplicaState.DELETION_SUCCESSFUL
        ]
        if self._enabled and doomed:
            self._fail(doomed, REASON_OFFLINE_REPLICAS, [])
            self.resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str]) -> None:
        """What halted these topics is over (a broker with their replicas started, a
        reassignment completed): clear their mark and resume."""
        resumed = {t for t in topics if self._queued(t)}
        if self._enabled and resumed:
            self._ineligible -= resumed
            self.resume_deletions()

    def mark_ineligible(
        self,
        topics: Iterable[str],
        reason: str,
        replicas: Iterable[PartitionReplica] = (),
        errors: Sequence[str] = (),
    ) -> None:
        """Halt the deletion of the queued `topics` until it is resumed; emits
        `topic_deletion_ineligible` for each topic newly halted."""
        halted = sorted({t for t in topics if self._queued(t)} - self._ineligible)
        self._ineligible.update(halted)
        for event in ineligible_events(halted, reason, replicas, errors, self._ctx.epoch):
            self._events.emit(event)

    def resume_deletions(self) -> None:
        """Kafka's `resumeDeletions`: tear down the topics whose replicas are all deleted,
        and start (or restart) the eligible ones."""
        if not self._enabled:
            return
        queued = self.queued_topics()
        self._forget_all_but(set(queued))
        plan = plan_deletions(
            {
                topic: TopicDeletionView(
                    tuple(self._ctx.replica_state(r) for r in self._replicas_of(topic)),
                    self._being_reassigned(topic),
                    topic in self._ineligible,
                )
                for topic in queued
            }
        )
        for topic in plan.complete:
            self._complete_delete_topic(topic)
        failed = [r for t in plan.retry for r in self._replicas_of(t)]
        self._replicas.handle_state_changes(
            self._in_states(failed, ReplicaState.DELETION_INELIGIBLE), ReplicaState.OFFLINE
        )
        if plan.start:
            self._on_topic_deletion(plan.start)

    # -- steps ---------------------------------------------------------------------------------

    def _on_topic_deletion(self, topics: Sequence[str]) -> None:
        """Partitions of topics seen for the first time -> Offline -> NonExistent; tell
        every live broker the topics are going (leader -2); delete the replicas."""
        unseen = [t for t in topics if not self._ctx.is_topic_deletion_in_progress(t)]
        partitions = [tp for t in unseen for tp in self._ctx.partitions_of(t)]
        self._partitions.handle_state_changes(
            [tp for tp in partitions if self._ctx.partition_state(tp) in _OFFLINE_FROM],
            PartitionState.OFFLINE,
        )
        self._partitions.handle_state_changes(
            [tp for tp in partitions if self._ctx.partition_state(tp) is PartitionState.OFFLINE],
            PartitionState.NON_EXISTENT,
        )
        self._ctx.begin_topic_deletion(unseen)  # after the moves, as Kafka does
        self._batch.new_batch()
        self._batch.add_update_metadata(
            self._ctx.live_or_shutting_down_broker_ids(),
            [tp for t in topics for tp in self._ctx.partitions_of(t)],
        )
        self._batch.send()
        self._on_partition_deletion(topics, retried=set(topics) - set(unseen))

    def _on_partition_deletion(self, topics: Sequence[str], retried: Set[str]) -> None:
        """Offline replicas -> ReplicaDeletionIneligible (their topics halted); the others
        not deleted yet -> Offline -> ReplicaDeletionStarted (StopReplica with delete)."""
        dead = [r for t in topics for r in self._offline(t)]
        alive = [r for t in topics for r in self._pending(t) if self._online(r)]
        self._replicas.handle_state_changes(
            self._in_states(dead, *ReplicaState.DELETION_INELIGIBLE.valid_previous),
            ReplicaState.DELETION_INELIGIBLE,
        )
        self._replicas.handle_state_changes(alive, ReplicaState.OFFLINE)
        self._replicas.handle_state_changes(
            self._in_states(alive, ReplicaState.OFFLINE), ReplicaState.DELETION_STARTED
        )
        started = self._in_states(alive, ReplicaState.DELETION_STARTED)
        for topic in topics:
            self._events.emit(
                TopicDeletionStarted(
                    topic=topic,
                    partitions=len(self._ctx.partitions_of(topic)),
                    replicas=sum(1 for r in started if r.topic_partition.topic == topic),
                    offline_replicas=sum(1 for r in dead if r.topic_partition.topic == topic),
                    retry=topic in retried,
                    controller_epoch=self._ctx.epoch,
                ),
            )
        self.mark_ineligible(_topics(dead), REASON_OFFLINE_REPLICAS, dead)

    def _complete_delete_topic(self, topic: str) -> None:
        """Every replica is deleted: remove the topic's znodes (one fenced write), then
        forget it. A znode that could not be removed keeps the topic queued."""
        results = self._zk.delete_topic(topic, self._ctx.epoch_zk_version)
        failed = {
            path: type(outcome).__name__
            for path, outcome in results.items()
            if isinstance(outcome, Exception) and not isinstance(outcome, NoNodeError)
        }
        if failed:
            self._events.emit(
                TopicDeletionFailed(topic=topic, failed=failed, controller_epoch=self._ctx.epoch),
            )
            return
        partitions = len(self._ctx.partitions_of(topic))
        self._replicas.handle_state_changes(
            self._in_states(self._replicas_of(topic), ReplicaState.DELETION_SUCCESSFUL),
            ReplicaState.NON_EXISTENT,
        )
        self._ctx.remove_topic(topic)
        queued_at = self._queued_at.pop(topic, None)
        took = None if queued_at is None else round((self._clock() - queued_at) * 1000)
        self._forget_all_but(set(self.queued_topics()))
        self._events.emit(
            TopicDeletionCompleted(
                topic=topic,
                partitions=partitions,
                duration_ms=took,
                controller_epoch=self._ctx.epoch,
            ),
        )

    # -- helpers ---------------------------------------------------------------------------------

    def _queue(self, triage: RequestTriage, source: str) -> list[str]:
        """Queue the triaged topics (halting those being reassigned); returns the topics
        queued now."""
        new = [t for t in triage.queue if not self._queued(t)]
        self._ctx.queue_topic_deletion(new)
        now = self._clock()
        for topic in new:
            self._queued_at.setdefault(topic, now)
        if new or triage.remove:
            self._events.emit(
                TopicDeletionRequested(
                    topics=new,
                    removed=list(triage.remove),
                    unknown=list(triage.unknown),
                    enabled=self._enabled,
                    source=source,
                    controller_epoch=self._ctx.epoch,
                ),
            )
        self.mark_ineligible([t for t in new if self._being_reassigned(t)], REASON_REASSIGNMENT)
        return new

    def _remove_requests(self, topics: Sequence[str]) -> None:
        if topics:
            self._zk.delete_topic_deletions(topics, self._ctx.epoch_zk_version)

    def _fail(
        self, replicas: Sequence[PartitionReplica], reason: str, errors: Sequence[str]
    ) -> None:
        """Replicas whose deletion failed -> ReplicaDeletionIneligible (where that is a
        valid move), and their topics halted."""
        if replicas:
            self._replicas.handle_state_changes(
                self._in_states(replicas, *ReplicaState.DELETION_INELIGIBLE.valid_previous),
                ReplicaState.DELETION_INELIGIBLE,
            )
            self.mark_ineligible(_topics(replicas), reason, replicas, errors)

    def _queued(self, topic: str) -> bool:
        return self._ctx.is_topic_queued_for_deletion(topic)

    def _replicas_of(self, topic: str) -> list[PartitionReplica]:
        return self._ctx.replicas_for_partitions(self._ctx.partitions_of(topic))

    def _offline(self, topic: str) -> list[PartitionReplica]:
        """A topic's replicas not deleted yet that are offline (`isReplicaOnline(replica,
        partition)`): on a dead (or shutting-down) broker, or in a failed log directory."""
        return [r for r in self._pending(topic) if not self._online(r)]

    def _pending(self, topic: str) -> list[PartitionReplica]:
        """A topic's replicas not deleted yet."""
        states = self._ctx.replica_state
        return [
            r for r in self._replicas_of(topic) if states(r) is not ReplicaState.DELETION_SUCCESSFUL
        ]

    def _online(self, replica: PartitionReplica) -> bool:
        return self._ctx.is_replica_online(replica.replica, tp=replica.topic_partition)

    def _in_states(
        self, replicas: Iterable[PartitionReplica], *states: ReplicaState
    ) -> list[PartitionReplica]:
        """The `replicas` of queued topics that are in one of `states`, in order."""
        return [
            r
            for r in replicas
            if self._queued(r.topic_partition.topic) and self._ctx.replica_state(r) in states
        ]

    def _being_reassigned(self, topic: str) -> bool:
        return any(
            self._ctx.assignment(tp).is_being_reassigned for tp in self._ctx.partitions_of(topic)
        )

    def _forget_all_but(self, queued: Set[str]) -> None:
        """Drop what is kept about topics no longer queued (deleted, or forgotten by a
        TopicChange)."""
        self._ineligible &= queued
        for topic in set(self._queued_at) - queued:
            del self._queued_at[topic]


#: The partition states a partition of a deleted topic can go Offline from.
_OFFLINE_FROM = PartitionState.OFFLINE.valid_previous


def _topics(replicas: Iterable[PartitionReplica]) -> set[str]:
    return {r.topic_partition.topic for r in replicas}
