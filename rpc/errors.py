"""Broker error codes: Kafka's names and numbers (`org.apache.kafka.common.protocol.Errors`).

Only the codes the testbed produces or understands are listed; the numbers are Kafka's.
Values only; any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum


class Errors(IntEnum):
    """A Kafka error code."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    NETWORK_EXCEPTION = 13
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    KAFKA_STORAGE_ERROR = 56
    REASSIGNMENT_IN_PROGRESS = 60
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    STALE_BROKER_EPOCH = 77
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    INVALID_UPDATE_VERSION = 95

    @classmethod
    def from_code(cls, code: int) -> Errors:
        """The member for `code`; unknown codes map to UNKNOWN_SERVER_ERROR (a dict lookup:
        responses decode one code per partition)."""
        return _BY_CODE.get(code, cls.UNKNOWN_SERVER_ERROR)


_BY_CODE: dict[int, Errors] = {int(e): e for e in Errors}


def errors_by_code() -> Mapping[int, Errors]:
    """Every member by its code (the lookup `Errors.from_code` does, for loops that decode
    one code per partition)."""
    return _BY_CODE


class RpcError(Exception):
    """A call to a broker failed below the Kafka protocol: no response was decoded.

    The tree (raised by `rpc.wire`'s clients; nothing else sees `grpc.RpcError`):

        RpcError                    no response; `target` says to whom, `status` how
        ├── RpcUnavailable          not reached, or the call was dropped (effect unknown)
        ├── RpcDeadlineExceeded     no answer within the call's deadline (effect unknown)
        ├── RpcFenced               the peer refused the caller before any handler ran
        ├── RpcMalformed            a message did not encode or decode
        ├── RpcClosed               the local channel was closed; nothing was sent
        └── RpcFailed               any other failure the peer reported (a handler crash)
    """

    def __init__(self, target: str, status: str, detail: str = "") -> None:
        self.target = target
        self.status = status
        self.detail = detail
        text = f"{status} from {target}"
        super().__init__(f"{text}: {detail}" if detail else text)


class RpcUnavailable(RpcError):
    """The peer could not be reached, or the connection dropped mid-call."""


class RpcDeadlineExceeded(RpcError):
    """The call had no answer within its deadline; it may still take effect."""


class RpcFenced(RpcError):
    """The peer refused the caller (unauthenticated or not permitted)."""


class RpcMalformed(RpcError):
    """A request or response could not be encoded or decoded."""


class RpcClosed(RpcError):
    """The channel was closed on this side before or during the call."""


class RpcFailed(RpcError):
    """The peer answered with a failure status other than the ones above."""
