"""The controller rig the Kafka controller parity cases share: a hand-filled
`ControllerContext`, `FakePartitionZk`, a `RequestBatch` over a `RecordingSend`, both
state machines and a topic deletion manager over `FakeDeletionZk`, with the numbers of
Kafka's own tests (broker 5, controller epoch 50, topic "t"). Tests run it on their own
thread, standing in for the controller's event thread."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.context import ControllerContext
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakeDeletionZk, FakePartitionZk
from controller.topic_deletion import TopicDeletionManager
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m

BROKER = 5
OTHER = 6
CONTROLLER_EPOCH = 50
EPOCH_ZK_VERSION = 3
TP = TopicPartition("t", 0)


@dataclass
class ParityRig:
    """Everything one parity case drives and inspects."""

    ctx: ControllerContext
    zk: FakePartitionZk
    deletion_zk: FakeDeletionZk
    send: RecordingSend
    events: RecordingEventLog
    batch: RequestBatch
    psm: PartitionStateMachine
    rsm: ReplicaStateMachine
    deletion: TopicDeletionManager

    def live(self, *broker_ids: int) -> None:
        """Register `broker_ids` as the live brokers."""
        self.ctx.set_live_brokers(make_broker(b) for b in broker_ids)

    def lead(
        self, tp: TopicPartition, leader: int, isr: Iterable[int], leader_epoch: int = 0
    ) -> LeaderIsrAndControllerEpoch:
        """A state znode (zkVersion 0) written by this controller, known to the context."""
        stored = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, leader_epoch, tuple(isr), 0), CONTROLLER_EPOCH
        )
        self.zk.put_state(tp, stored, 0)
        self.ctx.set_leadership(tp, stored)
        return stored

    def leader_and_isr_sent(self) -> dict[int, tuple[m.LeaderAndIsrPartitionState, ...]]:
        """Per broker, the partition states of the LeaderAndIsr requests sent."""
        return {b: r.partition_states for b, r in self.send.of_type(m.LeaderAndIsrRequest)}

    def stop_replica_sent(self) -> dict[int, tuple[m.StopReplicaPartitionState, ...]]:
        """Per broker, the partition states of the StopReplica requests sent."""
        return {b: r.partition_states for b, r in self.send.of_type(m.StopReplicaRequest)}

    def update_metadata_sent(self) -> dict[int, tuple[m.UpdateMetadataPartitionState, ...]]:
        """Per broker, the partition states of the UpdateMetadata requests sent."""
        return {b: r.partition_states for b, r in self.send.of_type(m.UpdateMetadataRequest)}


def make_parity_rig(unclean_default: bool = False) -> ParityRig:
    """A rig with no broker, topic or state yet, at controller epoch 50."""
    ctx = ControllerContext()
    ctx.epoch = CONTROLLER_EPOCH
    ctx.epoch_zk_version = EPOCH_ZK_VERSION
    zk = FakePartitionZk(EPOCH_ZK_VERSION)
    deletion_zk = FakeDeletionZk(EPOCH_ZK_VERSION)
    send = RecordingSend()
    events = RecordingEventLog()
    batch = RequestBatch(BROKER, ctx, send)
    psm = PartitionStateMachine(ctx, zk, batch, events, unclean_default)
    rsm = ReplicaStateMachine(ctx, zk, batch, events)
    deletion = TopicDeletionManager(ctx, deletion_zk, psm, rsm, batch, events)
    return ParityRig(ctx, zk, deletion_zk, send, events, batch, psm, rsm, deletion)
