"""Test doubles for the broker's data plane, shipped beside what they replace (STYLE rule 13).

- `FakeIsrStore` is the `IsrChangeSink` (and so the `IsrStore`) a `Partition` or a
  `ReplicaManager` writes through: partition state znodes in a dict with their zkVersions,
  the answers `KafkaZkClient` gives (a conditional write returns the new zkVersion, or None
  on BADVERSION; a read returns what the znode really holds), every write recorded, and a
  way to fail the next ISR change notifications.
- `FakeFollower` is a `FetcherTarget`: a follower replica over an `InMemoryPartitionLog` that
  records what its replica fetcher truncated.
- `FakeLogDirEventSink` is the `LogDirEventSink` a `LogDirFailureHandler` notifies: the
  brokers it was told about, after failing as often as a test asks.
- `FakeLeader` is a `LeaderClient`: a leader's logs in memory answering OffsetsForLeaderEpoch
  and Fetch as `Partition` does, with errors a test injects per partition, every request
  recorded.

Threads: every method is safe from any thread (one lock each): partitions write from gRPC
workers, fetcher threads and the ISR threads, while the test thread reads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from broker_node.fetch_session import FetchSessionCache
from broker_node.storage import Record
from broker_node.storage.testing import InMemoryPartitionLog
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from rpc import messages as m
from rpc.errors import Errors, RpcClosed
from zkdata.pipelined_reads import Reads

__all__ = ["FakeFollower", "FakeIsrStore", "FakeLeader", "FakeLogDirEventSink", "IsrWrite"]


@dataclass(frozen=True, slots=True)
class IsrWrite:
    """One conditional write asked of a `FakeIsrStore`: the state sent, the zkVersion it was
    conditional on, and the new zkVersion (None when it was answered BADVERSION)."""

    tp: TopicPartition
    state: LeaderIsrAndControllerEpoch
    expected_version: int
    new_version: int | None


class FakeIsrStore:
    """State znodes and ISR change notifications in memory (see the module docstring).

    A state znode is kept as a value with its zkVersion; `state()` and
    `get_partition_states` report the zkVersion in `leader_and_isr.zk_version`, as
    `TopicPartitionStateZNode.decode` does. `update_partition_state` succeeds only when
    `expected_version` is the stored zkVersion (bumping it by one); otherwise it answers
    None (BADVERSION) and stores nothing. A missing znode raises `NoNodeError`, as kazoo's
    `set` does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._znodes: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        self._writes: list[IsrWrite] = []
        self._notifications: list[tuple[TopicPartition, ...]] = []
        self._notification_failures: list[Exception] = []

    # -- set-up and inspection by tests ------------------------------------------------------

    def put_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, zk_version: int
    ) -> None:
        """Store a state znode at `zk_version` (as the controller, or a concurrent writer,
        would have left it); the `zk_version` inside `state` is ignored."""
        with self._lock:
            self._znodes[tp] = (_with_version(state, zk_version), zk_version)

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """What the znode holds now (None when missing)."""
        with self._lock:
            znode = self._znodes.get(tp)
            return znode[0] if znode is not None else None

    @property
    def writes(self) -> list[IsrWrite]:
        """Every conditional write asked for, in order (a copy)."""
        with self._lock:
            return list(self._writes)

    @property
    def notifications(self) -> list[tuple[TopicPartition, ...]]:
        """The partitions of every ISR change notification created, in order (a copy)."""
        with self._lock:
            return list(self._notifications)

    def fail_next_notification(self, error: Exception) -> None:
        """Raise `error` from the next `create_isr_change_notification` (creating nothing).
        Calls queue: each failure is used once, in order."""
        with self._lock:
            self._notification_failures.append(error)

    # -- IsrChangeSink -----------------------------------------------------------------------

    def update_partition_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> int | None:
        """Conditional write: the new zkVersion, or None on BADVERSION or a missing znode
        (as `KafkaZkClient.update_partition_state` answers)."""
        with self._lock:
            znode = self._znodes.get(tp)
            if znode is None:
                self._writes.append(IsrWrite(tp, state, expected_version, None))
                return None
            if znode[1] != expected_version:
                self._writes.append(IsrWrite(tp, state, expected_version, None))
                return None
            version = znode[1] + 1
            self._znodes[tp] = (_with_version(state, version), version)
            self._writes.append(IsrWrite(tp, state, expected_version, version))
            return version

    def get_partition_states(
        self, partitions: Sequence[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """What the znodes hold; missing ones appear in neither map."""
        with self._lock:
            found = {tp: self._znodes[tp][0] for tp in partitions if tp in self._znodes}
        return Reads(found, {})

    def create_isr_change_notification(self, partitions: Iterable[TopicPartition]) -> str:
        """Record the partitions; returns a sequential node name (or raises the failure
        queued by `fail_next_notification`)."""
        with self._lock:
            if self._notification_failures:
                raise self._notification_failures.pop(0)
            self._notifications.append(tuple(partitions))
            return f"/isr_change_notification/isr_change_{len(self._notifications) - 1:010d}"


class FakeFollower:
    """A follower replica for a replica fetcher: `leader_epoch` is what the last LeaderAndIsr
    said (a test may change it), `log` an `InMemoryPartitionLog`, and `truncations` the
    offsets the fetcher truncated to, in order."""

    def __init__(self, leader_epoch: int, log: InMemoryPartitionLog | None = None) -> None:
        self.leader_epoch = leader_epoch
        self.log = log if log is not None else InMemoryPartitionLog()
        self._lock = threading.Lock()
        self._truncations: list[int] = []

    @property
    def truncations(self) -> list[int]:
        """Every `truncate_to` offset asked for (a copy)."""
        with self._lock:
            return list(self._truncations)

    def truncate_to(self, offset: int) -> int:
        """Cut the log at `offset`; returns the records removed."""
        with self._lock:
            self._truncations.append(offset)
            before = self.log.log_end_offset
            self.log.truncate_to(offset)
            return before - self.log.log_end_offset

    def append_as_follower(self, records: Sequence[m.FetchedRecord], leader_hw: int) -> None:
        """Append and take the leader's high watermark, capped at the local log end."""
        stored = [Record(r.offset, r.leader_epoch, r.timestamp_ms, r.key, r.value) for r in records]
        if stored:
            self.log.append_as_follower(stored)
        self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))

    def append_encoded_as_follower(self, data: bytes, leader_hw: int) -> None:
        """`append_as_follower` of records in the log's stored format."""
        if data:
            self.log.append_encoded_as_follower(data)
        self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))


