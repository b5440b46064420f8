"""The one place that touches generated protobuf code (`testbed_rpc`): conversions between
`rpc.messages` and protobuf for the control plane (`control`, and AlterIsr's in `alter_isr`)
and its servicer (`control_server`), conversions and the servicer for the data plane
(`data`, and Produce's in `produce`), the client stubs (`clients`), the server (`server`),
the mapping of transport failures to `rpc.errors` (`status`), mutual TLS credentials
(`tls`), the check of who may call what before a handler runs (`access`) and refused TLS
handshakes read from gRPC's tracer (`handshake_trace`). Everything else imports from here.
Threads are each module's own to say.
"""

from rpc.wire.access import BROKER_ONLY_METHODS, AccessPolicy, Refusal
from rpc.wire.alter_isr import (
    alter_isr_request_from_pb,
    alter_isr_request_to_pb,
    alter_isr_response_from_pb,
    alter_isr_response_to_pb,
)
from rpc.wire.audit import (
    replica_audit_request_from_pb,
    replica_audit_request_to_pb,
    replica_audit_response_from_json,
    replica_audit_response_from_pb,
    replica_audit_response_to_json,
    replica_audit_response_to_pb,
)
from rpc.wire.clients import BrokerControlClient, ClientApiClient
from rpc.wire.control import (
    controlled_shutdown_response_from_pb,
    controlled_shutdown_response_to_pb,
    leader_and_isr_request_from_pb,
    leader_and_isr_request_to_pb,
    leader_and_isr_response_from_pb,
    leader_and_isr_response_to_pb,
    stop_replica_request_from_pb,
    stop_replica_request_to_pb,
    stop_replica_response_from_pb,
    stop_replica_response_to_pb,
    update_metadata_request_from_pb,
    update_metadata_request_to_pb,
)
from rpc.wire.control_server import (
    BrokerControlHandler,
    ControlRequests,
    _BrokerControlServicer,
    add_broker_control_service,
)
from rpc.wire.data import (
    ClientApiHandler,
    add_client_api_service,
    fetch_request_from_pb,
    fetch_request_to_pb,
    fetch_response_from_pb,
    fetch_response_to_pb,
    metadata_response_from_pb,
    metadata_response_to_pb,
    offsets_for_leader_epoch_request_from_pb,
    offsets_for_leader_epoch_request_to_pb,
    offsets_for_leader_epoch_response_from_pb,
    offsets_for_leader_epoch_response_to_pb,
)
from rpc.wire.handshake_trace import (
    HandshakeFailure,
    StderrTap,
    traced_environment,
)
from rpc.wire.options import CHANNEL_OPTIONS, MAX_MESSAGE_BYTES
from rpc.wire.produce import (
    produce_request_from_pb,
    produce_request_to_pb,
    produce_response_from_pb,
    produce_response_to_pb,
)
from rpc.wire.server import RpcServer
from rpc.wire.tls import ChannelIdentity

__all__ = [
    "BROKER_ONLY_METHODS",
    "CHANNEL_OPTIONS",
    "MAX_MESSAGE_BYTES",
    "AccessPolicy",
    "BrokerControlClient",
    "BrokerControlHandler",
    "ChannelIdentity",
    "ClientApiClient",
    "ClientApiHandler",
    "ControlRequests",
    "HandshakeFailure",
    "Refusal",
    "RpcServer",
    "StderrTap",
    "_BrokerControlServicer",
    "add_broker_control_service",
    "add_client_api_service",
    "alter_isr_request_from_pb",
    "alter_isr_request_to_pb",
    "alter_isr_response_from_pb",
    "alter_isr_response_to_pb",
    "controlled_shutdown_response_from_pb",
    "controlled_shutdown_response_to_pb",
    "fetch_request_from_pb",
    "fetch_request_to_pb",
    "fetch_response_from_pb",
    "fetch_response_to_pb",
    "leader_and_isr_request_from_pb",
    "leader_and_isr_request_to_pb",
    "leader_and_isr_response_from_pb",
    "leader_and_isr_response_to_pb",
    "metadata_response_from_pb",
    "metadata_response_to_pb",
    "offsets_for_leader_epoch_request_from_pb",
    "offsets_for_leader_epoch_request_to_pb",
    "offsets_for_leader_epoch_response_from_pb",
    "offsets_for_leader_epoch_response_to_pb",
    "produce_request_from_pb",
    "produce_request_to_pb",
    "produce_response_from_pb",
    "produce_response_to_pb",
    "replica_audit_request_from_pb",
    "replica_audit_request_to_pb",
    "replica_audit_response_from_json",
    "replica_audit_response_from_pb",
    "replica_audit_response_to_json",
    "replica_audit_response_to_pb",
    "stop_replica_request_from_pb",
    "stop_replica_request_to_pb",
    "stop_replica_response_from_pb",
    "stop_replica_response_to_pb",
    "traced_environment",
    "update_metadata_request_from_pb",
    "update_metadata_request_to_pb",
]
