"""Broker process, mutual TLS and the broker side of the control plane.

Written by a broker about itself: its start and stop, its ZooKeeper session and
registration, the TLS refusals of a broker started with `--tls-dir`
([security.md](security.md)), and what it did with the controller's requests
(`control_requests.py`, `grpc-worker*`).

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import ABSENT, Absent, Event

__all__ = [
    "BrokerRegistered",
    "BugSwitchesOn",
    "ControlledShutdownAttempt",
    "LiveBrokersChanged",
    "NodeStarted",
    "NodeStopped",
    "PartitionFenced",
    "RequestAccepted",
    "RequestFailed",
    "RequestInvalid",
    "RequestRejected",
    "TlsHandshakeRefused",
    "UnauthorizedRequest",
    "ZkSessionState",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeStarted(Event):
    """A broker process started.

    `node.py`, main thread.
    """

    kind: ClassVar[str] = "node_started"

    broker_id: int
    """this broker's id"""
    zk_connect: str
    """the ZooKeeper connect string, including any chroot"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BugSwitchesOn(Event):
    """The broker process re-introduces historical bugs (docs/bugs.md).

    `node.py`, main thread; right after `node_started`, only when a switch is on.
    """

    kind: ClassVar[str] = "bug_switches_on"

    switches: list[str]
    """the historical bugs this process re-introduces (sorted names, docs/bugs.md)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeStopped(Event):
    """A broker process stopped cleanly.

    `node.py`, main thread; last line of a clean stop.
    """

    kind: ClassVar[str] = "node_stopped"

    broker_id: int
    """this broker's id"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlledShutdownAttempt(Event):
    """One attempt of a stopping broker's controlled shutdown.

    `node.py`, main thread; one per attempt during a stop.

    The attempts stop at the first `"done"`. Without one, the broker stops uncleanly after the
    last attempt (no further event).
    """

    kind: ClassVar[str] = "controlled_shutdown_attempt"

    broker_id: int
    """this broker's id"""
    broker_epoch: int
    """this broker's epoch, as sent in the request"""
    attempt: int
    """1, 2, ... up to `--controlled-shutdown-max-retries`"""
    outcome: str
    """`"done"`; `"<n> partitions still led"`; the controller's error name (e.g.
    `"NOT_CONTROLLER"`, `"STALE_BROKER_EPOCH"`); `"no controller"`; or `"failed: <exception
    class>"` when ZooKeeper or the call failed
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class ZkSessionState(Event):
    """The broker's ZooKeeper session changed state.

    `zk_session.py`, kazoo connection thread.

    The first connection at start-up is not logged: the listener is added after it. A clean stop
    logs `"lost"` as well.
    """

    kind: ClassVar[str] = "zk_session_state"

    state: str
    """`"connected"`, `"suspended"` or `"lost"` (kazoo's `KazooState`, lower-cased)"""
    session_id: str | None
    """the session as kazoo reports it at that moment, or `null`"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRegistered(Event):
    """The broker registered itself in `/brokers/ids` (a new broker epoch).

    `registration.py`; main thread, or the event thread after an expiry.
    """

    kind: ClassVar[str] = "broker_registered"

    broker_id: int
    """this broker's id"""
    broker_epoch: int
    """the new broker epoch (czxid of `/brokers/ids/N`)"""
    previous_broker_epoch: int
    """the epoch it replaces; `-1` on the first registration of the process"""
    reregistration: bool
    """`true` from the second registration of this process on"""
    session_id: str
    """the session owning the registration (`"0x0"` if unknown)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsHandshakeRefused(Event):
    """A client was refused in the TLS handshake of the broker's gRPC port.

    `grpc-trace-reader`.

    A client was refused in the TLS handshake of the broker's gRPC port: no handler ran. Read
    from gRPC's `handshaker` tracer (`rpc/wire/handshake_trace.py`). A connection closed before
    the TLS exchange (a health probe's TCP connect) is no refusal.
    """

    kind: ClassVar[str] = "tls_handshake_refused"

    peer: str
    """the client's address as gRPC names it, e.g. `"ipv4:172.18.0.1:41236"`"""
    reason: str
    """`"not a TLS client"`, `"no client certificate"`, `"client certificate not trusted (not of
    the cluster CA)"` or `"TLS handshake failed"`
    """
    error: str
    """gRPC's error text, with OpenSSL's reason"""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnauthorizedRequest(Event):
    """An authenticated caller was refused a call its identity may not make.

    `grpc-worker*`.

    A caller with a certificate of the cluster's CA made a call its identity may not make
    (CLUSTER_AUTHORIZATION_FAILED, `rpc/wire/access.py`): a non-broker certificate (the
    client's) sending LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown or
    AlterIsr, or a Fetch or OffsetsForLeaderEpoch as a follower (`replica_id` >= 0); a
    broker's own certificate asking a ControlledShutdown for another broker. Or it presented
    no identity. Refused before the handler.
    """

    kind: ClassVar[str] = "unauthorized_request"

    peer: str
    """the caller's address, e.g. `"ipv4:127.0.0.1:40718"`"""
    identity: str
    """the certificate's common name: `"broker-N"` (broker N's own), `"broker"` (the shared
    broker certificate), `"client"`; `""` without one"""
    method: str
    """`"<service>/<method>"`, e.g. `"BrokerControl/LeaderAndIsr"`"""
    status: str
    """the gRPC status answered: `"PERMISSION_DENIED"` or `"UNAUTHENTICATED"`"""
    reason: str
    """what was refused, for people"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestAccepted(Event):
    """The broker applied a controller's request."""

    kind: ClassVar[str] = "request_accepted"

    api: str
    """`"LeaderAndIsr"`, `"UpdateMetadata"` or `"StopReplica"`"""
    controller_id: int
    """from the request header"""
    controller_epoch: int
    """from the request header"""
    request_broker_epoch: int
    """the broker epoch the request was addressed to (`-1` = unknown)"""
    broker_epoch: int
    """this broker's epoch as the fencing check read it (a registration that lands while the
    request is applied does not change it)
    """
    partitions: int
    """number of partition states in the request"""
    partition_errors: int
    """how many of them got an error (always `0` for UpdateMetadata)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveBrokersChanged(Event):
    """An accepted UpdateMetadata changed the brokers this broker's metadata lists as live
    (what it tells clients and where its fetchers find leaders). Written only on a change,
    so a broker's last one says whom it believes alive.

    `control_requests.py`, `grpc-worker*`.
    """

    kind: ClassVar[str] = "live_brokers_changed"

    live_brokers: list[int]
    """the live broker ids of the request (sorted)"""
    added: list[int]
    """ids listed now and not before"""
    removed: list[int]
    """ids listed before and not now"""
    controller_id: int
    """from the request header"""
    controller_epoch: int
    """from the request header"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRejected(Event):
    """The broker refused a controller's request as fenced."""

    kind: ClassVar[str] = "request_rejected"

    api: str
    """as above"""
    error: str
    """`"STALE_BROKER_EPOCH"`/`77`, `"STALE_CONTROLLER_EPOCH"`/`11`, or
    `"BROKER_NOT_AVAILABLE"`/`8` (the request, addressed to a broker epoch, arrived before
    this process registered and the registration did not follow within 30 s)
    """
    error_code: int
    """`"STALE_BROKER_EPOCH"`/`77`, `"STALE_CONTROLLER_EPOCH"`/`11`, or
    `"BROKER_NOT_AVAILABLE"`/`8` (the request, addressed to a broker epoch, arrived before
    this process registered and the registration did not follow within 30 s)
    """
    controller_id: int
    """from the request header"""
    controller_epoch: int
    """from the request header"""
    request_broker_epoch: int
    """from the request header"""
    broker_epoch: int
    """this broker's epoch as the fencing check read it"""
    highest_controller_epoch: int
    """the highest controller epoch this broker had obeyed"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionFenced(Event):
    """Partitions of an accepted request that the broker did not apply (fenced).

    One per accepted LeaderAndIsr or StopReplica that had fenced partitions.

    A request with no fenced partition writes no `partition_fenced`. The request's
    `request_accepted` follows it and counts the same partitions in `partition_errors`.
    """

    kind: ClassVar[str] = "partition_fenced"

    api: str
    """`"LeaderAndIsr"` or `"StopReplica"`"""
    controller_id: int
    """from the request header"""
    controller_epoch: int
    """from the request header"""
    count: int
    """how many of the request's partitions were fenced (not applied)"""
    errors: dict[str, int]
    """object: error name → number of partitions, e.g. `{"STALE_CONTROLLER_EPOCH": 812}`.
    LeaderAndIsr: `"STALE_CONTROLLER_EPOCH"` (leader epoch not newer) or
    `"UNKNOWN_TOPIC_OR_PARTITION"` (not a replica); StopReplica: `"FENCED_LEADER_EPOCH"`
    """
    sample: list[dict[str, object]]
    """the first 10 fenced partitions (`FENCED_SAMPLE`) in request order, each an object
    `{"topic", "partition", "error", "leader_epoch", "current_leader_epoch"}`: the leader
    epoch in the request and the hosted one (`null` if not hosted)
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestInvalid(Event):
    """Field validation refused a request, or some of its entries.

    `control_requests.py` and `client_api.py`, `grpc-worker*`.

    Written once for a request that field validation refused as a whole, or with some of its
    entries refused ([security.md](security.md), Limits and validation). It comes before any
    fencing check: a refused request writes no `request_rejected` or `request_accepted`; a
    request with refused entries goes on to them.
    """

    kind: ClassVar[str] = "request_invalid"

    api: str
    """`"LeaderAndIsr"`, `"UpdateMetadata"`, `"StopReplica"`, `"ControlledShutdown"`,
    `"ElectLeaders"`, `"Produce"`, `"Fetch"`, `"OffsetsForLeaderEpoch"` or `"Metadata"`
    """
    error: str
    """the request-level error, or the first refused entry's: `"INVALID_REQUEST"`/`42`,
    `"INVALID_TOPIC_EXCEPTION"`/`17`, `"INVALID_REPLICA_ASSIGNMENT"`/`39`,
    `"UNKNOWN_TOPIC_OR_PARTITION"`/`3`, `"OFFSET_OUT_OF_RANGE"`/`1`,
    `"INVALID_REQUIRED_ACKS"`/`21`, `"RECORD_LIST_TOO_LARGE"`/`18`,
    `"INVALID_TIMESTAMP"`/`32`
    """
    error_code: int
    """the request-level error, or the first refused entry's: `"INVALID_REQUEST"`/`42`,
    `"INVALID_TOPIC_EXCEPTION"`/`17`, `"INVALID_REPLICA_ASSIGNMENT"`/`39`,
    `"UNKNOWN_TOPIC_OR_PARTITION"`/`3`, `"OFFSET_OUT_OF_RANGE"`/`1`,
    `"INVALID_REQUIRED_ACKS"`/`21`, `"RECORD_LIST_TOO_LARGE"`/`18`,
    `"INVALID_TIMESTAMP"`/`32`
    """
    refused: str
    """`"request"` (nothing applied) or `"entries"` (the others applied)"""
    entries: int
    """partition states, partitions, topics or records in the request"""
    invalid_entries: int
    """how many were refused (all of them when `refused` is `"request"`)"""
    left_out_brokers: list[int]
    """live brokers (UpdateMetadata) or live leaders (LeaderAndIsr) left out for unusable
    endpoints, sorted ids; `[]` otherwise
    """
    reason: str
    """what was wrong first, e.g. `"orders-0 listed twice"` or `"../x-0: illegal topic name"`"""
    controller_id: int | Absent = ABSENT
    """from the header (LeaderAndIsr, UpdateMetadata, StopReplica)"""
    controller_epoch: int | Absent = ABSENT
    """from the header (LeaderAndIsr, UpdateMetadata, StopReplica)"""
    broker_id: int | Absent = ABSENT
    """from the request (ControlledShutdown)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFailed(Event):
    """A request handler raised; the request was answered `UNKNOWN_SERVER_ERROR`.

    `request_guard.py`, `grpc-worker*`.

    A handler raised; the request was answered `UNKNOWN_SERVER_ERROR` (-1) and the broker went
    on. Validation should make this impossible: each one is a bug.
    """

    kind: ClassVar[str] = "request_failed"

    api: str
    """as for `request_invalid`"""
    error: str
    """`"UNKNOWN_SERVER_ERROR"`, `-1`"""
    error_code: int
    """`"UNKNOWN_SERVER_ERROR"`, `-1`"""
    exception: str
    """the exception's class name"""
    message: str
    """its text, at most 500 characters"""
