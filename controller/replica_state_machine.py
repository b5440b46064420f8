"""`ReplicaStateMachine`: moves replicas through Kafka's seven replica states.

OfflineReplica sends StopReplica and shrinks the ISR of every partition the replica was
in (keeping the last member, KAFKA-5083), with the same state -> decide -> fenced write ->
context -> batch order as the partition state machine (current state from the context,
re-read from ZooKeeper after a BADVERSION). Event thread only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from kazoo.exceptions import BadVersionError

from controller.context import ControllerContext, PartitionReplica
from controller.leader_election import remove_replica_from_isr
from controller.partition_state_machine import PartitionZk, current_states
from controller.request_batch import RequestBatch
from controller.states import ReplicaState
from eventlog import EventKind, EventLog
from zkdata.errors import ControllerMovedError
from zkdata.model import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)


class ReplicaStateMachine:
    """Replica states of the active controller."""

    def __init__(
        self, context: ControllerContext, zk: PartitionZk, batch: RequestBatch, event_log: EventLog
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._batch = batch
        self._events = event_log

    def startup(self) -> None:
        """Online replicas to OnlineReplica (sending their LeaderAndIsr), the others to
        OfflineReplica."""
        online, offline = [], []
        for tp in self._ctx.all_partitions():
            for r in self._ctx.replicas(tp):
                replica = PartitionReplica(tp, r)
                if self._ctx.is_replica_online(r, True):
                    self._ctx.set_replica_state(replica, ReplicaState.ONLINE)
                    online.append(replica)
                else:
                    self._ctx.set_replica_state(replica, ReplicaState.DELETION_INELIGIBLE)
                    offline.append(replica)
        self.handle_state_changes(online, ReplicaState.ONLINE)
        self.handle_state_changes(offline, ReplicaState.OFFLINE)

    def handle_state_changes(
        self, replicas: Sequence[PartitionReplica], target: ReplicaState
    ) -> None:
        """Move `replicas` to `target` and send the resulting requests."""
        if not replicas:
            return
        self._batch.new_batch()
        try:
            by_broker: dict[int, list[PartitionReplica]] = defaultdict(list)
            for replica in replicas:
                by_broker[replica.replica].append(replica)
            for broker_id in sorted(by_broker):
                self._change(broker_id, by_broker[broker_id], target)
        except BaseException:
            self._batch.clear()
            raise
        self._batch.send()

    def _change(
        self, broker_id: int, replicas: list[PartitionReplica], target: ReplicaState
    ) -> None:
        valid = []
        for replica in replicas:
            current = self._ctx.replica_state(replica)
            if current in target.valid_previous:
                valid.append(replica)
            else:
                self._invalid(replica, current, target)
        done: list[PartitionReplica] = []
        match target:
            case ReplicaState.NEW:
                for replica in valid:
                    tp = replica.topic_partition
                    leadership = self._ctx.leadership(tp)
                    if leadership is not None:
                        if leadership.leader_and_isr.leader == broker_id:
                            self._invalid(replica, self._ctx.replica_state(replica), target)
                            continue
                        self._batch.add_leader_and_isr(
                            [broker_id], tp, leadership, self._ctx.assignment(tp), is_new=True
                        )
                    done.append(replica)
            case ReplicaState.ONLINE:
                for replica in valid:
                    tp = replica.topic_partition
                    if self._ctx.replica_state(replica) is ReplicaState.NEW:
                        assignment = self._ctx.assignment(tp)
                        if broker_id not in assignment.replicas:
                            self._ctx.set_assignment(
                                tp,
                                ReplicaAssignment(
                                    (*assignment.replicas, broker_id),
                                    assignment.adding_replicas,
                                    assignment.removing_replicas,
                                ),
                            )
                    else:
                        leadership = self._ctx.leadership(tp)
                        if leadership is not None:
                            self._batch.add_leader_and_isr(
                                [broker_id], tp, leadership, self._ctx.assignment(tp), is_new=False
                            )
                    done.append(replica)
            case ReplicaState.OFFLINE:
                for replica in valid:
                    self._batch.add_stop_replica([broker_id], replica.topic_partition, delete=False)
                with_leadership = [
                    r.topic_partition for r in valid if self._ctx.leadership(r.topic_partition)
                ]
                shrunk = self._remove_from_isr(broker_id, with_leadership)
                for tp, state in shrunk.items():
                    if not self._ctx.is_topic_queued_for_deletion(tp.topic):
                        recipients = [
                            r
                            for r in self._ctx.replicas(tp)
                            if r != broker_id and self._ctx.is_replica_online(r, True)
                        ]
                        self._batch.add_leader_and_isr(
                            recipients, tp, state, self._ctx.assignment(tp), is_new=False
                        )
                done = [
                    r
                    for r in valid
                    if r.topic_partition in shrunk
                    or self._ctx.leadership(r.topic_partition) is None
                ]
            case ReplicaState.DELETION_STARTED:
                for replica in valid:
                    self._batch.add_stop_replica([broker_id], replica.topic_partition, delete=True)
                done = valid
            case ReplicaState.NON_EXISTENT:
                for replica in valid:
                    tp = replica.topic_partition
                    a = self._ctx.assignment(tp)
                    self._ctx.set_assignment(
                        tp,
                        ReplicaAssignment(
                            tuple(r for r in a.replicas if r != broker_id),
                            tuple(r for r in a.adding_replicas if r != broker_id),
                            tuple(r for r in a.removing_replicas if r != broker_id),
                        ),
                    )
                done = valid
            case _:
                done = valid
        for replica in done:
            self._ctx.set_replica_state(replica, target)
        if valid:
            self._events.emit(
                EventKind.REPLICA_STATE_CHANGE,
                broker_id=broker_id,
                target=target.value,
                replicas=len(done),
                failed=len(valid) - len(done),
            )

    def _remove_from_isr(
        self, broker_id: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Take `broker_id` out of the ISR (and leadership) of `partitions`; returns the
        partitions whose state is now settled, with that state."""
        settled: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = list(partitions)
        first_round = True
        while remaining:
            reads = current_states(self._ctx, self._zk, remaining, trust_context=first_round)
            first_round = False
            updates: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
            for tp in remaining:
                current = reads.found.get(tp)
                if current is None:
                    continue  # missing or malformed: nothing to shrink
                if current.controller_epoch > self._ctx.epoch:
                    raise ControllerMovedError(
                        f"{tp} was written by controller epoch {current.controller_epoch}"
                    )
                lai = current.leader_and_isr
                if broker_id not in lai.isr:  # nothing to shrink (Kafka writes nothing)
                    self._ctx.set_leadership(tp, current)
                    settled[tp] = current
                    continue
                updates[tp] = LeaderIsrAndControllerEpoch(
                    remove_replica_from_isr(lai, broker_id), self._ctx.epoch
                )
            if not updates:
                break
            written = self._zk.update_leader_and_isr(updates, self._ctx.epoch_zk_version)
            remaining = []
            for tp, outcome in written.items():
                if isinstance(outcome, BadVersionError):
                    remaining.append(tp)
                elif isinstance(outcome, Exception):
                    self._events.emit(
                        EventKind.ISR_SHRINK_FAILED,
                        topic=tp.topic,
                        partition=tp.partition,
                        replica=broker_id,
                        reason=type(outcome).__name__,
                        controller_epoch=self._ctx.epoch,
                    )
                else:
                    new = updates[tp].leader_and_isr
                    stored = LeaderIsrAndControllerEpoch(
                        LeaderAndIsr(new.leader, new.leader_epoch, new.isr, int(outcome)),
                        self._ctx.epoch,
                    )
                    self._ctx.set_leadership(tp, stored)
                    settled[tp] = stored
                    self._events.emit(
                        EventKind.ISR_CHANGED,
                        topic=tp.topic,
                        partition=tp.partition,
                        reason="replica offline",
                        by="controller",
                        replica=broker_id,
                        leader=new.leader,
                        leader_epoch=new.leader_epoch,
                        isr=list(new.isr),
                        zk_version=int(outcome),
                        controller_epoch=self._ctx.epoch,
                    )
        return settled

    def _invalid(
        self, replica: PartitionReplica, current: ReplicaState, target: ReplicaState
    ) -> None:
        self._events.emit(
            EventKind.INVALID_STATE_TRANSITION,
            machine="replica",
            topic=replica.topic_partition.topic,
            partition=replica.topic_partition.partition,
            replica=replica.replica,
            current=current.value,
            target=target.value,
        )
