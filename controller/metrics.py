"""`ControllerMetrics`: the controller's figures, named after Kafka's metrics.

The event thread publishes the gauges after every event (as Kafka's `updateMetrics`) and
records timings as they happen; a metrics exporter reads `snapshot()` from its own thread.
One lock guards the figures; nothing here does I/O.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from controller.context import ControllerContext


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
        """A round of leader elections took `seconds` (LeaderElectionRateAndTimeMs)."""
        with self._lock:
            self._election.record(seconds)

    def record_unclean(self, count: int) -> None:
        """`count` leaders were elected from outside the ISR (UncleanLeaderElectionsPerSec)."""
        with self._lock:
            self._unclean += count

    def publish(self, active: bool, context: ControllerContext) -> None:
        """Recompute the gauges from the context (event thread, after each event)."""
        gauges = MetricsSnapshot(
            active_controller_count=1 if active else 0,
            offline_partitions_count=context.offline_partition_count() if active else 0,
            preferred_replica_imbalance_count=(
                context.preferred_replica_imbalance_count() if active else 0
            ),
            global_topic_count=len(context.all_topics()) if active else 0,
            global_partition_count=context.partition_count() if active else 0,
        )
        with self._lock:
            self._gauges = gauges

    def snapshot(self) -> MetricsSnapshot:
        """Every figure, copied under the lock."""
        with self._lock:
            g = self._gauges
            return MetricsSnapshot(
                g.active_controller_count,
                g.offline_partitions_count,
                g.preferred_replica_imbalance_count,
                g.global_topic_count,
                g.global_partition_count,
                TimerStat(
                    self._queue_time.count, self._queue_time.total_ms, self._queue_time.max_ms
                ),
                TimerStat(self._election.count, self._election.total_ms, self._election.max_ms),
                self._unclean,
            )