class FakeLeader:
    """The leader a replica fetcher talks to, in memory.

    `logs` holds the leader's log of each partition it leads (a test appends to them with
    `append_as_leader`). OffsetsForLeaderEpoch answers `end_offset_for_epoch` of that log;
    Fetch answers its records from the fetch offset up to the log end with the log's high
    watermark, OFFSET_OUT_OF_RANGE outside the log, and, when nothing is there to send,
    waits up to the request's `max_wait_ms` as a broker does. A partition it does not lead
    answers UNKNOWN_TOPIC_OR_PARTITION; `fail(tp, error)` makes both calls answer `error`
    for `tp`. After `close()` every call raises `RpcClosed`. The leader epoch of a request
    is recorded, not checked. Fetch sessions (KIP-227) are kept in a real
    `FetchSessionCache` (`sessions`; `evict_sessions()` forgets them all, as a restarted
    leader would). A fetch asking for `encoded_records` gets them in the log's stored
    format, as a broker sends them.
    """

    def __init__(self, logs: dict[TopicPartition, InMemoryPartitionLog]) -> None:
        self.logs = logs
        self.sessions = FetchSessionCache()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._errors: dict[TopicPartition, Errors] = {}
        self._epoch_requests: list[m.OffsetsForLeaderEpochRequest] = []
        self._fetch_requests: list[m.FetchRequest] = []

    def fail(self, tp: TopicPartition, error: Errors) -> None:
        """Answer `error` for `tp` from now on."""
        with self._lock:
            self._errors[tp] = error

    def heal(self, tp: TopicPartition) -> None:
        """Answer `tp` normally again."""
        with self._lock:
            self._errors.pop(tp, None)

    @property
    def epoch_requests(self) -> list[m.OffsetsForLeaderEpochRequest]:
        """Every OffsetsForLeaderEpoch request received (a copy)."""
        with self._lock:
            return list(self._epoch_requests)

    @property
    def fetch_requests(self) -> list[m.FetchRequest]:
        """Every Fetch request received (a copy)."""
        with self._lock:
            return list(self._fetch_requests)

    def _error(self, tp: TopicPartition) -> Errors:
        with self._lock:
            if self._closed.is_set():
                raise RpcClosed("fake-leader", "CLOSED")
            if tp in self._errors:
                return self._errors[tp]
            return Errors.NONE if tp in self.logs else Errors.UNKNOWN_TOPIC_OR_PARTITION

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where each asked epoch ends in the leader's log."""
        with self._lock:
            self._epoch_requests.append(request)
        answers = []
        for ask in request.partitions:
            tp = TopicPartition(ask.topic, ask.partition)
            error = self._error(tp)
            if error is not Errors.NONE:
                answers.append(m.EpochEndOffset(ask.topic, ask.partition, error))
                continue
            epoch, end = self.logs[tp].end_offset_for_epoch(ask.leader_epoch)
            answers.append(m.EpochEndOffset(ask.topic, ask.partition, Errors.NONE, epoch, end))
        return m.OffsetsForLeaderEpochResponse(tuple(answers))

    def fetch(self, request: m.FetchRequest) -> m.FetchResponse:
        """Records from each fetch offset up to the leader's log end."""
        with self._lock:
            self._fetch_requests.append(request)
        context = self.sessions.context(request, time.monotonic())
        if context.error is not Errors.NONE:
            return m.FetchResponse(context.error)
        encoded = request.encoded_records
        answers = [self._read(fetch, encoded) for fetch in context.reads]
        if not any(a.has_records for a in answers):
            self._closed.wait(request.max_wait_ms / 1000)  # the broker's long poll
            answers = [self._read(fetch, encoded) for fetch in context.reads]
        return m.FetchResponse(
            Errors.NONE, self.sessions.answer(context, answers), context.session_id
        )

    def evict_sessions(self) -> None:
        """Forget every fetch session (the next incremental fetch finds none)."""
        for session_id in self.sessions.ids():
            self.sessions.remove(session_id)

    def _read(self, fetch: m.FetchPartition, encoded: bool) -> m.FetchedPartition:
        tp = fetch.topic_partition
        error = self._error(tp)
        log = self.logs.get(tp)
        if (
            error is Errors.NONE
            and log is not None
            and not 0 <= fetch.fetch_offset <= log.log_end_offset
        ):
            error = Errors.OFFSET_OUT_OF_RANGE
        if error is not Errors.NONE or log is None:
            return m.FetchedPartition(fetch.topic, fetch.partition, error)
        read = [] if encoded else log.read(fetch.fetch_offset, max_records=fetch.max_records)
        return m.FetchedPartition(
            fetch.topic,
            fetch.partition,
            Errors.NONE,
            log.high_watermark,
            log.log_start_offset,
            log.log_end_offset,
            ()
            if encoded
            else tuple(
                m.FetchedRecord(r.offset, r.leader_epoch, r.timestamp_ms, r.key, r.value)
                for r in read
            ),
            log.read_encoded(fetch.fetch_offset, max_records=fetch.max_records)[0]
            if encoded
            else b"",
        )

    def close(self) -> None:
        """Refuse every later call (`RpcClosed`) and end any long poll."""
        self._closed.set()


def _with_version(
    state: LeaderIsrAndControllerEpoch, zk_version: int
) -> LeaderIsrAndControllerEpoch:
    lai = state.leader_and_isr
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, zk_version), state.controller_epoch
    )


class FakeLogDirEventSink:
    """Log-directory event notifications in memory; the first `failures` writes raise
    `ConnectionError`, as an unreachable ZooKeeper would."""

    def __init__(self, failures: int = 0) -> None:
        self._lock = threading.Lock()
        self._failures = failures
        self.attempts = 0
        self.notified: list[int] = []

    def propagate_log_dir_event(self, broker_id: int) -> str:
        """Record `broker_id`'s notification; returns its made-up path."""
        with self._lock:
            self.attempts += 1
            if self._failures > 0:
                self._failures -= 1
                raise ConnectionError("ZooKeeper unreachable")
            self.notified.append(broker_id)
            return f"/log_dir_event_notification/log_dir_event_{len(self.notified) - 1:010d}"
