"""The per-partition states the control requests carry, made from the controller's
values (pure; the event thread calls them while building a round's requests)."""

from __future__ import annotations

from domain import EPOCH_DURING_DELETE, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from rpc import messages as m
from zkdata.model import ReplicaAssignment


def during_delete(lai: LeaderAndIsr) -> LeaderAndIsr:
    """What UpdateMetadata says of a partition whose topic is queued for deletion (Kafka's
    `LeaderAndIsr.duringDelete`): leader -2 (brokers drop the partition from their
    metadata), the ISR, and the initial leader epoch and zkVersion."""
    return LeaderAndIsr(EPOCH_DURING_DELETE, 0, lai.isr, 0)


def leader_and_isr_state(
    tp: TopicPartition,
    leadership: LeaderIsrAndControllerEpoch,
    assignment: ReplicaAssignment,
    is_new: bool,
) -> m.LeaderAndIsrPartitionState:
    """One partition's entry in a LeaderAndIsr request."""
    lai = leadership.leader_and_isr
    return m.LeaderAndIsrPartitionState(
        topic=tp.topic,
        partition=tp.partition,
        controller_epoch=leadership.controller_epoch,
        leader=lai.leader,
        leader_epoch=lai.leader_epoch,
        isr=lai.isr,
        zk_version=lai.zk_version,
        replicas=assignment.replicas,
        adding_replicas=assignment.adding_replicas,
        removing_replicas=assignment.removing_replicas,
        is_new=is_new,
    )
