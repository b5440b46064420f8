"""What a broker does with a bad request, so that no request can take it down.

- `report_invalid`: the `request_invalid` event for a request that validation
  (`broker_node.request_validation`) refused, or whose entries it partly refused.
- `RequestGuard` and the two wrappers `GuardedBrokerControl` and `GuardedClientApi`: every
  handler call runs inside a guard; an exception that escapes a handler (a bug, or input
  validation did not foresee) is logged, written as a `request_failed` event and answered
  with UNKNOWN_SERVER_ERROR, the way Kafka's request handler answers an unexpected
  exception. The broker keeps serving.

Runs on the gRPC server's worker threads, and its event loop for `run_async`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import TypeVar

from broker_node.validation_rules import Verdict
from eventlog import ABSENT, Absent, EventLog, RequestFailed, RequestInvalid
from rpc import messages as m
from rpc.errors import Errors
from rpc.wire import ClientApiHandler, ControlRequests

log = logging.getLogger(__name__)

R = TypeVar("R")
#: How much of an exception's text a `request_failed` event keeps.
MESSAGE_CHARS = 500


def report_invalid(
    events: EventLog,
    api: str,
    verdict: Verdict,
    entries: int,
    *,
    controller_id: int | Absent = ABSENT,
    controller_epoch: int | Absent = ABSENT,
    broker_id: int | Absent = ABSENT,
) -> None:
    """Write `request_invalid` for a request refused as a whole (`verdict.error`) or with
    `len(verdict.invalid)` of its `entries` refused; the header's controller fields, or the
    request's broker id, when it has them."""
    error = verdict.error
    if error is Errors.NONE:
        error = next(iter(verdict.invalid.values()), Errors.INVALID_REQUEST)
    events.emit(
        RequestInvalid(
            api=api,
            error=error.name,
            error_code=int(error),
            refused="request" if verdict.error is not Errors.NONE else "entries",
            entries=entries,
            invalid_entries=entries if verdict.error is not Errors.NONE else len(verdict.invalid),
            left_out_brokers=sorted(verdict.left_out),
            reason=verdict.reason,
            controller_id=controller_id,
            controller_epoch=controller_epoch,
            broker_id=broker_id,
        )
    )


class RequestGuard:
    """Runs handler calls; turns an escaping exception into an answer and an event."""

    def __init__(self, events: EventLog) -> None:
        self._events = events

    def run(self, api: str, call: Callable[[], R], answer: Callable[[Errors], R]) -> R:
        """`call()`, or `answer(UNKNOWN_SERVER_ERROR)` if it raises."""
        try:
            return call()
        except Exception as exc:
            return self._failed(api, exc, answer)

    async def run_async(
        self, api: str, call: Callable[[], Awaitable[R]], answer: Callable[[Errors], R]
    ) -> R:
        """`await call()`, or `answer(UNKNOWN_SERVER_ERROR)` if it raises."""
        try:
            return await call()
        except Exception as exc:
            return self._failed(api, exc, answer)

    def _failed(self, api: str, exc: Exception, answer: Callable[[Errors], R]) -> R:
        """Log and record a handler's exception; the answer that replaces it."""
        log.error("%s handler failed", api, exc_info=exc)
        try:
            self._events.emit(
                RequestFailed(
                    api=api,
                    error=Errors.UNKNOWN_SERVER_ERROR.name,
                    error_code=int(Errors.UNKNOWN_SERVER_ERROR),
                    exception=type(exc).__name__,
                    message=str(exc)[:MESSAGE_CHARS],
                ),
            )
        except Exception:  # the event log itself failed: the answer still goes out
            log.exception("could not record the failure of %s", api)
        return answer(Errors.UNKNOWN_SERVER_ERROR)


