"""`ReassignmentManager`: partition reassignment as Kafka 2.4+ runs it (KIP-455), triggered
through `/admin/reassign_partitions`.

For one partition, with ORS the origin replicas, TRS the target, RS = TRS + ORS, AR the
replicas being added and RR those being removed (`controller.reassignment_decisions`):

- Start (or change) a reassignment: write RS, AR and RR into `/brokers/topics/T` and the
  context, stopping replicas an earlier target added that the new one drops (U1-U2);
  watch the partition's state znode.
- While some target replica is not in the ISR: bump the leader epoch and send
  LeaderAndIsr with RS, AR and RR to every replica in RS (A1); start AR as NewReplica, so
  they fetch from the leader and join the ISR (A2). A leader's ISR change fires the
  state-znode watch, which checks again.
- Once the ISR holds all of TRS: AR to OnlineReplica (B1); RS = TRS, no AR or RR in the
  context (B2); elect a leader from TRS if the current one is not in it or is not live,
  else bump the leader epoch so every replica learns the new RS (B3); RR to
  OfflineReplica, ReplicaDeletionStarted (StopReplica with delete), Successful and
  NonExistent (B4-B5); write TRS into `/brokers/topics/T` (B6); drop the partition's entry
  from `/admin/reassign_partitions` (B7); UpdateMetadata to every broker (B8); and resume
  the deletion of its topic if one waits.

The topic of a partition being reassigned is ineligible for deletion meanwhile. A new
controller resumes every reassignment ZooKeeper shows in flight (the request znode and
the adding/removing replicas in the topic znodes); so does a broker startup for the
reassignments that target it. Requests that cannot run are removed from the request znode
and reported (`reassignment_rejected`); the others proceed. Event thread only; the state
watches it arms run on kazoo's thread and only enqueue.
"""

from __future__ import annotations

from collections.abc import Iterable

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import STALE_REASSIGNED_EPOCH
from controller import events as ev
from controller.context import ControllerContext, PartitionReplica
from controller.deletion_decisions import REASON_REASSIGNMENT
from controller.election_strategies import ReassignElection
from controller.leader_epoch_bumps import bump_leader_epochs_and_send
from controller.partition_state_machine import PartitionStateMachine, PartitionZk
from controller.reassignment_decisions import (
    Rejection,
    is_reassignment_complete,
    plan_reassignments,
)
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from controller.topic_deletion import TopicDeletionManager
from controller.watchers import Watchers
from domain import TopicPartition
from eventlog import (
    EventLog,
    MalformedZnode,
    ReassignmentCompleted,
    ReassignmentFailed,
    ReassignmentRejected,
    ReassignmentStarted,
)
from zkdata.errors import ZnodeFormatError
from zkdata.model import ReplicaAssignment
from zkdata.reassignment import ReassignmentZk


