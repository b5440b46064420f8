"""Broker-side fencing decisions (docs/fencing.md), as Kafka 2.8's broker makes them.

Pure functions of explicit values; the request handler applies them under its lock.

Request level (LeaderAndIsr, UpdateMetadata, StopReplica), in Kafka's order:
  1. broker epoch in the request older than ours        -> STALE_BROKER_EPOCH (77)
     (-1 means "unknown" and passes; a newer one passes: the controller may learn of our
     new registration before we do)
  2. controller epoch older than the highest obeyed      -> STALE_CONTROLLER_EPOCH (11)
Partition level:
  LeaderAndIsr: leader epoch not newer than ours          -> STALE_CONTROLLER_EPOCH
                this broker not among the replicas        -> UNKNOWN_TOPIC_OR_PARTITION
  StopReplica:  leader epoch not newer (unless -1/-2)   -> FENCED_LEADER_EPOCH
                (an equal epoch is fenced too, as Kafka 2.8's ReplicaManager does: only a
                newer epoch, the deletion sentinel -2 or "no epoch" -1 stops a hosted
                partition)
Two historical bugs (docs/bugs.md) switch a request-level rule off: `kafka-1188` the
controller-epoch check, `kip-380` the broker-epoch check; the handler passes which rules
hold. A third, `kafka-9839`, makes the broker-epoch rule strict: any epoch other than ours
is stale, a newer one too (`accept_newer_broker_epoch` false).

The data plane's leader-epoch rule (Fetch, OffsetsForLeaderEpoch) is `Partition`'s
(`broker_node.partition.leader_epoch_error`).
"""

from __future__ import annotations

from domain import EPOCH_DURING_DELETE, NO_EPOCH, UNKNOWN_BROKER_EPOCH
from rpc.errors import Errors


def is_broker_epoch_stale(
    request_broker_epoch: int, current_broker_epoch: int, accept_newer: bool = True
) -> bool:
    """True when the request was addressed to an earlier registration of this broker;
    without `accept_newer` (`kafka-9839`) also when it was addressed to a later one, which
    the controller can know before this broker has cached it."""
    if request_broker_epoch == UNKNOWN_BROKER_EPOCH:
        return False
    if not accept_newer:
        return request_broker_epoch != current_broker_epoch
    return request_broker_epoch < current_broker_epoch


def check_control_request(
    request_controller_epoch: int,
    request_broker_epoch: int,
    highest_controller_epoch: int,
    current_broker_epoch: int,
    fence_broker_epoch: bool = True,
    fence_controller_epoch: bool = True,
    accept_newer_broker_epoch: bool = True,
) -> Errors:
    """The request-level verdict for a controller-to-broker request; a rule switched off
    (`fence_broker_epoch`, `fence_controller_epoch` false) lets every request through it;
    `accept_newer_broker_epoch` false rejects a request addressed to a newer registration
    (`kafka-9839`)."""
    if fence_broker_epoch and is_broker_epoch_stale(
        request_broker_epoch, current_broker_epoch, accept_newer_broker_epoch
    ):
        return Errors.STALE_BROKER_EPOCH
    if fence_controller_epoch and request_controller_epoch < highest_controller_epoch:
        return Errors.STALE_CONTROLLER_EPOCH
    return Errors.NONE


def check_leader_and_isr_partition(
    request_leader_epoch: int,
    current_leader_epoch: int | None,
    replicas: tuple[int, ...],
    local_broker_id: int,
) -> Errors:
    """Per-partition verdict for LeaderAndIsr; `current_leader_epoch` None = not hosted."""
    if current_leader_epoch is not None and request_leader_epoch <= current_leader_epoch:
        return Errors.STALE_CONTROLLER_EPOCH
    if local_broker_id not in replicas:
        return Errors.UNKNOWN_TOPIC_OR_PARTITION
    return Errors.NONE


def check_stop_replica_partition(
    request_leader_epoch: int, current_leader_epoch: int | None
) -> Errors:
    """Per-partition verdict for StopReplica; `current_leader_epoch` None = not hosted."""
    if request_leader_epoch in (EPOCH_DURING_DELETE, NO_EPOCH) or current_leader_epoch is None:
        return Errors.NONE
    if request_leader_epoch > current_leader_epoch:
        return Errors.NONE
    return Errors.FENCED_LEADER_EPOCH
