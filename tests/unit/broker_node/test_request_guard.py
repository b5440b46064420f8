"""`RequestGuard`: an exception that escapes any handler is answered with
UNKNOWN_SERVER_ERROR and written as a `request_failed` event; the next call is served."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from broker_node.request_guard import GuardedBrokerControl, GuardedClientApi, RequestGuard
from eventlog import Event, EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors


class Exploding:
    """A handler of both services whose every method raises once, then answers."""

    def __init__(self) -> None:
        self.calls = 0

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(request: object) -> object:
            self.calls += 1
            if self.calls == 1:
                raise ValueError(f"{name} went wrong")
            return "answered"

        return call


HEADER = m.ControlHeader(1, 1, 1)
CALLS: list[tuple[str, str, object]] = [
    ("control", "leader_and_isr", m.LeaderAndIsrRequest(HEADER, ())),
    ("control", "update_metadata", m.UpdateMetadataRequest(HEADER, (), ())),
    ("control", "stop_replica", m.StopReplicaRequest(HEADER, ())),
    ("control", "controlled_shutdown", m.ControlledShutdownRequest(1, 1)),
    ("control", "elect_leaders", m.ElectLeadersRequest(0)),
    ("client", "metadata", m.MetadataRequest(("orders",))),
    ("client", "produce", m.ProduceRequest.single("orders", 0, ())),
    (
        "client",
        "offsets_for_leader_epoch",
        m.OffsetsForLeaderEpochRequest((m.EpochPartition("orders", 0, 1, 1),)),
    ),
    ("client", "replica_audit", m.ReplicaAuditRequest(("orders",))),
]


@pytest.mark.parametrize(("service", "method", "request_"), CALLS)
def test_an_exception_in_a_handler_is_answered_and_recorded(
    service: str, method: str, request_: object
) -> None:
    events = RecordingEventLog("b1")
    inner = Exploding()
    guard = RequestGuard(events)
    wrapped: Any = (
        GuardedBrokerControl(inner, guard)
        if service == "control"
        else GuardedClientApi(inner, guard)
    )
    answer = getattr(wrapped, method)(request_)

    if isinstance(answer, m.OffsetsForLeaderEpochResponse | m.ProduceResponse):
        assert [p.error for p in answer.partitions] == [Errors.UNKNOWN_SERVER_ERROR]
    elif isinstance(answer, m.ReplicaAuditResponse):
        assert answer == m.ReplicaAuditResponse(-1)  # no broker, no replica
    elif isinstance(answer, m.MetadataResponse):
        assert [(t.name, t.error) for t in answer.topics] == [
            ("orders", Errors.UNKNOWN_SERVER_ERROR)
        ]
    else:
        assert answer.error is Errors.UNKNOWN_SERVER_ERROR
    (failed,) = events.of_kind(EventKind.REQUEST_FAILED)
    assert failed["exception"] == "ValueError"
    assert method in failed["message"]
    assert failed["error_code"] == -1
    assert getattr(wrapped, method)(request_) == "answered"


def test_an_event_log_that_fails_too_still_gets_an_answer() -> None:
    class BrokenLog(RecordingEventLog):
        def emit(self, event: Event, /) -> dict[str, Any]:
            raise OSError("disk full")

    guard = RequestGuard(BrokenLog())
    request = m.ProduceRequest.single("t", 0, ())
    answer = guard.run("Produce", lambda: 1 / 0, lambda e: m.ProduceResponse.refused(request, e))
    assert answer == m.ProduceResponse(
        (m.PartitionProduceResult("t", 0, Errors.UNKNOWN_SERVER_ERROR),)
    )


def test_the_fallback_of_stop_replica_is_a_request_level_error() -> None:
    """The fallback answers of LeaderAndIsr and StopReplica carry no partition errors: the
    request-level error is the answer (the controller reads no partition as stopped)."""
    events = RecordingEventLog("b1")
    guard = GuardedBrokerControl(Exploding(), RequestGuard(events))
    states = (m.StopReplicaPartitionState("orders", 0, 1, False),)
    answer = guard.stop_replica(m.StopReplicaRequest(HEADER, states))
    assert answer == m.StopReplicaResponse(Errors.UNKNOWN_SERVER_ERROR)


class ExplodingAsync:
    """A client handler whose `fetch_async` (Fetch is a coroutine) raises once, then
    answers."""

    def __init__(self) -> None:
        self.calls = 0

    async def fetch_async(self, request: m.FetchRequest) -> m.FetchResponse:
        self.calls += 1
        if self.calls == 1:
            raise ValueError("fetch_async went wrong")
        return m.FetchResponse(Errors.NONE, session_id=7)


def test_an_exception_in_a_coroutine_handler_is_answered_and_recorded() -> None:
    events = RecordingEventLog("b1")
    wrapped = GuardedClientApi(ExplodingAsync(), RequestGuard(events))  # type: ignore[arg-type]
    answer = asyncio.run(wrapped.fetch_async(m.FetchRequest(())))
    assert answer.error is Errors.UNKNOWN_SERVER_ERROR
    (failed,) = events.of_kind(EventKind.REQUEST_FAILED)
    assert (failed["api"], failed["exception"]) == ("Fetch", "ValueError")
    assert asyncio.run(wrapped.fetch_async(m.FetchRequest(()))).session_id == 7
