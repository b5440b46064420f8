"""`IsrMaintenance`: the two threads that keep a broker's ISRs, as Kafka 2.x's
`ReplicaManager` runs them. `isr-expiration` (every `replica.lag.time.max.ms` / 2) shrinks
the ISR of each led partition whose followers lag, re-checks the produce requests parked
on it and flushes every hosted log; `isr-change-propagation` batches the ISR changes
partitions record into one `/isr_change_notification` once they settle (no change for
the blackout, 5 s) or are overdue (60 s), retrying a failed write at its next check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from broker_node.isr_writes import IsrStore
from broker_node.partition import Partition
from broker_node.purgatory import ProducePurgatory
from domain import TopicPartition
from eventlog import EventLog, IsrChangePropagated, IsrUpdateFailed


class IsrTiming(Protocol):
    """The replication settings the ISR threads follow (`ReplicationConfig`), in ms."""

    @property
    def lag_time_max_ms(self) -> int:
        """A follower this long behind leaves the ISR."""
        ...

    @property
    def isr_change_check_ms(self) -> int:
        """How often pending ISR changes are looked at."""
        ...

    @property
    def isr_change_blackout_ms(self) -> int:
        """Pending changes are announced once none came for this long."""
        ...

    @property
    def isr_change_max_delay_ms(self) -> int:
        """Pending changes are announced at least this often."""
        ...


class IsrChangeSink(IsrStore, Protocol):
    """`IsrStore` plus the notification the controller reads (`KafkaZkClient`)."""

    def create_isr_change_notification(self, partitions: Iterable[TopicPartition]) -> str:
        """Record partitions whose ISR changed."""
        ...


class IsrMaintenance:
    """The ISR threads of one broker and the ISR changes waiting to be announced."""

    def __init__(
        self,
        broker_id: int,
        config: IsrTiming,
        store: IsrChangeSink,
        event_log: EventLog,
        partitions: Callable[[], list[Partition]],
        purgatory: ProducePurgatory,
    ) -> None:
        self._broker_id = broker_id
        self._config = config
        self._store = store
        self._events = event_log
        self._partitions = partitions
        self._purgatory = purgatory
        self._lock = threading.Lock()
        self._isr_changes: set[TopicPartition] = set()
        self._last_isr_change_ms = 0.0
        self._last_propagation_ms = time.monotonic() * 1000
        self._stopped = threading.Event()
        self._threads = [
            threading.Thread(target=self._isr_expiration, name="isr-expiration", daemon=True),
            threading.Thread(
                target=self._isr_change_propagation, name="isr-change-propagation", daemon=True
            ),
        ]

    def start(self) -> None:
        """Start both threads."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Ask both threads to stop after their current round."""
        self._stopped.set()

    def join(self) -> None:
        """Wait (up to 5 s each) for the threads that were started to end."""
        for thread in self._threads:
            if thread.is_alive():
                thread.join(5)

    def record_change(self, tp: TopicPartition) -> None:
        """A partition's ISR changed (on the thread that changed it)."""
        with self._lock:
            self._isr_changes.add(tp)
            self._last_isr_change_ms = time.monotonic() * 1000

    def _isr_expiration(self) -> None:
        interval = max(0.05, self._config.lag_time_max_ms / 2000)
        while not self._stopped.wait(interval):
            self.expire_isr_round()

    def expire_isr_round(self) -> None:
        """One round of the `isr-expiration` thread: shrink the ISRs of led partitions whose
        followers lag, re-check the produce requests parked on any partition, and write the
        checkpoints that changed. A partition this broker follows, with nothing new to
        checkpoint, costs a few comparisons and no lock (the shrink check is only for the
        partitions it leads, and `PartitionLog.flush` returns before locking)."""
        parked = self._purgatory.parked_partitions()
        broker_id = self._broker_id
        for partition in self._partitions():
            try:
                if partition.leader == broker_id:  # re-checked under the partition's lock
                    partition.maybe_shrink_isr()
                if parked and partition.tp in parked:
                    self._purgatory.check(partition.tp, partition)
                partition.log.flush()  # checkpoints the high watermark and epochs
            except Exception as exc:  # ZooKeeper trouble: try again next round
                self._events.emit(
                    IsrUpdateFailed(
                        topic=partition.tp.topic,
                        partition=partition.tp.partition,
                        reason=f"{type(exc).__name__}: {exc}",
                    )
                )

    def _isr_change_propagation(self) -> None:
        while not self._stopped.wait(self._config.isr_change_check_ms / 1000):
            self.maybe_propagate_isr_changes()

    def maybe_propagate_isr_changes(self) -> None:
        """Write one notification for the pending ISR changes once they have settled."""
        now = time.monotonic() * 1000
        with self._lock:
            if not self._isr_changes:
                return
            quiet = now - self._last_isr_change_ms > self._config.isr_change_blackout_ms
            overdue = now - self._last_propagation_ms > self._config.isr_change_max_delay_ms
            if not (quiet or overdue):
                return
            changes = sorted(self._isr_changes)
            self._isr_changes.clear()
        try:
            node = self._store.create_isr_change_notification(changes)
        except Exception:
            with self._lock:
                self._isr_changes.update(changes)  # try again next round
            return
        with self._lock:
            self._last_propagation_ms = now
        self._events.emit(IsrChangePropagated(notification=node, partitions=len(changes)))
