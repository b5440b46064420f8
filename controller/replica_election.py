"""`ReplicaElections`: preferred and unclean leader elections asked for by people or by the
controller itself (Kafka's `onReplicaElection`): the `ElectLeaders` request, the
`/admin/preferred_replica_election` znode, and the auto leader rebalance with its
`leader-rebalance` timer thread: one check 5 s after failover, then one check interval
after the end of each check, as Kafka schedules it.

The triage and the rebalance candidates are pure (`controller.leader_balance`); the
elections run through the partition state machine. Event thread only, except the timer
thread, which only enqueues `AutoPreferredReplicaLeaderElection`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from controller import events as ev
from controller.context import ControllerContext
from controller.election_strategies import OfflineElection, PreferredElection
from controller.leader_balance import ElectionType, failure_error, rebalance_candidates, triage
from controller.partition_state_machine import PartitionStateMachine
from controller.states import PartitionState
from controller.watchers import Watchers
from domain import LeaderAndIsr, TopicPartition
from eventlog import EventLog, LeaderElectionsRequested, MalformedZnode
from rpc.errors import Errors
from zkdata.admin_requests import (
    delete_preferred_replica_election,
    read_preferred_replica_election,
)
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError

#: Runs an action once after a delay in seconds (`ReplicaElections`' timer).
Schedule = Callable[[float, Callable[[], None]], None]


class ReplicaElections:
    """Preferred and unclean elections of the active controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: KafkaZkClient,
        partitions: PartitionStateMachine,
        event_log: EventLog,
        watchers: Watchers,
        imbalance_percentage: int,
        rebalance_interval_s: float | None = None,
        schedule: Schedule | None = None,
    ) -> None:
        """`rebalance_interval_s`: `leader.imbalance.check.interval.seconds`, None when the
        auto rebalance is off; `schedule(delay_s, action)` runs `action` once after
        `delay_s` (a `leader-rebalance` daemon thread unless given)."""
        self._ctx = context
        self._zk = zk
        self._partitions = partitions
        self._events = event_log
        self._watchers = watchers
        self._imbalance_percentage = imbalance_percentage
        self._rebalance_interval_s = rebalance_interval_s
        self._timer_stop = threading.Event()
        self._schedule = schedule or self._start_timer_thread

    # -- the leader-rebalance timer -------------------------------------------------------

    def schedule_auto_rebalance(self, delay_s: float) -> None:
        """Enqueue one `AutoPreferredReplicaLeaderElection` after `delay_s` (Kafka's
        `scheduleAutoLeaderRebalanceTask`): at failover with Kafka's 5 s, then again
        after every check with the check interval. Event thread."""
        enqueue = self._watchers.enqueue
        self._schedule(delay_s, lambda: enqueue(ev.AutoPreferredReplicaLeaderElection()))

    def _start_timer_thread(self, delay_s: float, action: Callable[[], None]) -> None:
        """A daemon thread `leader-rebalance` that runs `action` after `delay_s` unless
        `stop_rebalance_timer` came first."""

        def fire() -> None:
            if not self._timer_stop.wait(delay_s):
                action()

        threading.Thread(target=fire, name="leader-rebalance", daemon=True).start()

    def stop_rebalance_timer(self) -> None:
        """Cancel the scheduled check (on resignation); any thread."""
        self._timer_stop.set()

    # -- elections ------------------------------------------------------------------------

    def elect_leaders(
        self, election: ElectionType, requested: tuple[TopicPartition, ...]
    ) -> dict[TopicPartition, Errors]:
        """Preferred or unclean elections for `requested` (every partition when empty), with
        Kafka's outcome for each partition."""
        ctx = self._ctx
        plan = triage(
            requested or tuple(ctx.all_partitions()),
            election,
            ctx.replicas,
            lambda tp: s.leader_and_isr if (s := ctx.leadership(tp)) else None,
            ctx.is_topic_queued_for_deletion,
            ctx.is_replica_online,
        )
        outcomes = dict(plan.answered)
        if plan.to_elect:
            strategy: PreferredElection | OfflineElection = (
                PreferredElection()
                if election is ElectionType.PREFERRED
                else OfflineElection(allow_unclean=True)
            )
            results = self._partitions.handle_state_changes(
                list(plan.to_elect), PartitionState.ONLINE, strategy
            )
            for tp in plan.to_elect:
                ok = isinstance(results.get(tp), LeaderAndIsr)
                outcomes[tp] = Errors.NONE if ok else failure_error(election)
        self._events.emit(
            LeaderElectionsRequested(
                election=election.name.lower(),
                requested=len(requested) if requested else "all",
                outcomes={
                    e.name: sum(1 for o in outcomes.values() if o is e)
                    for e in set(outcomes.values())
                },
                controller_epoch=ctx.epoch,
            ),
        )
        return outcomes

    def process_preferred_replica_election_znode(self) -> None:
        """`/admin/preferred_replica_election` written (Kafka's ZK-triggered election): elect
        the listed partitions' preferred replicas, then remove the request."""
        try:
            requested = read_preferred_replica_election(
                self._zk, self._watchers(ev.ReplicaLeaderElection())
            )
        except ZnodeFormatError as exc:
            self._events.emit(MalformedZnode(path=exc.path, reason=exc.reason))
            delete_preferred_replica_election(self._zk, self._ctx.epoch_zk_version)
            return
        if requested is None:
            return
        if requested:
            self.elect_leaders(ElectionType.PREFERRED, requested)
        delete_preferred_replica_election(self._zk, self._ctx.epoch_zk_version)

    def auto_rebalance(self) -> None:
        """Kafka's processAutoPreferredReplicaLeaderElection: check the imbalance (below),
        then schedule the next check one interval later, whatever the check did."""
        try:
            self._check_and_rebalance()
        finally:
            if self._rebalance_interval_s is not None:
                self.schedule_auto_rebalance(self._rebalance_interval_s)

    def _check_and_rebalance(self) -> None:
        """Kafka's checkAndTriggerAutoLeaderRebalance: for brokers whose imbalance exceeds the
        threshold, move leaderships back to their live, in-sync preferred replicas."""
        ctx = self._ctx
        partitions = [
            tp for tp in ctx.all_partitions() if not ctx.is_topic_queued_for_deletion(tp.topic)
        ]
        states = {tp: state.leader_and_isr for tp in partitions if (state := ctx.leadership(tp))}
        candidates = rebalance_candidates(
            {tp: ctx.replicas(tp) for tp in partitions},
            {tp: lai.leader for tp, lai in states.items()},
            {tp: lai.isr for tp, lai in states.items()},
            ctx.live_broker_ids(),
            self._imbalance_percentage,
            any(ctx.assignment(tp).is_being_reassigned for tp in partitions),
        )
        if candidates:
            self.elect_leaders(ElectionType.PREFERRED, tuple(candidates))
