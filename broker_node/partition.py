"""`Partition`: one replica hosted by this broker, as leader or follower.

As leader it appends produced records and serves fetches (followers up to the log end,
consumers up to the high watermark); the follower progress, ISR and high watermark those
move are `broker_node.partition_isr`'s, whose state this class extends. As follower it
takes records from the replica fetcher and truncates when told.

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

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from broker_node import isr as decide
from broker_node.partition_isr import PartitionIsr
from broker_node.replica_audit import audit_log
from broker_node.storage import LogError, Record
from domain import NO_EPOCH
from eventlog import HighWatermarkMoved, LogTruncated
from rpc import messages as m
from rpc.errors import Errors

if TYPE_CHECKING:
    from broker_node.partition_isr import SessionMark

#: The most removed records one `log_truncated` names.
TRUNCATED_RECORDS_LOGGED = 1000


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


class Partition(PartitionIsr):
    """One replica of one partition on this broker."""

    #: Set for good when its log directory failed (`take_offline`): every request on it
    #: answers KAFKA_STORAGE_ERROR, as Kafka's `HostedPartition.Offline`.
    offline = False
    #: The log end offset at the last `sync` of the log (`flush.messages`).
    _synced_to = 0

    # -- roles (gRPC thread handling LeaderAndIsr) -----------------------------------------

    def make_leader(
        self,
        state: m.LeaderAndIsrPartitionState,
        round_facts: list[HighWatermarkMoved] | None = None,
    ) -> None:
        """Become leader at `state`'s epoch: the new epoch starts at the current log end.
        Its `high_watermark_moved` goes to `round_facts` when given (the request's
        `leaderships_started`), else is written alone."""
        with self._lock:
            if self.offline:
                return
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
            self._maybe_increment_hw(report=False)
            if self.leader_epoch > 0 or self.log.log_end_offset > 0:
                # the first leader of a new, empty partition has nothing to tell: a topic
                # of 100,000 partitions costs no 100,000 lines
                self._report_high_watermark("leader", round_facts)
            self._notify()

    def make_follower(self, state: m.LeaderAndIsrPartitionState) -> None:
        """Follow `state.leader`; produce waiters give up, fetches are refused."""
        with self._lock:
            if self.offline:
                return
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

    def take_offline(self) -> None:
        """Its log directory failed: neither lead nor follow, and answer every request
        with KAFKA_STORAGE_ERROR from now on."""
        with self._lock:
            self.offline = True
            self.leader = -1
            self._followers = {}
            self._idle = {}
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
            if self.offline:
                return Errors.KAFKA_STORAGE_ERROR, -1, -1
            if not self.is_leader:
                return Errors.NOT_LEADER_OR_FOLLOWER, -1, -1
            if acks == -1 and len(self.isr) < self.config.min_insync_replicas:
                return Errors.NOT_ENOUGH_REPLICAS, -1, -1
            if self._idle:
                self._settle_idle(self.log.log_end_offset)
            first, last = self.log.append_as_leader(stamped, self.leader_epoch)
            self._sync_if_due()
            self._maybe_increment_hw()
            self._notify()
            return Errors.NONE, first, last

    def _sync_if_due(self) -> None:
        """Kafka's `flush.messages`: fsync the log once that many messages were appended
        since its last fsync, before the leader counts them or the follower fetches on
        (under the lock)."""
        interval = self.config.flush_interval_messages
        end = self.log.log_end_offset
        if interval is not None and end - min(self._synced_to, end) >= interval:
            self.log.sync()
            self._synced_to = end

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
        KAFKA_STORAGE_ERROR once offline, NOT_LEADER_OR_FOLLOWER unless this broker leads,
        else `leader_epoch_error`."""
        with self._lock:
            if self.offline:
                return Errors.KAFKA_STORAGE_ERROR
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
            if error is Errors.KAFKA_STORAGE_ERROR:
                return m.FetchedPartition(fetch.topic, fetch.partition, error)
            if error is not Errors.NONE:
                return self._fetched(fetch, error)
            try:
                return self._read(fetch, replica_id, encoded)
            except (LogError, OSError):  # the directory failed under the read
                return m.FetchedPartition(fetch.topic, fetch.partition, Errors.KAFKA_STORAGE_ERROR)

    def _read(self, fetch: m.FetchPartition, replica_id: int, encoded: bool) -> m.FetchedPartition:
        """`read` past its checks, under the lock."""
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
                try:
                    start, end, hw = self.log.offsets()
                except LogError:  # its directory failed: `read` answers
                    return self.read(fetch, replica_id, encoded)
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

    def end_offset_for_epoch(self, current_leader_epoch: int, epoch: int) -> m.EpochEndOffset:
        """KIP-101: where `epoch` ended in this leader's log."""
        with self._lock:
            error = self.check_leader_epoch(current_leader_epoch)
            if error is not Errors.NONE:
                return m.EpochEndOffset(self.tp.topic, self.tp.partition, error)
            found_epoch, end = self.log.end_offset_for_epoch(epoch)
            return m.EpochEndOffset(self.tp.topic, self.tp.partition, Errors.NONE, found_epoch, end)

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
                self._sync_if_due()
            self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))

    def append_encoded_as_follower(self, data: bytes, leader_hw: int) -> None:
        """`append_as_follower` of whole batches as the leader's log stores them."""
        with self._lock:
            if data:
                self.log.append_encoded_as_follower(data)
                self._sync_if_due()
            self.log.set_high_watermark(min(leader_hw, self.log.log_end_offset))

    def truncate_to(self, offset: int) -> int:
        """Drop the divergent tail (KIP-101) from the batch holding `offset`; returns the
        records removed."""
        with self._lock:
            before = self.log.log_end_offset
            dropped = self._tail_records(self.log.batch_start(offset), before)
            self.log.truncate_to(offset)
            removed = before - self.log.log_end_offset
            if removed:
                self._events.emit(
                    LogTruncated(
                        topic=self.tp.topic,
                        partition=self.tp.partition,
                        to_offset=self.log.log_end_offset,
                        removed=removed,
                        leader_epoch=self.leader_epoch,
                        removed_records=dropped,
                        last_epoch=self.log.latest_epoch(),
                        high_watermark=self.log.high_watermark,
                    ),
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

    # -- audit (gRPC worker answering ReplicaAudit) -----------------------------------------

    def audited(self) -> m.AuditedReplica:
        """This replica's leadership, offsets and per-epoch digests
        (`broker_node.replica_audit`), read under the lock so that nothing appends or
        truncates meanwhile; a log that cannot be read is named in `error_message`."""
        with self._lock:
            try:
                start, end, hw = self.log.offsets()
                epochs = audit_log(self.log)
            except LogError as exc:
                return m.AuditedReplica(
                    self.tp.topic,
                    self.tp.partition,
                    self.leader,
                    self.leader_epoch,
                    -1,
                    -1,
                    -1,
                    error_message=f"{type(exc).__name__}: {exc}",
                )
            tp = self.tp
            return m.AuditedReplica(
                tp.topic, tp.partition, self.leader, self.leader_epoch, start, end, hw, epochs
            )

    # -- figures ----------------------------------------------------------------------------

    def under_replicated(self) -> bool:
        """Led here with an ISR smaller than the replica set."""
        with self._lock:
            return self.is_leader and len(self.isr) < len(self.replicas)
