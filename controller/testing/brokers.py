"""Broker-side doubles for unit tests of the controller: registered brokers, the request
batch's `send` and the connections the channel manager's sender threads talk to (STYLE
rule 13).

- `make_broker` builds a registered broker with an endpoint and a broker epoch.
- `RecordingSend` is the `Send` a `RequestBatch` hands its requests to.
- `FakeBrokerChannel` is the `BrokerChannel` a sender thread talks to: it answers NONE,
  can fail the next calls with an `rpc.errors.RpcError`, and can hold calls to keep a queue
  full.
- `FakeChannels` is the channel manager's `connect`: one `FakeBrokerChannel` per broker.

Threads: `RecordingSend` is not thread-safe; only the thread that plays the controller
event thread may use it. `FakeBrokerChannel` is called by sender threads and read by the
test thread: every method is safe from any thread.
"""

from __future__ import annotations

import threading
from typing import TypeVar

from controller.channel_manager import ControlRequest, ResponseCallback
from domain import EndPoint
from rpc import messages as m
from rpc.errors import Errors, RpcClosed, RpcError, RpcUnavailable
from zkdata.model import Broker, BrokerInfo

__all__ = ["FakeBrokerChannel", "FakeChannels", "RecordingSend", "make_broker"]

R = TypeVar("R")


def make_broker(broker_id: int, epoch: int | None = None, port: int = 9092) -> Broker:
    """A registered broker `broker<id>:<port>`; its epoch defaults to `100 + broker_id`."""
    info = BrokerInfo(broker_id, (EndPoint(f"broker{broker_id}", port),))
    return Broker(info, 100 + broker_id if epoch is None else epoch)


# -- the request batch's send --------------------------------------------------------------


class RecordingSend:
    """A `controller.request_batch.Send` that records `(broker_id, request)` in `sent` (and
    the callback in `callbacks`, index for index) and reports every request as queued."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, ControlRequest]] = []
        self.callbacks: list[ResponseCallback | None] = []

    def __call__(
        self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None = None
    ) -> bool:
        self.sent.append((broker_id, request))
        self.callbacks.append(callback)
        return True

    def of_type(self, kind: type[R]) -> list[tuple[int, R]]:
        """The `(broker_id, request)` pairs whose request is a `kind`, in send order."""
        return [(b, r) for b, r in self.sent if isinstance(r, kind)]

    def to(self, broker_id: int) -> list[ControlRequest]:
        """The requests sent to one broker, in order."""
        return [r for b, r in self.sent if b == broker_id]

    def clear(self) -> None:
        """Forget what was recorded."""
        self.sent.clear()
        self.callbacks.clear()


# -- broker connections -----------------------------------------------------------------------


class FakeBrokerChannel:
    """A `controller.channel_manager.BrokerChannel` that answers every request `error`
    (NONE by default, with a NONE per partition where the response has them).

    It records every call, answered or not, with the name of the calling thread. Tests
    can make the next calls fail (`fail_next`) or block (`hold`, until `release` or
    `close`). As with a real gRPC channel, `close` cancels calls in flight
    (`RpcUnavailable`, status CANCELLED) and later calls raise `RpcClosed`. Any thread.
    """

    def __init__(self, broker_id: int | None = None, error: Errors = Errors.NONE) -> None:
        self.broker_id = broker_id
        self._target = f"fake-broker-{broker_id}"
        self._cond = threading.Condition()
        self._error = error
        self._calls: list[ControlRequest] = []
        self._threads: list[str] = []
        self._answered: list[ControlRequest] = []
        self._failures_left = 0
        self._failure: type[RpcError] = RpcUnavailable
        self._held = False
        self._closes = 0

    # -- control and inspection by tests -----------------------------------------------------

    def fail_next(self, count: int, failure: type[RpcError] = RpcUnavailable) -> None:
        """Raise `failure` (an `rpc.errors.RpcError` type) from the next `count` calls."""
        with self._cond:
            self._failures_left = count
            self._failure = failure

    def answer_with(self, error: Errors) -> None:
        """Answer later calls with `error` (request-level and per partition)."""
        with self._cond:
            self._error = error

    def hold(self) -> None:
        """Block later calls until `release` or `close`."""
        with self._cond:
            self._held = True

    def release(self) -> None:
        """Let held calls proceed."""
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def calls(self) -> list[ControlRequest]:
        """Every call made, failed or held ones included, in order."""
        with self._cond:
            return list(self._calls)

    def thread_names(self) -> list[str]:
        """The name of the thread that made each call."""
        with self._cond:
            return list(self._threads)

    def requests(self) -> list[ControlRequest]:
        """The requests answered, in order."""
        with self._cond:
            return list(self._answered)

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        with self._cond:
            return self._closes > 0

    @property
    def close_count(self) -> int:
        """How many times `close` was called."""
        with self._cond:
            return self._closes

    # -- BrokerChannel ---------------------------------------------------------------------------

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Answer LeaderAndIsr."""
        error = self._call(request)
        return m.LeaderAndIsrResponse(error, _partition_errors(request, error))

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Answer UpdateMetadata."""
        return m.UpdateMetadataResponse(self._call(request))

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Answer StopReplica."""
        error = self._call(request)
        return m.StopReplicaResponse(error, _partition_errors(request, error))

    def close(self) -> None:
        """Close: cancel held calls; later calls fail."""
        with self._cond:
            self._closes += 1
            self._cond.notify_all()

    def _call(self, request: ControlRequest) -> Errors:
        with self._cond:
            if self._closes:
                raise RpcClosed(self._target, "CLOSED", "channel closed")
            self._calls.append(request)
            self._threads.append(threading.current_thread().name)
            self._cond.notify_all()
            while self._held and not self._closes:
                self._cond.wait()
            if self._closes:
                raise RpcUnavailable(self._target, "CANCELLED", "channel closed")
            if self._failures_left > 0:
                self._failures_left -= 1
                raise self._failure(self._target, self._failure.__name__, "injected")
            self._answered.append(request)
            return self._error


class FakeChannels:
    """The channel manager's `connect`: a new `FakeBrokerChannel` per broker connected,
    the latest one kept in `by_broker`. Connected on the event thread, read by the test."""

    def __init__(self) -> None:
        self.by_broker: dict[int, FakeBrokerChannel] = {}

    def __call__(self, broker: Broker) -> FakeBrokerChannel:
        self.by_broker[broker.id] = FakeBrokerChannel(broker.id)
        return self.by_broker[broker.id]

    def calls(self) -> list[ControlRequest]:
        """Every call made to any of the channels."""
        return [r for channel in list(self.by_broker.values()) for r in channel.calls()]


def _partition_errors(
    request: m.LeaderAndIsrRequest | m.StopReplicaRequest, error: Errors
) -> tuple[m.PartitionError, ...]:
    return tuple(m.PartitionError(s.topic_partition, error) for s in request.partition_states)
