"""`PartitionIsr`: the state of one replica hosted by this broker (its leadership as the
last LeaderAndIsr gave it, its log, its lock) and, while it leads, the upkeep of its ISR
and high watermark: each follower's progress (`broker_node.isr` decides), the ISR expanded
when a follower catches up and shrunk when one lags longer than `replica.lag.time.max.ms`,
each change written to the state znode conditionally on its zkVersion
(`broker_node.isr_writes`; inter.broker.protocol.version 2.6) or, with an AlterIsr manager
in its config (2.7, KIP-497), proposed to the controller: one proposal pending at a time
(`broker_node.isr.PendingIsr`), the high watermark and acks=all counting the larger of the
committed and proposed ISRs meanwhile, settled by the controller's answer or the next
LeaderAndIsr. The high watermark moves with the ISR's log ends; `acks_outcome` says what
it means for an acks=all Produce. `broker_node.partition.Partition` serves the requests.

Thread-safety: every method is called with the partition's lock held, or takes it, from
any thread (gRPC workers, the fetcher threads, the `isr-expiration` thread); ZooKeeper
writes happen under it, as under Kafka's leader ISR lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from broker_node import isr as decide
from broker_node.alter_isr_manager import AlterIsrItem, AlterIsrManager
from broker_node.isr_writes import IsrStore, write_isr
from broker_node.storage import PartitionLog
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import ABSENT, EventLog, HighWatermarkMoved, IsrChanged, IsrUpdateFailed
from rpc import messages as m
from rpc.errors import Errors

if TYPE_CHECKING:
    from broker_node.fetch_session import CachedPartition, FetchSession

    #: A follower's session and its entry for this partition (`read_if_changed`).
    SessionMark = tuple[FetchSession, CachedPartition]


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    """Replication settings of one partition."""

    lag_time_max_ms: int = 10_000
    min_insync_replicas: int = 1
    #: False with bug switch `kafka-2729`: a failed ISR write is not followed by a re-read.
    reread_isr_on_conflict: bool = True
    #: Set at inter.broker.protocol.version 2.7: ISR changes go to the controller as
    #: AlterIsr instead of being written to the state znode.
    alter_isr: AlterIsrManager | None = None
    #: Kafka's `flush.messages` (None: never, the operating system flushes).
    flush_interval_messages: int | None = None
    #: False with bug switch `kafka-7128`: the high watermark is enough to join the ISR.
    isr_join_needs_epoch_start: bool = True


#: A partition's `high_watermark_moved` is written at most once per this many ms (besides
#: the one as it becomes leader): one costs about 4 us (`python -m bench.event_emit`).
HW_EVENT_INTERVAL_MS = 1000


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


class PartitionIsr:
    """The state of one replica of one partition on this broker, and its ISR and high
    watermark upkeep as leader (`Partition` serves the requests on it)."""

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
        on_high_watermark: Callable[[PartitionIsr], None] | None = None,
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
        #: When the last `high_watermark_moved` was written (None: never), and the moves
        #: not written since.
        self._hw_reported_ms: int | None = None
        self._hw_skipped = 0
        #: The ISR change proposed to the controller and not settled (AlterIsr only).
        self._pending_isr: decide.PendingIsr | None = None

    def _wait(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for `_notify` (the lock held)."""
        if self._waiters is None:
            self._waiters = threading.Condition(self._lock)
        self._waiters.wait(timeout_s)

    def _notify(self) -> None:
        """Wake every waiter (the lock held)."""
        if self._waiters is not None:
            self._waiters.notify_all()

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

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR the high watermark and acks=all count: the committed one, or while an
        AlterIsr is pending the larger of it and the proposed one (Kafka's `maximalIsr`)."""
        pending = self._pending_isr
        return self.isr if pending is None else pending.maximal_isr

    def _apply(self, state: m.LeaderAndIsrPartitionState) -> None:
        if self._pending_isr is not None and self.config.alter_isr is not None:
            self.config.alter_isr.clear_pending(self.tp)
        self._pending_isr = None
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
                if len(self.maximal_isr) < self.config.min_insync_replicas:
                    return Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                return Errors.NONE
            return None

    # -- leader: followers, ISR and high watermark ---------------------------------------

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
        start = self._leader_epoch_start_offset if self.config.isr_join_needs_epoch_start else 0
        if (
            self._pending_isr is None
            and replica_id not in self.isr
            and decide.may_join_isr(state.log_end_offset, self.log.high_watermark, start)
        ):
            self._update_isr((*self.isr, replica_id), "expand", state.log_end_offset)
        elif state.log_end_offset == before.log_end_offset:
            return
        self._maybe_increment_hw()

    def _maybe_increment_hw(self, report: bool = True) -> None:
        hw = decide.high_watermark(
            self.log.high_watermark,
            self.log.log_end_offset,
            self.maximal_isr,
            self.broker_id,
            self._followers,
        )
        if hw != self.log.high_watermark:
            self.log.set_high_watermark(hw)
            self._notify()
            if report:
                self._report_high_watermark("moved")
            if self._on_high_watermark is not None:  # e.g. the produce purgatory
                self._on_high_watermark(self)

    def _report_high_watermark(
        self, reason: str, round_facts: list[HighWatermarkMoved] | None = None
    ) -> None:
        """Write `high_watermark_moved` (the lock held): always for `"leader"`, for a move
        only when `HW_EVENT_INTERVAL_MS` passed since the last one of this partition. With
        `round_facts`, the event joins the caller's round there instead of being written."""
        now = self._clock()
        last = self._hw_reported_ms
        if reason == "moved" and last is not None and now - last < HW_EVENT_INTERVAL_MS:
            self._hw_skipped += 1
            return
        event = HighWatermarkMoved(
            topic=self.tp.topic,
            partition=self.tp.partition,
            leader_epoch=self.leader_epoch,
            reason=reason,
            high_watermark=self.log.high_watermark,
            log_end_offset=self.log.log_end_offset,
            epoch_start_offset=self._leader_epoch_start_offset,
            isr=list(self.isr),
            isr_log_end_offsets=decide.isr_log_ends(
                self.isr, self.broker_id, self.log.log_end_offset, self._followers
            ),
            skipped=self._hw_skipped,
        )
        if round_facts is None:
            self._events.emit(event)
        else:
            round_facts.append(event)
        self._hw_reported_ms = now
        self._hw_skipped = 0

    def maybe_shrink_isr(self) -> None:
        """Drop followers that have lagged longer than `replica.lag.time.max.ms`."""
        with self._lock:
            if self.leader != self.broker_id or self._pending_isr is not None:
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

    def _update_isr(
        self, new_isr: tuple[int, ...], reason: str, follower_leo: int | None = None
    ) -> None:
        """Write the new ISR to the state znode (`broker_node.isr_writes`); when the znode
        says something else, keep the ISR and wait for the controller's LeaderAndIsr.
        `follower_leo`: the joining follower's log end, for an expand. With AlterIsr, the
        change is proposed to the controller instead (`_propose_isr`)."""
        if self.config.alter_isr is not None:
            self._propose_isr(
                decide.PendingIsr(self.isr, new_isr, reason, follower_leo, self.log.high_watermark),
                self.config.alter_isr,
            )
            return
        state = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(self.leader, self.leader_epoch, new_isr, self.zk_version),
            self.controller_epoch,
        )
        version = write_isr(self._store, self.tp, state, self.config.reread_isr_on_conflict)
        if version is None:
            reason = "state znode changed (BADVERSION); waiting for the controller"
            self._isr_update_failed(new_isr, reason)
            return
        self._committed(new_isr, version, reason, follower_leo, self.log.high_watermark)
        self._on_isr_change(self.tp)
        self._notify()

    def _committed(
        self, new_isr: tuple[int, ...], version: int, reason: str, follower_leo: int | None, hw: int
    ) -> None:
        """The ISR `new_isr` is in ZooKeeper at zkVersion `version`: take and report it, with
        `hw` the high watermark when the change was decided."""
        old = self.isr
        self.isr = new_isr
        self.zk_version = version
        self._events.emit(
            IsrChanged(
                topic=self.tp.topic,
                partition=self.tp.partition,
                reason=reason,
                leader=self.leader,
                leader_epoch=self.leader_epoch,
                old_isr=list(old),
                isr=list(new_isr),
                zk_version=version,
                high_watermark=hw,
                follower_log_end_offset=ABSENT if follower_leo is None else follower_leo,
                epoch_start_offset=(
                    ABSENT if follower_leo is None else self._leader_epoch_start_offset
                ),
            )
        )

    # -- leader: AlterIsr (inter.broker.protocol.version 2.7) ----------------------------

    def _propose_isr(self, proposal: decide.PendingIsr, manager: AlterIsrManager) -> None:
        """Make `proposal` the pending ISR change and hand it to the AlterIsr manager (the
        lock held); if the manager still holds one for this partition, nothing changes."""
        state = LeaderAndIsr(self.leader, self.leader_epoch, proposal.proposed, self.zk_version)
        item = AlterIsrItem(
            self.tp, state, lambda result: self._alter_isr_answered(proposal, result)
        )
        if not manager.submit(item):
            self._isr_update_failed(
                proposal.proposed, "an AlterIsr for the partition is still pending"
            )
            return
        self._pending_isr = proposal

    def _alter_isr_answered(
        self, proposal: decide.PendingIsr, result: m.AlterIsrPartitionResult
    ) -> None:
        """The controller answered `proposal` (`alter-isr-sender`): commit it, send it
        again, or give up and keep it pending until the next LeaderAndIsr."""
        with self._lock:
            verdict = decide.judge_alter_isr_result(
                self._pending_isr is proposal and self.is_leader,
                result.error,
                result.leader_epoch,
                result.current_isr_version,
                self.leader_epoch,
                self.zk_version,
            )
            if verdict is decide.AlterIsrVerdict.RETRY and self.config.alter_isr is not None:
                self._pending_isr = None
                self._propose_isr(proposal, self.config.alter_isr)
            elif verdict is decide.AlterIsrVerdict.GIVE_UP:
                self._isr_update_failed(proposal.proposed, f"AlterIsr answered {result.error.name}")
            elif verdict is decide.AlterIsrVerdict.COMMIT:
                self._pending_isr = None
                self._committed(
                    result.isr,
                    result.current_isr_version,
                    proposal.reason,
                    proposal.follower_log_end_offset,
                    proposal.high_watermark,
                )
                self._maybe_increment_hw()
                self._notify()

    def _isr_update_failed(self, wanted: tuple[int, ...], reason: str) -> None:
        """The ISR stays as it is (the lock held)."""
        self._events.emit(
            IsrUpdateFailed(
                topic=self.tp.topic,
                partition=self.tp.partition,
                leader_epoch=self.leader_epoch,
                isr=list(self.isr),
                wanted=list(wanted),
                reason=reason,
            )
        )
