"""The client's errors. Every failure a caller of `client` sees is one of these:

ClientError
├── TransportError      one call failed on the wire (`rpc.errors.RpcError` inside);
│                       whether it took effect is unknown
├── ClusterUnavailable  no broker answered Metadata
├── ControllerUnknown   no controller is known to send a controller request to
├── NoRoute             nothing was sent: no leader, or no address for it
└── RequestFailed       retries ran out or the broker gave a final error
    ├── ProduceFailed
    ├── FetchFailed
    └── PollFailed      a workload poll gave up (raised by `chaos.client.consumer`)
Raised on the calling thread.
"""

from __future__ import annotations

from rpc.errors import RpcError


class ClientError(Exception):
    """Base of the client's errors."""


class TransportError(ClientError):
    """A call to one broker failed on the wire (refused, reset, timed out): its effect is
    unknown. `cause` is the `rpc.errors.RpcError`; `target` and `status` are copied from it."""

    def __init__(self, cause: RpcError) -> None:
        self.cause = cause
        self.target = cause.target
        self.status = cause.status
        super().__init__(f"{cause.status} from {cause.target}")

    @property
    def name(self) -> str:
        """What an attempt that failed this way is counted as: `transport:<status>`."""
        return f"transport:{self.status}"


class ClusterUnavailable(ClientError):
    """No bootstrap or known broker answered a Metadata request."""


class ControllerUnknown(ClientError):
    """No live controller is known (none elected, or its address is not known)."""


class RequestFailed(ClientError):
    """A request gave up: a final error, or retries exhausted. `error` names the last
    failure; `attempt_errors` lists every failed attempt's error, oldest first."""

    def __init__(self, what: str, error: str, attempt_errors: tuple[str, ...]) -> None:
        self.error = error
        self.attempt_errors = attempt_errors
        tries = len(attempt_errors)
        super().__init__(f"{what}: {error} (after {tries} failed attempt{'s' * (tries != 1)})")


class ProduceFailed(RequestFailed):
    """A Produce was not acknowledged."""


class FetchFailed(RequestFailed):
    """A Fetch did not return the partition's records."""


class NoRoute(ClientError):
    """No request went out: the partition is unknown, leaderless, or its leader's address is
    not known. `reason` is a Kafka error name or a short phrase."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
