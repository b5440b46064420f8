"""`ControllerMetrics`: the controller's figures, named after Kafka's metrics.

The event thread publishes the gauges after every event (as Kafka's `updateMetrics`,
including the topic-deletion gauges of KIP-503) and records timings as they happen; a
metrics exporter reads `snapshot()` from its own thread. One lock guards the figures;
nothing here does I/O.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from controller.context import ControllerContext, PartitionReplica
from controller.states import ControllerState, ReplicaState


@dataclass
class TimerStat:
    """Count, total and maximum of a timed operation, in milliseconds."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0

    def record(self, seconds: float) -> None:
        """Add one observation."""
        ms = seconds * 1000
        self.count += 1
        self.total_ms += ms
        self.max_ms = max(self.max_ms, ms)


@dataclass(frozen=True)
class MetricsSnapshot:
    """A consistent copy of every figure."""

    active_controller_count: int = 0
    offline_partitions_count: int = 0
    preferred_replica_imbalance_count: int = 0
    global_topic_count: int = 0
    global_partition_count: int = 0
    event_queue_time: TimerStat = field(default_factory=TimerStat)
    leader_election: TimerStat = field(default_factory=TimerStat)
    unclean_leader_elections: int = 0
    topics_to_delete_count: int = 0
    replicas_to_delete_count: int = 0
    topics_ineligible_to_delete_count: int = 0
    replicas_ineligible_to_delete_count: int = 0


@dataclass(frozen=True)
class DeletionFigures:
    """KIP-503's gauges: topics queued for deletion, their replicas not yet deleted, the
    queued topics whose deletion is halted, and the queued topics' replicas in
    ReplicaDeletionIneligible."""

    topics: int = 0
    replicas: int = 0
    ineligible_topics: int = 0
    ineligible_replicas: int = 0


def deletion_figures(
    context: ControllerContext, ineligible_topics: Collection[str]
) -> DeletionFigures:
    """The deletion gauges as Kafka 2.8's `updateMetrics` counts them: a queued topic's
    replica counts until it is ReplicaDeletionSuccessful."""
    topics = context.topics_queued_for_deletion()
    replicas = ineligible = 0
    for topic in topics:
        for tp in context.partitions_of(topic):
            for broker_id in context.replicas(tp):
                state = context.replica_state(PartitionReplica(tp, broker_id))
                replicas += state is not ReplicaState.DELETION_SUCCESSFUL
                ineligible += state is ReplicaState.DELETION_INELIGIBLE
    return DeletionFigures(len(topics), replicas, len(ineligible_topics), ineligible)


class ControllerMetrics:
    """Figures written by the controller event thread, read by any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gauges = MetricsSnapshot()
        self._queue_time = TimerStat()
        self._election = TimerStat()
        self._unclean = 0

    def record_queue_time(self, seconds: float) -> None:
        """An event waited `seconds` in the queue (EventQueueTimeMs)."""
        with self._lock:
            self._queue_time.record(seconds)

    def record_election(self, seconds: float) -> None:
        """A BrokerChange event took `seconds` (LeaderElectionRateAndTimeMs)."""
        with self._lock:
            self._election.record(seconds)

    def record_event(self, state: ControllerState, seconds: float) -> None:
        """An event of `state` took `seconds` on the event thread. As Kafka's
        `ControllerStats`, LeaderElectionRateAndTimeMs is the timer of the BrokerChange
        state: every BrokerChange event counts, with or without elections, active or
        not; elections of other events do not."""
        if state is ControllerState.BROKER_CHANGE:
            self.record_election(seconds)

    def record_unclean(self, count: int) -> None:
        """`count` leaders were elected from outside the ISR (UncleanLeaderElectionsPerSec)."""
        with self._lock:
            self._unclean += count

    def publish(
        self, active: bool, context: ControllerContext, ineligible_topics: Collection[str] = ()
    ) -> None:
        """Recompute the gauges from the context and the topics whose deletion is halted
        (event thread, after each event); all zero while not active, as Kafka resets them
        on resignation."""
        deletion = deletion_figures(context, ineligible_topics) if active else DeletionFigures()
        gauges = MetricsSnapshot(
            active_controller_count=1 if active else 0,
            offline_partitions_count=context.offline_partition_count() if active else 0,
            preferred_replica_imbalance_count=(
                context.preferred_replica_imbalance_count() if active else 0
            ),
            global_topic_count=len(context.all_topics()) if active else 0,
            global_partition_count=context.partitions_with_leaders_count() if active else 0,
            topics_to_delete_count=deletion.topics,
            replicas_to_delete_count=deletion.replicas,
            topics_ineligible_to_delete_count=deletion.ineligible_topics,
            replicas_ineligible_to_delete_count=deletion.ineligible_replicas,
        )
        with self._lock:
            self._gauges = gauges

    def snapshot(self) -> MetricsSnapshot:
        """Every figure, copied under the lock."""
        with self._lock:
            return replace(
                self._gauges,
                event_queue_time=replace(self._queue_time),
                leader_election=replace(self._election),
                unclean_leader_elections=self._unclean,
            )
