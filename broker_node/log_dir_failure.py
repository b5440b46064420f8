"""A failed log directory, as Kafka 2.8 handles it (KIP-112): `LogDirFailureChannel`
hears the first I/O error of the directory, and `LogDirFailureHandler` takes the directory
offline and tells the controller.

Any `OSError` a partition log meets (an append, a read, an fsync, a checkpoint write, a
log that could not be created) reaches `LogDirFailureChannel.report`, on whichever thread
met it, possibly under the log's lock: it only records the directory and wakes the
handler (Kafka's `LogDirFailureChannel.maybeAddOfflineLogDir`). The handler's thread,
`log-dir-failure-handler`, then does what Kafka's `ReplicaManager.handleLogDirFailure`
does: every replica of the directory goes offline (its fetcher stops; Produce, Fetch,
OffsetsForLeaderEpoch, and LeaderAndIsr and StopReplica whatever their leader epoch, answer
KAFKA_STORAGE_ERROR for it), `log_dir_failed` is emitted, and then, by
`LogDirFailureAction`:

- `HALT` (the default): the process stops at once, without closing its ZooKeeper session,
  as Kafka's `LogManager.handleLogDirFailure` halts a broker whose last live log directory
  failed (a testbed broker has one, `--log-dir`); the controller sees the broker go when
  its session expires.
- `NOTIFY`: the broker writes `/log_dir_event_notification/log_dir_event_<seq>` and keeps
  running with the directory offline, as a Kafka broker with other live log directories
  does; the controller (`controller.log_dir_events`) moves the leaderships away.

A directory stays offline until the broker restarts.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from domain import TopicPartition
from eventlog import EventLog, LogDirFailed

#: Seconds between attempts to write the notification while ZooKeeper refuses it.
NOTIFY_RETRY_S = 1.0


class LogDirFailureAction(enum.Enum):
    """What a broker does once its log directory is offline (`--on-log-dir-failure`)."""

    HALT = "halt"
    NOTIFY = "notify"


class LogDirEventSink(Protocol):
    """Where the notification goes (`KafkaZkClient`)."""

    def propagate_log_dir_event(self, broker_id: int) -> str:
        """Write `/log_dir_event_notification/log_dir_event_<seq>` for `broker_id`."""
        ...


class OfflineableReplicas(Protocol):
    """The replicas of the directory (`ReplicaManager`)."""

    def take_log_dir_offline(self) -> list[TopicPartition]:
        """Take every replica offline; returns them (none when already offline)."""
        ...


class LogDirFailureChannel:
    """The failed directory and its first error (thread-safe; `report` never blocks)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._failed = threading.Event()
        self._reason: str | None = None
        self._lock = threading.Lock()

    def report(self, error: BaseException) -> None:
        """An I/O error in the directory (any thread); only the first one is kept."""
        with self._lock:
            if self._reason is None:
                self._reason = f"{type(error).__name__}: {error}"
        self._failed.set()

    @property
    def offline(self) -> bool:
        """Whether the directory failed."""
        return self._failed.is_set()

    def wait(self, timeout_s: float) -> str | None:
        """The first error once the directory failed, None if it did not within
        `timeout_s`."""
        if not self._failed.wait(timeout_s):
            return None
        with self._lock:
            return self._reason


class LogDirFailureHandler:
    """The `log-dir-failure-handler` thread of one broker."""

    def __init__(
        self,
        broker_id: int,
        channel: LogDirFailureChannel,
        replicas: OfflineableReplicas,
        sink: LogDirEventSink,
        event_log: EventLog,
        action: LogDirFailureAction,
        halt: Callable[[], None],
        take_offline: Callable[[Sequence[TopicPartition]], None] = lambda _: None,
    ) -> None:
        """`take_offline`: tell the control request handler which replicas went offline,
        so that LeaderAndIsr and StopReplica answer KAFKA_STORAGE_ERROR for them whatever
        their epoch, as Kafka checks `HostedPartition.Offline` first."""
        self._broker_id = broker_id
        self._channel = channel
        self._replicas = replicas
        self._sink = sink
        self._events = event_log
        self._action = action
        self._halt = halt
        self._take_offline = take_offline
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="log-dir-failure-handler", daemon=True
        )

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        """Stop the thread (an unwritten notification is given up); `wait`: join it."""
        self._stopped.set()
        if wait and self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stopped.is_set():
            reason = self._channel.wait(0.2)
            if reason is not None:
                self.handle(reason)
                return

    def handle(self, reason: str) -> None:
        """Take the directory offline, record it, then halt or notify the controller."""
        partitions = self._replicas.take_log_dir_offline()
        self._take_offline(partitions)
        self._events.emit(
            LogDirFailed(
                log_dir=str(self._channel.log_dir),
                partitions=[f"{tp.topic}-{tp.partition}" for tp in partitions],
                reason=reason,
                action=self._action.value,
            )
        )
        if self._action is LogDirFailureAction.HALT:
            self._halt()
            return
        while not self._stopped.is_set():
            try:
                self._sink.propagate_log_dir_event(self._broker_id)
                return
            except Exception:  # ZooKeeper unreachable: the controller must still hear it
                self._stopped.wait(NOTIFY_RETRY_S)
