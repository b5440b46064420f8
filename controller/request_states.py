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
    """One partition's entry in a LeaderAndIsr request (made without the named tuple's
    keyword `__new__`: one is made per partition and broker group of every round)."""
    lai = leadership.leader_and_isr
    return tuple.__new__(
        m.LeaderAndIsrPartitionState,
        (
            tp.topic,
            tp.partition,
            leadership.controller_epoch,
            lai.leader,
            lai.leader_epoch,
            lai.isr,
            lai.zk_version,
            assignment.replicas,
            assignment.adding_replicas,
            assignment.removing_replicas,
            is_new,
        ),
    )
