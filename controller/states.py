"""Controller enums: `ControllerState` (what the event thread is busy with, Kafka's values)
and the partition and replica states with their transition tables; and why a state change
is aborted when another controller wrote the partition's state (`written_by_newer_controller`,
shared by both state machines and reassignment).

Every event names one; the event manager reports the current state and times each.
"""

from __future__ import annotations

from enum import Enum, IntEnum


class ControllerState(IntEnum):
    """Kafka's `ControllerState` values, as exported in the ControllerState metric."""

    IDLE = 0
    CONTROLLER_CHANGE = 1
    BROKER_CHANGE = 2
    TOPIC_CHANGE = 3
    TOPIC_DELETION = 4
    ALTER_PARTITION_REASSIGNMENT = 5
    AUTO_LEADER_BALANCE = 6
    MANUAL_LEADER_BALANCE = 7
    CONTROLLED_SHUTDOWN = 8
    ISR_CHANGE = 9
    LEADER_AND_ISR_RESPONSE_RECEIVED = 10
    LOG_DIR_CHANGE = 11
    CONTROLLER_SHUTDOWN = 12
    UNCLEAN_LEADER_ELECTION_ENABLE = 13
    TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE = 14
    LIST_PARTITION_REASSIGNMENTS = 15
    UPDATE_METADATA_RESPONSE_RECEIVED = 16
    UPDATE_FEATURES = 17


class PartitionState(Enum):
    """Kafka's partition states. `valid_previous` is the transition table."""

    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"

    @property
    def valid_previous(self) -> frozenset[PartitionState]:
        """The states this state may be entered from."""
        return _PARTITION_TRANSITIONS[self]


_PARTITION_TRANSITIONS: dict[PartitionState, frozenset[PartitionState]] = {
    PartitionState.NEW: frozenset({PartitionState.NON_EXISTENT}),
    PartitionState.ONLINE: frozenset(
        {PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE}
    ),
    PartitionState.OFFLINE: frozenset(
        {PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE}
    ),
    PartitionState.NON_EXISTENT: frozenset({PartitionState.OFFLINE}),
}


class ReplicaState(Enum):
    """Kafka's seven replica states. `valid_previous` is the transition table."""

    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"

    @property
    def valid_previous(self) -> frozenset[ReplicaState]:
        """The states this state may be entered from."""
        return _REPLICA_TRANSITIONS[self]


_REPLICA_TRANSITIONS: dict[ReplicaState, frozenset[ReplicaState]] = {
    ReplicaState.NEW: frozenset({ReplicaState.NON_EXISTENT}),
    ReplicaState.ONLINE: frozenset(
        {
            ReplicaState.NEW,
            ReplicaState.ONLINE,
            ReplicaState.OFFLINE,
            ReplicaState.DELETION_INELIGIBLE,
        }
    ),
    ReplicaState.OFFLINE: frozenset(
        {
            ReplicaState.NEW,
            ReplicaState.ONLINE,
            ReplicaState.OFFLINE,
            ReplicaState.DELETION_INELIGIBLE,
        }
    ),
    ReplicaState.DELETION_STARTED: frozenset({ReplicaState.OFFLINE}),
    ReplicaState.DELETION_SUCCESSFUL: frozenset({ReplicaState.DELETION_STARTED}),
    ReplicaState.DELETION_INELIGIBLE: frozenset(
        {ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED}
    ),
    ReplicaState.NON_EXISTENT: frozenset({ReplicaState.DELETION_SUCCESSFUL}),
}


def written_by_newer_controller(znode_epoch: int, own_epoch: int) -> str:
    """Why one partition's state change is aborted: its state znode has a newer controller
    epoch (pure). Kafka fails that partition only; the fenced write detects a lost term."""
    return (
        f"state znode written by another controller (epoch {znode_epoch}, "
        f"this controller's is {own_epoch}): aborting its state change"
    )
