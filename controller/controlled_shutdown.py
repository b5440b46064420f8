"""The controller's side of controlled shutdown (Kafka's `doControlledShutdown`): a broker
about to stop asks the controller to move its leaderships first. Event thread only (the
gRPC thread that received the request waits for the answer)."""

from __future__ import annotations

from controller.context import ControllerContext, PartitionReplica
from controller.election_strategies import ControlledShutdownElection
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.states import PartitionState, ReplicaState
from domain import UNKNOWN_BROKER_EPOCH, TopicPartition
from eventlog import ControlledShutdown, EventLog
from rpc.errors import Errors
from rpc.messages import ControlledShutdownResponse


def controlled_shutdown(
    ctx: ControllerContext,
    partitions: PartitionStateMachine,
    replicas: ReplicaStateMachine,
    event_log: EventLog,
    broker_id: int,
    broker_epoch: int,
) -> ControlledShutdownResponse:
    """Answer a broker's ControlledShutdown: refuse a stale broker epoch or an unknown
    broker; otherwise mark it shutting down, elect new leaders for what it leads, take its
    follower replicas offline (StopReplica, ISR shrink), and answer with the replicated
    partitions it still leads."""
    known = ctx.broker_epoch(broker_id)
    if broker_epoch != UNKNOWN_BROKER_EPOCH and broker_epoch < known:
        return ControlledShutdownResponse(Errors.STALE_BROKER_EPOCH)
    if broker_id not in ctx.live_or_shutting_down_broker_ids():
        return ControlledShutdownResponse(Errors.BROKER_NOT_AVAILABLE)
    ctx.mark_shutting_down(broker_id)

    def movable(tp: TopicPartition) -> bool:
        return (
            len(ctx.replicas(tp)) > 1
            and ctx.leadership(tp) is not None
            and not ctx.is_topic_queued_for_deletion(tp.topic)
        )

    def leader(tp: TopicPartition) -> int:
        state = ctx.leadership(tp)
        return state.leader_and_isr.leader if state else -1

    on_broker = sorted(tp for tp in ctx.partitions_on_broker(broker_id) if movable(tp))
    led = [tp for tp in on_broker if leader(tp) == broker_id]
    followed = [tp for tp in on_broker if leader(tp) != broker_id]
    partitions.handle_state_changes(led, PartitionState.ONLINE, ControlledShutdownElection())
    replicas.handle_state_changes(
        [PartitionReplica(tp, broker_id) for tp in followed], ReplicaState.OFFLINE
    )
    remaining = tuple(tp for tp in ctx.partitions_led_by(broker_id) if movable(tp))
    event_log.emit(
        ControlledShutdown(
            broker_id=broker_id,
            broker_epoch=broker_epoch,
            led=len(led),
            followed=len(followed),
            remaining=len(remaining),
            controller_epoch=ctx.epoch,
        ),
    )
    return ControlledShutdownResponse(Errors.NONE, remaining)