class GuardedBrokerControl:
    """A `BrokerControlHandler` whose every call runs inside a `RequestGuard`: the control
    requests go to `inner`, AlterIsr to `alter_isr` (the local controller; without one,
    NOT_CONTROLLER)."""

    def __init__(
        self,
        inner: ControlRequests,
        guard: RequestGuard,
        alter_isr: Callable[[m.AlterIsrRequest], m.AlterIsrResponse] | None = None,
    ) -> None:
        self._inner = inner
        self._guard = guard
        self._alter_isr = alter_isr

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Become leader or follower of partitions."""
        return self._guard.run(
            "LeaderAndIsr", lambda: self._inner.leader_and_isr(request), m.LeaderAndIsrResponse
        )

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Refresh the metadata cache."""
        return self._guard.run(
            "UpdateMetadata",
            lambda: self._inner.update_metadata(request),
            m.UpdateMetadataResponse,
        )

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Stop replicas."""
        return self._guard.run(
            "StopReplica", lambda: self._inner.stop_replica(request), m.StopReplicaResponse
        )

    def controlled_shutdown(
        self, request: m.ControlledShutdownRequest
    ) -> m.ControlledShutdownResponse:
        """Move leaderships off a stopping broker (answered by the controller)."""
        return self._guard.run(
            "ControlledShutdown",
            lambda: self._inner.controlled_shutdown(request),
            m.ControlledShutdownResponse,
        )

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        """Run preferred or unclean elections (answered by the controller)."""
        return self._guard.run(
            "ElectLeaders", lambda: self._inner.elect_leaders(request), m.ElectLeadersResponse
        )

    def alter_isr(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        """Change partitions' ISRs (answered by the controller)."""
        alter = self._alter_isr
        if alter is None:
            return m.AlterIsrResponse(Errors.NOT_CONTROLLER)
        return self._guard.run("AlterIsr", lambda: alter(request), m.AlterIsrResponse)


class GuardedClientApi:
    """A `ClientApiHandler` whose every call runs inside a `RequestGuard`."""

    def __init__(self, inner: ClientApiHandler, guard: RequestGuard) -> None:
        self._inner = inner
        self._guard = guard

    def metadata(self, request: m.MetadataRequest) -> m.MetadataResponse:
        """Brokers and topics; on failure no broker and the topics asked for, each with
        the error."""
        return self._guard.run(
            "Metadata",
            lambda: self._inner.metadata(request),
            lambda error: m.MetadataResponse(
                -1, -1, (), tuple(m.TopicMetadata(t, error) for t in request.topics)
            ),
        )

    def produce(self, request: m.ProduceRequest) -> m.ProduceResponse | Future[m.ProduceResponse]:
        """Append records (the answer may be a future, from the produce purgatory)."""
        return self._guard.run(
            "Produce",
            lambda: self._inner.produce(request),
            lambda error: m.ProduceResponse.refused(request, error),
        )

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        """Read partitions, waiting for data without holding a thread."""
        return await self._guard.run_async(
            "Fetch", lambda: self._inner.fetch_async(request), m.FetchResponse
        )

    def offsets_for_leader_epoch(
        self, request: m.OffsetsForLeaderEpochRequest
    ) -> m.OffsetsForLeaderEpochResponse:
        """Where leader epochs ended; on failure every partition gets the error."""
        return self._guard.run(
            "OffsetsForLeaderEpoch",
            lambda: self._inner.offsets_for_leader_epoch(request),
            lambda error: m.OffsetsForLeaderEpochResponse(
                tuple(m.EpochEndOffset(e.topic, e.partition, error) for e in request.partitions)
            ),
        )

    def replica_audit(self, request: m.ReplicaAuditRequest) -> m.ReplicaAuditResponse:
        """What the hosted replicas hold; on failure no replica (the caller sees an
        answer without the replicas it asked for)."""
        return self._guard.run(
            "ReplicaAudit",
            lambda: self._inner.replica_audit(request),
            lambda error: m.ReplicaAuditResponse(-1),
        )
