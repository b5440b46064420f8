"""ReplicaAudit on the wire (`rpc.wire.audit`): the request and response survive domain ->
protobuf -> bytes -> domain, the response its JSON mapping too (the offline audit's
output), and a `ClientApiClient` reaches a handler's `replica_audit`
through the servicer (an in-process loopback stub that serializes every call; no sockets).
"""

from __future__ import annotations

import pytest

from rpc import messages as m
from rpc.testing import RecordingHandlers
from rpc.wire import (
    replica_audit_request_from_pb,
    replica_audit_request_to_pb,
    replica_audit_response_from_json,
    replica_audit_response_from_pb,
    replica_audit_response_to_json,
    replica_audit_response_to_pb,
)
from rpc.wire.testing import loopback_client_api
from testbed_rpc import control_pb2 as pb

ANSWER = m.ReplicaAuditResponse(
    2,
    (
        m.AuditedReplica(
            "t",
            0,
            1,
            7,
            3,
            12,
            10,
            (m.AuditedEpoch(5, 3, 8, "a" * 64), m.AuditedEpoch(7, 8, 12, "b" * 64)),
        ),
        m.AuditedReplica("t", 1, -1, 4, -1, -1, -1, error_message="LogError: log closed"),
    ),
)


def test_the_request_survives_the_wire() -> None:
    request = m.ReplicaAuditRequest(("a", "b"))
    data = replica_audit_request_to_pb(request).SerializeToString()
    assert replica_audit_request_from_pb(pb.ReplicaAuditRequest.FromString(data)) == request


def test_the_response_survives_the_wire() -> None:
    data = replica_audit_response_to_pb(ANSWER).SerializeToString()
    assert replica_audit_response_from_pb(pb.ReplicaAuditResponse.FromString(data)) == ANSWER


class Auditing(RecordingHandlers):
    """Answers ReplicaAudit with `ANSWER` and keeps the request."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[m.ReplicaAuditRequest] = []

    def replica_audit(self, request: m.ReplicaAuditRequest) -> m.ReplicaAuditResponse:
        """`ANSWER`."""
        self.asked.append(request)
        return ANSWER


def test_a_client_call_reaches_the_handler_and_returns_its_answer() -> None:
    handler = Auditing()
    with loopback_client_api(handler) as client:
        assert client.replica_audit(m.ReplicaAuditRequest(("t",)), timeout_s=5) == ANSWER
    assert handler.asked == [m.ReplicaAuditRequest(("t",))]


def test_the_response_survives_its_json_mapping() -> None:
    assert replica_audit_response_from_json(replica_audit_response_to_json(ANSWER)) == ANSWER


def test_json_that_is_not_a_response_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a ReplicaAuditResponse"):
        replica_audit_response_from_json('{"replicas": 3}')
