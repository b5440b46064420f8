"""`Partition`: one replica hosted by this broker, as leader or follower.

As leader it appends produced records, serves fetches (followers up to the log end,
consumers up to the high watermark), tracks each follower's progress, moves the high
watermark, and shrinks or expands the ISR by writing the state znode conditionally on its
zkVersion (keeping the controller epoch of the leadership decision). As follower it takes
records from the replica fetcher and truncates when told.

The leader-epoch rule of the data plane is owned here: `leader_epoch_error` decides, and
`Partition.check_leader_epoch` applies it to this replica (Fetch and OffsetsForLeaderEpoch
ask it; the replica fetcher only reacts to its answer). The controller-to-broker rules
(LeaderAndIsr, StopReplica) are `broker_node.fencing`'s.

Thread-safety: every method may be called from any thread (gRPC workers, the fetcher
threads, the ISR expiration thread); one lock guards the state, and a condition of it
wakes produce and fetch waiters. ZooKeeper writes happen under it, as Kafka's leader ISR
lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from broker_node import isr as decide
from broker_node.isr_writes import IsrStore, write_isr
from broker_node.storage import PartitionLog, Record
from domain import NO_EPOCH, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind, EventLog
from rpc import messages as m
from rpc.errors import Errors

if TYPE_CHECKING:
    from broker_node.fetch_session import CachedPartition, FetchSession

    #: A follower's session and its entry for this partition (`read_if_changed`).
    SessionMark = tuple[FetchSession, CachedPartition]

#: The most removed records one `log_truncated` names.
TRUNCATED_RECORDS_LOGGED = 1000


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    """Replication settings of one partition."""

    lag_time_max_ms: int = 10_000
    min_insync_replicas: int = 1
    #: False with bug switch `kafka-2729`: a failed ISR write is not followed by a re-read.
    reread_isr_on_conflict: bool = True


def leader_epoch_error(request_leader_epoch: int, leader_epoch: int) -> Errors:
    """The data-plane leader-epoch rule (KIP-320), pure: a request at `NO_EPOCH` (-1) skips
    the check; an older epoch (any other negative one too, such as -2) is
    FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, the same one passes."""
    if request_leader_epoch == NO_EPOCH:
        return Errors.NONE
    if request_leader_epoch < leader_epoch:
        return Errors.FENCED_LEADER_EPOCH
    if request_leader_epoch > leader_epoch:
        return Errors.UNKNOWN_LEADER_EPOCH
    return Errors.NONE


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


class Partition:
    """One replica of one partition on this broker."""

    def __init__(
        self,
        tp: TopicPartition,
        broker_id: int,
        log: PartitionLog,
        store: IsrStore,
        event_log: EventLog,
        config: PartitionConfig,
        on_isr_change: Callable[[TopicPartition], None],
        clock_ms: Callable[[], int] = _now_ms,
        on_high_watermark: Callable[[Partition], None] | None = None,
    ) -> None:
        self.tp = tp
        self.broker_id = broker_id
        self.log = log
        self._store = store
        self._events = event_log
        self.config = config
        self._on_isr_change = on_isr_change
        self._on_high_watermark = on_high_watermark
        self._clock = clock_ms
        #: Guards the partition. A thread that must wait for it to change (`_wait`) waits
        #: on a condition of this lock, made at the first wait: a broker told to host
        #: thousands of partitions makes none, and `_notify` without one has no waiter.
        self._lock = threading.RLock()
        self._waiters: threading.Condition | None = None
        self.leader = -1
        self.leader_epoch = -1
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.zk_version = 0
        self.controller_epoch = 0
        self._followers: dict[int, decide.FollowerState] = {}
        #: ISR followers last found idle at the log end in a fetch session, which may skip
        #: reading this partition until it changes (`_settle_idle`).
        self._idle: dict[int, SessionMark] = {}
        self._leader_epoch_start_offset = 0
        self._leadership_term = 0

    def _wait(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for `_notify` (the lock held)."""
        if self._waiters is None:
            self._waiters = threading.Condition(self._lock)
        self._waiters.wait(timeout_s)

    def _notify(self) -> None:
        """Wake every waiter (the lock held)."""
        if self._waiters is not None:
            self._waiters.notify_all()

    # -- roles (gRPC thread handling LeaderAndIsr) -----------------------------------------

    @property
    def is_leader(self) -> bool:
        """True while this broker leads the partition."""
        return self.leader == self.broker_id

    @property
    def leadership_term(self) -> int:
        """Counts the times this broker became leader: it stays the same across leader
        epoch bumps that keep this broker leading (an ISR change by the controller, a
        reassignment), so acks=all waiters survive those, and changes once leadership was
        lost in between (the log may have been truncated meanwhile)."""
        return self._leadership_term

    def make_leader(self, state: m.LeaderAndIsrPartitionState) -> None:
        """Become leader at `state`'s epoch: the new epoch starts at the current log end."""
        with self._lock:
            now = self._clock()
            if not self.is_leader:
                self._leadership_term += 1
            self._apply(state)
            self._leader_epoch_start_offset = self.log.log_end_offset
            self._idle = {}
            self._followers = {
                r: decide.FollowerState(last_caught_up_ms=now if r in self.isr else 0)
                for r in self.replicas
                if r != self.broker_id
            }
            self._maybe_increment_hw()
            self._notify()

    def make_follower(self, state: m.LeaderAndIsrPartitionState) -> None:
        """Follow `state.leader`; produce waiters give up, fetches are refused."""
        with self._lock:
            self._apply(state)
            self._followers = {}
            self._idle = {}
            self._notify()

    def stop(self) -> None:
        """Neither lead nor follow (StopReplica without delete)."""
        with self._lock:
            self.leader = -1
            self._followers = {}
            self._idle = {}
            self._notify()

    def _apply(self, state: m.LeaderAndIsrPartitionState) -> None:
        self.leader = state.leader
        self.leader_epoch = state.leader_epoch
        self.isr = state.isr
        self.replicas = state.replicas
        self.zk_version = state.zk_version
        self.controller_epoch = state.controller_epoch

    def update_config(self, config: PartitionConfig) -> None:
        """New replication settings (a topic config change); produce waiters re-check."""
        with self._lock:
            self.config = config
            self._notify()

    # -- leader: produce ------------------------------------------------------------------

    def append_as_leader(
        self, records: Sequence[m.ProducedRecord], acks: int
    ) -> tuple[Errors, int, int]:
        """Append if this broker leads and, for acks=all, the ISR is large enough; returns
        (error, first offset, last offset)."""
        now_ms = int(time.time() * 1000)
        stamped = [(r.key, r.value, r.timestamp_ms or now_ms) for r in records]
        with self._lock:
            if not self.is_leader:
                return Errors.NOT_LEADER_OR_FOLLOWER, -1, -1
            if acks == -1 and len(self.isr) < self.config.min_insync_replicas:
                return Errors.NOT_ENOUGH_REPLICAS, -1, -1
            if self._idle:
                self._settle_idle(self.log.log_end_offset)
            first, last = self.log.append_as_leader(stamped, self.leader_epoch)
            self._maybe_increment_hw()
            self._notify()
            return Errors.NONE, first, last

    def acks_outcome(self, last_offset: int, leadership_term: int) -> Errors | None:
        """The answer for an acks=all Produce ending at `last_offset`, appended while this
        broker led in `leadership_term`, or None while it is undecided: the high watermark
        covers it (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
        min.insync.replicas meanwhile), or NOT_LEADER_OR_FOLLOWER once leadership was lost.
        Never blocks on anything but this partition's lock (the produce purgatory asks)."""
        with self._lock:
            if not self.is_leader or self._leadership_term != leadership_term:
                return Errors.NOT_LEADER_OR_FOLLOWER
            if self.log.high_watermark > last_offset:
                if len(self.isr) < self.config.min_insync_replicas:
                    return Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                return Errors.NONE
            return None

    def wait_for_acks(self, last_offset: int, leadership_term: int, timeout_s: float) -> Errors:
        """Block until `acks_outcome` decides (REQUEST_TIMED_OUT after `timeout_s`). For
        callers that may hold a thread; the broker's Produce parks in the purgatory."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                outcome = self.acks_outcome(last_offset, leadership_term)
                if outcome is not None:
                    return outcome
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return Errors.REQUEST_TIMED_OUT
                self._wait(remaining)

    # -- leader: fetch --------------------------------------------------------------------

    def check_leader_epoch(self, current_leader_epoch: int) -> Errors:
        """May a Fetch or OffsetsForLeaderEpoch carrying `current_leader_epoch` be served?
        NOT_LEADER_OR_FOLLOWER unless this broker leads, else `leader_epoch_error`."""
        with self._lock:
            if not self.is_leader:
                return Errors.NOT_LEADER_OR_FOLLOWER
            return leader_epoch_error(current_leader_epoch, self.leader_epoch)

    def read(
        self, fetch: m.FetchPartition, replica_id: int, encoded: bool = False
    ) -> m.FetchedPartition:
        """Serve a fetch without waiting (a Fetch's long poll is the replica manager's); a
        follower's fetch also reports its progress. With `encoded` the records go as the
        log stores them (`record_data`), for a follower to copy."""
        with self._lock:
            error = self.check_leader_epoch(fetch.current_leader_epoch)
            if error is not Errors.NONE:
                return self._fetched(fetch, error)
            if not self.log.log_start_offset <= fetch.fetch_offset <= self.log.log_end_offset:
                return self._fetched(fetch, Errors.OFFSET_OUT_OF_RANGE)  # no progress to record
            if replica_id >= 0:
                self._follower_fetched(replica_id, fetch.fetch_offset)
            limit = self.log.log_end_offset if replica_id >= 0 else self.log.high_watermark
            records: Sequence[Record] | bytes = ()
            if fetch.fetch_offset < limit:
                records = (
                    self.log.read_encoded(fetch.fetch_offset, limit, fetch.max_records)[0]
                    if encoded
                    else self.log.read(fetch.fetch_offset, limit, fetch.max_records)
                )
            return self._fetched(fetch, Errors.NONE, records)

    def read_if_changed(
        self,
        fetch: m.FetchPartition,
        replica_id: int,
        high_watermark: int,
        log_start_offset: int,
        encoded: bool = False,
        mark: SessionMark | None = None,
    ) -> m.FetchedPartition | None:
        """`read` without waiting, for a partition of an incremental fetch session whose
        last answer carried `high_watermark` and `log_start_offset`: None when the answer
        would name nothing new (a follower at the log end, no error, both offsets the
        same). The follower's fetch is recorded either way. The common case of a session
        of thousands of idle partitions takes this short path, and an ISR follower already
        at the log end a shorter one still: only its fetch time moves (nothing else that
        `_follower_fetched` decides can change). That follower is then idle: `mark` (its
        session and the session's entry for this partition) says so, and the session may
        skip reading the partition until something changes (`_settle_idle`)."""
        with self._lock:
            if (
                replica_id >= 0
                and self.leader == self.broker_id
                and leader_epoch_error(fetch.current_leader_epoch, self.leader_epoch) is Errors.NONE
            ):
                start, end, hw = self.log.offsets()
                if fetch.fetch_offset == end and hw == high_watermark and start == log_start_offset:
                    before = self._followers.get(replica_id)
                    if (
                        before is not None
                        and before.log_end_offset == end
                        and replica_id in self.isr
                    ):
                        self._followers[replica_id] = decide.after_fetch(
                            before, end, end, self._clock()
                        )
                        if mark is not None:
                            mark[1].idle = True
                            self._idle[replica_id] = mark
                        return None
                    if mark is not None:
                        mark[1].idle = False
                    self._follower_fetched(replica_id, fetch.fetch_offset)
                    if self.log.high_watermark == high_watermark:  # the fetch may move it
                        return None
                    return self._fetched(fetch, Errors.NONE)
            if mark is not None:
                mark[1].idle = False
            return self.read(fetch, replica_id, encoded)

    def _settle_idle(self, log_end_offset: int) -> None:
        """Before the log end moves from `log_end_offset`: a follower whose session has
        skipped this partition since it was found idle was caught up as of that session's
        latest fetch, if the partition is still in the session with the same fetch offset
        (Kafka records each fetch; a session that skips idle partitions records them
        here, once). Then every follower is read again at its next fetch."""
        for replica_id, (session, entry) in self._idle.items():
            state = self._followers.get(replica_id)
            if (
                state is not None
                and state.log_end_offset == log_end_offset
                and entry.idle
                and entry.fetch.fetch_offset == log_end_offset
                and session.partitions.get(self.tp) is entry
                and session.fetched_ms > state.last_fetch_ms
            ):
                self._followers[replica_id] = decide.after_fetch(
                    state, log_end_offset, log_end_offset, session.fetched_ms
                )
        self._idle = {}

    def _fetched(
        self, fetch: m.FetchPartition, error: Errors, records: Sequence[Record] | bytes = ()
    ) -> m.FetchedPartition:
        if isinstance(records, bytes):
            record_data, records = records, ()
        else:
            record_data = b""
        return m.FetchedPartition(
            topic=fetch.topic,
            partition=fetch.partition,
            error=error,
            high_watermark=self.log.high_watermark,
            log_start_offset=self.log.log_start_offset,
            log_end_offset=self.log.log_end_offset,
            records=tuple(
                m.FetchedRecord(r.offset, r.leader_epoch, r.timestamp_ms, r.key, r.value)
                for r in records
            ),
            record_data=record_data,
        )

    def _follower_fetched(self, replica_id: int, fetch_offset: int) -> None:
        """Record a follower's fetch; the high watermark is recomputed only when one of its
        inputs moved (the follower's log end, or the ISR it joined): every other input
        recomputes it where it changes."""
        before = self._followers.get(replica_id)
        if before is None:
            return
        self._idle.pop(replica_id, None)
        state = decide.after_fetch(before, fetch_offset, self.log.log_end_offset, self._clock())
        self._followers[replica_id] = state
        if replica_id not in self.isr and decide.may_join_isr(
            state.log_end_offset, self.log.high_watermark, self._leader_epoch_start_offset
        ):
            self._update_isr((*self.isr, replica_id), "expand")
        elif state.log_end_offset == before.log_end_offset:
            return
        self._maybe_increment_hw()

    def _maybe_increment_hw(self) -> None:
        hw = decide.high_watermark(
            self.log.high_watermark,
            self.log.log_end_offset,
            self.isr,
            self.broker_id,
            self._followers,
        )
        if hw != self.log.high_watermark:
            self.log.set_high_watermark(hw)
            self._notify()
            if self._on_high_watermark is not None:  # e.g. the produce purgatory
                self._on_high_watermark(self)

    def end_offset_for_epoch(self, current_leader_epoch: int, epoch: int) -> m.EpochEndOffset:
        """KIP-101: where `epoch` ended in this leader's log."""
        with self._lock:
            error = self.check_leader_epoch(current_leader_epoch)
            if error is not Errors.NONE:
                return m.EpochEndOffset(self.tp.topic, self.tp.partition, error)
            found_epoch, end = self.log.end_offset_for_epoch(epoch)
            return m.EpochEndOffset(self.tp.topic, self.tp.partition, Errors.NONE, found_epoch, end)

    # -- leader: ISR maintenance (ISR expiration thread) ----------------------------------

    def maybe_shrink_isr(self) -> None:
        """Drop followers that have lagged longer than `replica.lag.time.max.ms`."""
        with self._lock:
            if self.leader != self.broker_id:
                return
            lagging = decide.out_of_sync_replicas(
                self.isr,
                self.broker_id,
                self.log.log_end_offset,
                self._followers,
                self._clock(),
                self.config.lag_time_max_ms,
            )
            if lagging:
                self._update_isr(tuple(r for r in self.isr if r not in lagging), "shrink")
                self._maybe_increment_hw()

    def _update_isr(self, new_isr: tuple[int, ...], reason: str) -> None:
        """Write the new ISR to the state znode (`broker_node.isr_writes`); when the znode
        says something else, keep the ISR and wait for the controller's LeaderAndIsr."""
        state = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(self.leader, self.leader_epoch, new_isr, self.zk_version),
            self.controller_epoch,
        )
        version = write_isr(self._store, self.tp, state, self.config.reread_isr_on_conflict)
        if version is None:
            self._events.emit(
                EventKind.ISR_UPDATE_FAILED,
                topic=self.tp.topic,
                partition=self.tp.partition,
                leader_epoch=self.leader_epoch,
                isr=list(self.isr),
                wanted=list(new_isr),
                reason="state znode changed (BADVERSION); waiting for the controller",
            )
            return
        old = self.isr
        self.isr = new_isr
        self.zk_version = version
        self._events.emit(
            EventKind.ISR_CHANGED,
            topic=self.tp.topic,
            partition=self.tp.partition,
            reason=reason,
            leader=self.leader,
            leader_epoch=self.leader_epoch,
            old_isr=list(old),
            isr=list(new_isr),
            zk_version=version,
            high_watermark=self.log.high_watermark,
        )
        self._on_isr_change(self.tp)
        self._notify()

    # -- follower (replica fetcher thread) ------------------------------------------------

    def append_as_follower(self, records: Sequence[m.FetchedRecord], leader_hw: int) -> None:
        """Append what the leader sent and follow its high watermark."""
        with self._lock:
            if records:
                self.log.append_as_follower(
                    [
                        Record(r.offset, r.leader_epoch, r.timestamp_ms, r.key, r.value)
                        for r in records
                    ]
                )
            self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))

    def append_encoded_as_follower(self, data: bytes, leader_hw: int) -> None:
        """`append_as_follower` of records as the leader's log stores them."""
        with self._lock:
            if data:
                self.log.append_encoded_as_follower(data)
            self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))

    def truncate_to(self, offset: int) -> int:
        """Drop the divergent tail (KIP-101); returns the records removed."""
        with self._lock:
            before = self.log.log_end_offset
            dropped = self._tail_records(offset, before)
            self.log.truncate_to(offset)
            removed = before - self.log.log_end_offset
            if removed:
                self._events.emit(
                    EventKind.LOG_TRUNCATED,
                    topic=self.tp.topic,
                    partition=self.tp.partition,
                    to_offset=self.log.log_end_offset,
                    removed=removed,
                    leader_epoch=self.leader_epoch,
                    removed_records=dropped,
                )
            return removed

    def _tail_records(self, offset: int, end: int) -> list[list[int | str]]:
        """`[offset, value]` (the value decoded leniently) of the records at offset..end,
        at most `TRUNCATED_RECORDS_LOGGED` of them, for `log_truncated`: what a check of
        the event log needs to tell whether a truncation removed an acknowledged record."""
        start = max(offset, self.log.log_start_offset)
        if start >= end:
            return []
        records = self.log.read(start, end, max_records=TRUNCATED_RECORDS_LOGGED)
        return [[r.offset, r.value.decode("utf-8", "replace")] for r in records]

    # -- figures ----------------------------------------------------------------------------

    def under_replicated(self) -> bool:
        """Led here with an ISR smaller than the replica set."""
        with self._lock:
            return self.is_leader and len(self.isr) < len(self.replicas)