class ReassignmentManager:
    """Reassignments of the active controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: ReassignmentZk,
        partition_zk: PartitionZk,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        batch: RequestBatch,
        deletion: TopicDeletionManager,
        event_log: EventLog,
        watch: Watchers,
        switches: BugSwitches = NO_BUGS,
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._partition_zk = partition_zk
        self._partitions = partitions
        self._replicas = replicas
        self._batch = batch
        self._deletion = deletion
        self._events = event_log
        self._watch = watch
        self._record_bumps = not switches.on(STALE_REASSIGNED_EPOCH)

    # -- triggers ---------------------------------------------------------------------------

    def being_reassigned(self) -> list[TopicPartition]:
        """Partitions with a reassignment in flight (Kafka's `partitionsBeingReassigned`)."""
        return [tp for tp, a in self._ctx.assignments() if a.is_being_reassigned]

    def on_failover(self) -> None:
        """A new controller: start what `/admin/reassign_partitions` asks (again, for the
        requests already in flight), then resume every other reassignment the topic
        znodes show in flight (Kafka's `initializePartitionReassignments`)."""
        started = self.process_request_znode(redo_in_flight=True)
        resumed = {
            tp: self._ctx.assignment(tp) for tp in self.being_reassigned() if tp not in started
        }
        self._reassign_many(resumed, set(resumed))

    def process_request_znode(self, redo_in_flight: bool = False) -> set[TopicPartition]:
        """`/admin/reassign_partitions` appeared or changed (Kafka's ZkPartitionReassignment):
        re-arm its watch, drop the requests that cannot run, and start the others. Returns
        the partitions started."""
        try:
            requests = self._zk.get_reassignments(self._watch(ev.PartitionReassignment()))
        except ZnodeFormatError as exc:
            self._events.emit(MalformedZnode(path=exc.path, reason=exc.reason))
            self._zk.remove_reassignments(lambda r: True, self._ctx.epoch_zk_version)
            return set()
        if requests is None:
            return set()
        if not requests:  # an empty list asks for nothing: clear it so new requests can come
            self._zk.remove_reassignments(lambda r: True, self._ctx.epoch_zk_version)
            return set()
        plan = plan_reassignments(
            requests,
            self._ctx.assignment,
            self._ctx.is_topic_queued_for_deletion,
            self._ctx.live_or_shutting_down_broker_ids(),
            redo_in_flight,
        )
        if plan.rejected:
            self._reject(plan.rejected)
        resumed = (
            {tp for tp in plan.start if self._ctx.assignment(tp).is_being_reassigned}
            if redo_in_flight
            else set()
        )
        failed = self._reassign_many(dict(plan.start), resumed)
        if failed:  # as Kafka does: a request that failed to start is dropped
            self._zk.remove_reassignments(
                lambda r: r.topic_partition in failed, self._ctx.epoch_zk_version
            )
        return set(plan.start) - failed

    def on_isr_change(self, tp: TopicPartition) -> None:
        """The state znode of `tp` changed (Kafka's PartitionReassignmentIsrChange): finish
        its reassignment if every target replica is now in the ISR."""
        assignment = self._ctx.assignment(tp)
        if not assignment.is_being_reassigned:
            return  # finished, or the topic is gone: let the one-shot watch lapse
        self._zk.watch_partition_state(tp, self._watch(ev.PartitionReassignmentIsrChange(tp)))
        if is_reassignment_complete(assignment, self._current_isr(tp)):
            self._complete(tp, assignment)  # U1-U2 ran when it started: nothing to redo

    def on_broker_startup(self, new_brokers: Iterable[int]) -> None:
        """Resume the reassignments whose target includes a broker that just started."""
        new = set(new_brokers)
        targeting = {
            tp: assignment
            for tp in self.being_reassigned()
            if new & set((assignment := self._ctx.assignment(tp)).target_replicas)
        }
        self._reassign_many(targeting, set(targeting))

    # -- Kafka's onPartitionReassignment ------------------------------------------------------

    def _reassign_many(
        self, assignments: dict[TopicPartition, ReplicaAssignment], resumed: set[TopicPartition]
    ) -> set[TopicPartition]:
        """Kafka's `onPartitionReassignment` for many partitions at once, step by step for
        all of them, so that no step costs a ZooKeeper round trip per partition: U1-U2
        (one pipelined read and fenced multis of the topic znodes that change, pipelined
        state watches), one pipelined read of the current ISRs, then A1 (fenced multis of
        the bumped states and one request batch) and A2 (one replica state change) for the
        partitions still catching up; those already caught up complete. Returns the
        partitions that could not start or go on (reported as `reassignment_failed`)."""
        if not assignments:
            return set()
        self._deletion.mark_ineligible(
            sorted({tp.topic for tp in assignments}), REASON_REASSIGNMENT
        )
        failed = self._update_current_reassignments(assignments)
        going = [tp for tp in assignments if tp not in failed]
        isrs = self._current_isrs(going)
        catching_up = {
            tp: assignments[tp]
            for tp in going
            if not is_reassignment_complete(assignments[tp], isrs.get(tp))
        }
        for tp, assignment in catching_up.items():
            self._events.emit(
                ReassignmentStarted(
                    topic=tp.topic,
                    partition=tp.partition,
                    origin=list(assignment.origin_replicas),
                    target=list(assignment.target_replicas),
                    adding=list(assignment.adding_replicas),
                    removing=list(assignment.removing_replicas),
                    resumed=tp in resumed,
                    controller_epoch=self._ctx.epoch,
                ),
            )
        failures = self._bump_leader_epochs_and_send(catching_up)  # A1
        for tp, failure in failures.items():
            self._failed(tp, catching_up[tp], failure)
        failed |= failures.keys()
        self._replicas.handle_state_changes(  # A2
            [
                r
                for tp, assignment in catching_up.items()
                if tp not in failures
                for r in self._replica_list(tp, assignment.adding_replicas)
                if self._ctx.replica_state(r) is ReplicaState.NON_EXISTENT
            ],
            ReplicaState.NEW,
        )
        for tp in going:
            if tp not in catching_up:
                self._complete(tp, assignments[tp])
        return failed

    def _complete(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        self._replicas.handle_state_changes(  # B1
            self._replica_list(tp, assignment.adding_replicas), ReplicaState.ONLINE
        )
        done = ReplicaAssignment(assignment.target_replicas)
        self._ctx.set_assignment(tp, done)  # B2
        self._move_leader_if_required(tp, done)  # B3
        self._stop_removed_replicas(tp, assignment.removing_replicas)  # B4, B5
        self._write_assignment(tp, done)  # B6
        self._zk.remove_reassignments(  # B7
            lambda r: r.topic_partition == tp and r.replicas == done.replicas,
            self._ctx.epoch_zk_version,
        )
        self._batch.new_batch()  # B8
        self._batch.add_update_metadata(self._ctx.live_or_shutting_down_broker_ids(), [tp])
        self._batch.send()
        leadership = self._ctx.leadership(tp)
        self._events.emit(
            ReassignmentCompleted(
                topic=tp.topic,
                partition=tp.partition,
                replicas=list(done.replicas),
                removed=list(assignment.removing_replicas),
                leader=leadership.leader_and_isr.leader if leadership else -1,
                controller_epoch=self._ctx.epoch,
            ),
        )
        self._deletion.resume_deletion_for_topics([tp.topic])

    def _update_current_reassignments(
        self, assignments: dict[TopicPartition, ReplicaAssignment]
    ) -> set[TopicPartition]:
        """U1-U2 for many partitions: record new or changed reassignments in ZooKeeper (each
        topic znode rewritten once) and the context, stop replicas a previous target added
        that the new one drops, and watch the state znodes (pipelined). Returns the
        partitions whose topic znode is gone or does not decode (reported as failed)."""
        changed = {
            tp: assignment
            for tp, assignment in assignments.items()
            if self._ctx.assignment(tp) != assignment
        }
        failed = self._write_assignments(changed)
        unneeded: list[PartitionReplica] = []
        for tp, assignment in changed.items():
            if tp in failed:
                continue
            current = self._ctx.assignment(tp)
            self._ctx.set_assignment(tp, assignment)
            unneeded += self._replica_list(
                tp, (r for r in current.replicas if r not in assignment.replicas)
            )
        self._stop_replicas(unneeded)
        self._zk.watch_partition_states(
            [tp for tp in assignments if tp not in failed],
            lambda tp: self._watch(ev.PartitionReassignmentIsrChange(tp)),
        )
        return failed

    def _write_assignments(
        self, assignments: dict[TopicPartition, ReplicaAssignment]
    ) -> set[TopicPartition]:
        """Write the partitions' assignments into their topic znodes (U1, B6), each topic
        once; returns the partitions whose topic znode is gone or does not decode, each
        reported as failed."""
        if not assignments:
            return set()
        outcomes = self._zk.set_partition_assignments(assignments, self._ctx.epoch_zk_version)
        failed = set()
        for tp, assignment in assignments.items():
            outcome = outcomes[tp.topic]
            if outcome is True:
                continue
            if isinstance(outcome, ZnodeFormatError):
                self._events.emit(MalformedZnode(path=outcome.path, reason=outcome.reason))
            self._failed(tp, assignment, "the topic znode is missing or does not decode")
            failed.add(tp)
        return failed

    def _write_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        """`_write_assignments` of one partition: whether it was written."""
        return not self._write_assignments({tp: assignment})

    def _move_leader_if_required(self, tp: TopicPartition, done: ReplicaAssignment) -> None:
        """B3: elect from the target when the leader left it or is not live; otherwise only
        bump the leader epoch so that every replica learns the final replica set."""
        leadership = self._ctx.leadership(tp)
        leader = leadership.leader_and_isr.leader if leadership else -1
        if leader in done.replicas and self._ctx.is_replica_online(leader, tp=tp):
            self._bump_leader_epochs_and_send({tp: done})
        else:
            self._partitions.handle_state_changes([tp], PartitionState.ONLINE, ReassignElection())

    def _stop_removed_replicas(self, tp: TopicPartition, removed: Iterable[int]) -> None:
        """B4-B5: take the replicas out of the ISR, stop and delete them, forget them."""
        self._stop_replicas(self._replica_list(tp, removed))

    def _stop_replicas(self, doomed: list[PartitionReplica]) -> None:
        """Replicas out of the ISR, stopped, deleted and forgotten, each step for all of them
        in one state change."""
        if not doomed:
            return
        for target in (
            ReplicaState.OFFLINE,
            ReplicaState.DELETION_STARTED,
            ReplicaState.DELETION_SUCCESSFUL,
            ReplicaState.NON_EXISTENT,
        ):
            self._replicas.handle_state_changes(doomed, target)

    def _bump_leader_epochs_and_send(
        self, assignments: dict[TopicPartition, ReplicaAssignment]
    ) -> dict[TopicPartition, str]:
        """A1 and B3: `bump_leader_epochs_and_send` with this controller's context, state
        znodes and batch; why a partition had no state to bump."""
        return bump_leader_epochs_and_send(
            self._ctx,
            self._partition_zk,
            self._events,
            self._batch,
            assignments,
            self._record_bumps,
        )

    # -- helpers --------------------------------------------------------------------------

    def _current_isr(self, tp: TopicPartition) -> tuple[int, ...] | None:
        """The ISR as ZooKeeper holds it now (a leader may have grown it since the context
        last read it); also refreshes the context."""
        return self._current_isrs([tp]).get(tp)

    def _current_isrs(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, tuple[int, ...]]:
        """`_current_isr` of many partitions, read pipelined; a partition whose state znode
        is missing is left out."""
        if not partitions:
            return {}
        reads = self._partition_zk.get_partition_states(partitions)
        isrs: dict[TopicPartition, tuple[int, ...]] = {}
        for tp, state in reads.found.items():
            if state.controller_epoch <= self._ctx.epoch:
                self._ctx.set_leadership(tp, state)
            isrs[tp] = state.leader_and_isr.isr
        return isrs

    @staticmethod
    def _replica_list(tp: TopicPartition, brokers: Iterable[int]) -> list[PartitionReplica]:
        return [PartitionReplica(tp, b) for b in brokers]

    def _reject(self, rejected: tuple[Rejection, ...]) -> None:
        """Remove requests that cannot run from the request znode and report them; the
        partitions keep their assignment."""
        doomed = {(r.topic_partition, r.target) for r in rejected}
        self._zk.remove_reassignments(
            lambda r: (r.topic_partition, r.replicas) in doomed, self._ctx.epoch_zk_version
        )
        for r in rejected:
            self._events.emit(
                ReassignmentRejected(
                    topic=r.topic_partition.topic,
                    partition=r.topic_partition.partition,
                    target=list(r.target),
                    error=r.error.name,
                    reason=r.reason,
                    controller_epoch=self._ctx.epoch,
                ),
            )

    def _failed(self, tp: TopicPartition, assignment: ReplicaAssignment, reason: str) -> None:
        self._events.emit(
            ReassignmentFailed(
                topic=tp.topic,
                partition=tp.partition,
                target=list(assignment.target_replicas),
                reason=reason,
                controller_epoch=self._ctx.epoch,
            ),
        )
