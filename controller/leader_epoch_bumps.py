"""Bumping the leader epoch of many partitions with their leader and ISR unchanged (Kafka's
`updateLeaderEpoch`), as a reassignment does so that every replica learns a new replica
set (`controller.reassignment`, A1 and B3).

Each attempt is one pipelined read of the partitions left and one fenced write of their
bumped states, each conditional on the zkVersion just read; a BADVERSION (a leader changed
the ISR meanwhile) reads that partition again at the next attempt. A state znode written
by a newer controller fails its partition only; a lost controllership shows as the fenced
write's `ControllerMovedError`. The context learns every state written; the bumped states
then go out in one LeaderAndIsr batch (`bump_leader_epochs_and_send`). Bug switch
`kafka-9212` keeps the bumped states out of the context, as Kafka's reassignment did before
KAFKA-9212: the LeaderAndIsr carries the new leader epoch, but the UpdateMetadata sent with
it (and any later one) the epoch the context last knew. Event thread only.
"""

from __future__ import annotations

from kazoo.exceptions import BadVersionError

from controller.context import ControllerContext
from controller.partition_state_machine import PartitionZk
from controller.request_batch import RequestBatch
from controller.states import written_by_newer_controller
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventLog, MalformedZnode
from zkdata.model import ReplicaAssignment
from zkdata.reassignment import MAX_ATTEMPTS

#: Why a partition's leader epoch could not be bumped, when no newer controller wrote it.
MISSING = "the state znode is missing or does not decode"


def bump_leader_epochs(
    ctx: ControllerContext,
    zk: PartitionZk,
    events: EventLog,
    partitions: list[TopicPartition],
    record: bool = True,
) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch], dict[TopicPartition, str]]:
    """The bumped states now in ZooKeeper (and in `ctx`, unless not `record`: bug switch
    `kafka-9212`), and why the others could not be written; partitions whose leaders kept
    changing the ISR for `MAX_ATTEMPTS` attempts fail too (the next ISR change tries
    again)."""
    bumped: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    failures: dict[TopicPartition, str] = {}
    pending = partitions
    for _ in range(MAX_ATTEMPTS):
        if not pending:
            break
        reads = zk.get_partition_states(pending)
        for error in reads.malformed.values():
            events.emit(MalformedZnode(path=error.path, reason=error.reason))
        wanted: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in pending:
            current = reads.found.get(tp)
            if current is None:
                failures[tp] = MISSING
            elif current.controller_epoch > ctx.epoch:
                failures[tp] = written_by_newer_controller(current.controller_epoch, ctx.epoch)
            else:
                lai = current.leader_and_isr
                wanted[tp] = LeaderIsrAndControllerEpoch(
                    lai.new_leader_and_isr(lai.leader, lai.isr), ctx.epoch
                )
        outcomes = zk.update_leader_and_isr(wanted, ctx.epoch_zk_version) if wanted else {}
        pending = []
        for tp, outcome in outcomes.items():
            if isinstance(outcome, BadVersionError):
                pending.append(tp)  # a leader changed the ISR meanwhile: read again
            elif isinstance(outcome, Exception):
                failures[tp] = MISSING
            else:
                new = wanted[tp].leader_and_isr
                stored = LeaderIsrAndControllerEpoch(
                    LeaderAndIsr(new.leader, new.leader_epoch, new.isr, int(outcome)), ctx.epoch
                )
                if record:
                    ctx.set_leadership(tp, stored)
                bumped[tp] = stored
    for tp in pending:
        failures[tp] = MISSING
    return bumped, failures


def bump_leader_epochs_and_send(
    ctx: ControllerContext,
    partition_zk: PartitionZk,
    events: EventLog,
    batch: RequestBatch,
    assignments: dict[TopicPartition, ReplicaAssignment],
    record: bool = True,
) -> dict[TopicPartition, str]:
    """Kafka's `updateLeaderEpochAndSendRequest` for many partitions: the same leader and
    ISR at the next leader epoch, written conditionally (fenced multis; re-read after
    BADVERSION), then one request batch with a LeaderAndIsr to every replica in each
    partition's `assignment.replicas`. Returns why a partition had no state to bump.
    `record` as for `bump_leader_epochs`."""
    bumped, failures = bump_leader_epochs(ctx, partition_zk, events, list(assignments), record)
    if bumped:
        batch.new_batch()
        for tp, state in bumped.items():
            assignment = assignments[tp]
            batch.add_leader_and_isr(assignment.replicas, tp, state, assignment, is_new=False)
        batch.send()
    return failures
