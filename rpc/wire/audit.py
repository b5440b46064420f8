"""ReplicaAudit on the wire: converts its `rpc.messages` values to and from protobuf (the
servicer method is `rpc.wire.data`'s, on a gRPC worker thread). Pure; any thread."""

from __future__ import annotations

from rpc import messages as m
from testbed_rpc import control_pb2 as pb


def replica_audit_request_to_pb(r: m.ReplicaAuditRequest) -> pb.ReplicaAuditRequest:
    """Domain -> protobuf."""
    return pb.ReplicaAuditRequest(topics=list(r.topics))


def replica_audit_request_from_pb(r: pb.ReplicaAuditRequest) -> m.ReplicaAuditRequest:
    """Protobuf -> domain."""
    return m.ReplicaAuditRequest(tuple(r.topics))


def replica_audit_response_to_pb(r: m.ReplicaAuditResponse) -> pb.ReplicaAuditResponse:
    """Domain -> protobuf."""
    return pb.ReplicaAuditResponse(
        broker_id=r.broker_id,
        replicas=[
            pb.AuditedReplica(
                topic=a.topic,
                partition=a.partition,
                leader=a.leader,
                leader_epoch=a.leader_epoch,
                log_start_offset=a.log_start_offset,
                log_end_offset=a.log_end_offset,
                high_watermark=a.high_watermark,
                epochs=[
                    pb.AuditedEpoch(
                        leader_epoch=e.leader_epoch,
                        start_offset=e.start_offset,
                        end_offset=e.end_offset,
                        digest=e.digest,
                    )
                    for e in a.epochs
                ],
                error_message=a.error_message,
            )
            for a in r.replicas
        ],
    )


def replica_audit_response_from_pb(r: pb.ReplicaAuditResponse) -> m.ReplicaAuditResponse:
    """Protobuf -> domain."""
    return m.ReplicaAuditResponse(
        r.broker_id,
        tuple(
            m.AuditedReplica(
                a.topic,
                a.partition,
                a.leader,
                a.leader_epoch,
                a.log_start_offset,
                a.log_end_offset,
                a.high_watermark,
                tuple(
                    m.AuditedEpoch(e.leader_epoch, e.start_offset, e.end_offset, e.digest)
                    for e in a.epochs
                ),
                a.error_message,
            )
            for a in r.replicas
        ),
    )
