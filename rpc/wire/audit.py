"""ReplicaAudit on the wire: converts its `rpc.messages` values to and from protobuf (the
servicer method is `rpc.wire.data`'s, on a gRPC worker thread), and a response to and from
protobuf's JSON mapping, the output of the offline audit of a log directory
(`python -m broker_node.log_dir_audit`). Pure; any thread."""

from __future__ import annotations

from google.protobuf import json_format

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


def replica_audit_response_to_json(r: m.ReplicaAuditResponse) -> str:
    """Domain -> protobuf's JSON mapping (field names as in the .proto)."""
    return json_format.MessageToJson(
        replica_audit_response_to_pb(r), preserving_proto_field_name=True, indent=None
    )


def replica_audit_response_from_json(text: str) -> m.ReplicaAuditResponse:
    """Protobuf's JSON mapping -> domain; `ValueError` when `text` is not a response."""
    try:
        return replica_audit_response_from_pb(json_format.Parse(text, pb.ReplicaAuditResponse()))
    except json_format.ParseError as exc:
        raise ValueError(f"not a ReplicaAuditResponse: {exc}") from exc
