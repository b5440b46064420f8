"""The controller's side of AlterIsr (KIP-497, inter.broker.protocol.version 2.7): a
partition leader asks for a new ISR instead of writing the state znode itself.

As Kafka 2.8's `processAlterIsr`: the request is refused as a whole with
STALE_BROKER_EPOCH when the broker is not live or its epoch is not the one the controller
knows; each partition is then judged (`judge_partition`, pure): UNKNOWN_TOPIC_OR_PARTITION
when the controller has no state for it, FENCED_LEADER_EPOCH when the leader epoch sent
is older than the controller's, the current state when it already says what was asked
(nothing written), otherwise a write. The writes are one pipelined, epoch-fenced
ZooKeeper call, each conditional on the zkVersion the leader sent: BADVERSION answers
INVALID_UPDATE_VERSION. The context takes what was written, every live broker an
UpdateMetadata for the partitions asked about, and the leader one result per partition.

Event thread only (`controller.controller` dispatches `events.AlterIsrReceived`).
"""

from __future__ import annotations

from typing import Protocol

from kazoo.exceptions import BadVersionError, NoNodeError

from controller.context import ControllerContext
from controller.request_batch import SendUpdateMetadata
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import AlterIsrHandled, EventLog
from rpc import messages as m
from rpc.errors import Errors
from zkdata.fenced_writes import OpResult

#: What a partition's judgement comes to: an error, the state to answer with unwritten,
#: or the state to write.
Judgement = Errors | LeaderAndIsr


class IsrWriter(Protocol):
    """The controller's fenced state writes (`KafkaZkClient`)."""

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Conditionally update state znodes, fenced."""
        ...


def check_broker_epoch(known_epoch: int | None, sent_epoch: int) -> Errors:
    """STALE_BROKER_EPOCH unless the broker is live (`known_epoch` not None) at the epoch
    it sent."""
    if known_epoch is None or known_epoch != sent_epoch:
        return Errors.STALE_BROKER_EPOCH
    return Errors.NONE


def judge_partition(
    current: LeaderAndIsr | None, broker_id: int, proposed: m.AlterIsrPartition
) -> tuple[Judgement, bool]:
    """One partition of an AlterIsr from `broker_id`, given the controller's state of it:
    `(answer, write)` - an error and False; the current state and False when it already
    holds the leader, leader epoch and ISR proposed; the proposed state (at the zkVersion
    the leader sent) and True when it must be written."""
    if current is None:
        return Errors.UNKNOWN_TOPIC_OR_PARTITION, False
    if proposed.leader_epoch < current.leader_epoch:
        return Errors.FENCED_LEADER_EPOCH, False
    wanted = LeaderAndIsr(
        broker_id, proposed.leader_epoch, proposed.new_isr, proposed.current_isr_version
    )
    if (wanted.leader, wanted.leader_epoch, wanted.isr) == (
        current.leader,
        current.leader_epoch,
        current.isr,
    ):
        return current, False
    return wanted, True


def written_outcome(wanted: LeaderAndIsr, outcome: OpResult) -> Judgement:
    """The answer for a conditional write of `wanted`: the state at its new zkVersion, or
    INVALID_UPDATE_VERSION (BADVERSION), UNKNOWN_TOPIC_OR_PARTITION (the znode is gone) or
    UNKNOWN_SERVER_ERROR (any other failure)."""
    if isinstance(outcome, BadVersionError):
        return Errors.INVALID_UPDATE_VERSION
    if isinstance(outcome, NoNodeError):
        return Errors.UNKNOWN_TOPIC_OR_PARTITION
    if isinstance(outcome, Exception | str | bool):
        return Errors.UNKNOWN_SERVER_ERROR
    return LeaderAndIsr(wanted.leader, wanted.leader_epoch, wanted.isr, int(outcome))


def result(tp: TopicPartition, answer: Judgement) -> m.AlterIsrPartitionResult:
    """The wire result of one partition."""
    if isinstance(answer, Errors):
        return m.AlterIsrPartitionResult(tp, answer)
    return m.AlterIsrPartitionResult(
        tp, Errors.NONE, answer.leader, answer.leader_epoch, answer.isr, answer.zk_version
    )


def process_alter_isr(
    ctx: ControllerContext,
    zk: IsrWriter,
    event_log: EventLog,
    send_update_metadata: SendUpdateMetadata,
    request: m.AlterIsrRequest,
) -> m.AlterIsrResponse:
    """Judge, write and answer one AlterIsr (see the module docstring). A failed epoch check
    raises `ControllerMovedError` (the caller answers NOT_CONTROLLER and resigns)."""
    known = ctx.live_broker(request.broker_id)
    error = check_broker_epoch(known.epoch if known else None, request.broker_epoch)
    if error is not Errors.NONE:
        event_log.emit(
            AlterIsrHandled(
                broker_id=request.broker_id,
                broker_epoch=request.broker_epoch,
                error=error.name,
                partitions=len(request.partitions),
                written=0,
                rejected=[],
                controller_epoch=ctx.epoch,
            )
        )
        return m.AlterIsrResponse(error)
    answers: dict[TopicPartition, Judgement] = {}
    writes: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
    # one entry per partition, the last one named (Kafka builds a map from the request)
    for tp, proposed in {p.topic_partition: p for p in request.partitions}.items():
        state = ctx.leadership(tp)
        answer, write = judge_partition(
            state.leader_and_isr if state else None, request.broker_id, proposed
        )
        answers[tp] = answer
        if write and isinstance(answer, LeaderAndIsr):
            writes[tp] = LeaderIsrAndControllerEpoch(answer, ctx.epoch)
    written = 0
    if writes:
        outcomes = zk.update_leader_and_isr(writes, ctx.epoch_zk_version)
        for tp, outcome in outcomes.items():
            answer = written_outcome(writes[tp].leader_and_isr, outcome)
            answers[tp] = answer
            if isinstance(answer, LeaderAndIsr):
                ctx.set_leadership(tp, LeaderIsrAndControllerEpoch(answer, ctx.epoch))
                written += 1
    known_partitions = sorted(tp for tp in answers if ctx.leadership(tp) is not None)
    if known_partitions:
        send_update_metadata(ctx.live_or_shutting_down_broker_ids(), known_partitions)
    rejected = sorted(f"{tp}:{a.name}" for tp, a in answers.items() if isinstance(a, Errors))
    event_log.emit(
        AlterIsrHandled(
            broker_id=request.broker_id,
            broker_epoch=request.broker_epoch,
            error=Errors.NONE.name,
            partitions=len(answers),
            written=written,
            rejected=rejected,
            controller_epoch=ctx.epoch,
        )
    )
    return m.AlterIsrResponse(Errors.NONE, tuple(result(tp, a) for tp, a in answers.items()))
