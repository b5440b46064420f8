"""The ReplicaAudit request and response of the client API as frozen value objects
(re-exported by `rpc.messages`): what one broker's replicas hold, per leader epoch, for a
check at the end of a run that the replicas agree. Any thread."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReplicaAuditRequest:
    """Describe the hosted replicas of `topics` (empty: every hosted replica)."""

    topics: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuditedEpoch:
    """The records of one leader epoch in a replica's log: offsets
    `start_offset`..`end_offset` (exclusive) and the sha256 (hex) of those records
    (`broker_node.replica_audit.digest_records`)."""

    leader_epoch: int
    start_offset: int
    end_offset: int
    digest: str


@dataclass(frozen=True, slots=True)
class AuditedReplica:
    """One replica as its broker holds it: its leadership as the last LeaderAndIsr gave
    it, its log's offsets and its epochs in offset order. `error_message` names why the log
    could not be read (then `epochs` is empty)."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    epochs: tuple[AuditedEpoch, ...] = ()
    error_message: str = ""


@dataclass(frozen=True, slots=True)
class ReplicaAuditResponse:
    """The replicas of one broker, ordered by topic and partition."""

    broker_id: int
    replicas: tuple[AuditedReplica, ...] = ()
