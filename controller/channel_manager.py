"""`ControllerChannelManager`: one queue and one sender thread per live broker.

The event thread enqueues requests (`send`) and adds or removes brokers; each thread
`controller-to-broker-<id>-send-thread` sends its queue in order over gRPC (`rpc.wire`), and on a
transport failure backs off and resends the same request until it gets an answer or the
broker is removed. A request that does not encode, or whose answer does not decode
(`RpcMalformed`), would fail the same way on every resend: it is dropped with a
`control_request_dropped` event and the queue goes on. Responses go to the request's
callback on the sender thread (which may only enqueue controller events or write the event
log). Bug switch `sender-drops` (docs/bugs.md) drops a request whose send failed and goes
on with the next one.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from eventlog import ControlRequestDropped, ControlRequestSent, ControlResponseReceived, EventLog
from rpc import messages as m
from rpc.errors import RpcClosed, RpcError, RpcMalformed
from rpc.wire import BrokerControlClient, ChannelIdentity
from zkdata.model import Broker

log = logging.getLogger(__name__)

ControlRequest = m.LeaderAndIsrRequest | m.UpdateMetadataRequest | m.StopReplicaRequest
ControlResponse = m.LeaderAndIsrResponse | m.UpdateMetadataResponse | m.StopReplicaResponse
ResponseCallback = Callable[[int, ControlResponse], None]


class BrokerChannel(Protocol):
    """What a sender thread needs from a connection to a broker (`BrokerControlClient`)."""

    def leader_and_isr(self, request: m.LeaderAndIsrRequest) -> m.LeaderAndIsrResponse:
        """Send LeaderAndIsr."""

    def update_metadata(self, request: m.UpdateMetadataRequest) -> m.UpdateMetadataResponse:
        """Send UpdateMetadata."""

    def stop_replica(self, request: m.StopReplicaRequest) -> m.StopReplicaResponse:
        """Send StopReplica."""

    def close(self) -> None:
        """Close the connection."""


def grpc_channel(broker: Broker, tls: ChannelIdentity | None = None) -> BrokerChannel:
    """A real gRPC connection to the broker's first endpoint (mutual TLS with `tls`)."""
    endpoint = broker.info.endpoint
    return BrokerControlClient(f"{endpoint.host}:{endpoint.port}", timeout_s=30.0, tls=tls)


def api_name(request: ControlRequest) -> str:
    """Kafka's name of the request's API."""
    match request:
        case m.LeaderAndIsrRequest():
            return "LeaderAndIsr"
        case m.UpdateMetadataRequest():
            return "UpdateMetadata"
        case m.StopReplicaRequest():
            return "StopReplica"


def _call(channel: BrokerChannel, request: ControlRequest) -> ControlResponse:
    match request:
        case m.LeaderAndIsrRequest():
            return channel.leader_and_isr(request)
        case m.UpdateMetadataRequest():
            return channel.update_metadata(request)
        case m.StopReplicaRequest():
            return channel.stop_replica(request)


@dataclass(frozen=True, slots=True)
class _Queued:
    request: ControlRequest
    callback: ResponseCallback | None


def _partition_error_count(response: ControlResponse) -> int:
    errors: Sequence[m.PartitionError] = getattr(response, "partition_errors", ())
    return sum(1 for _ in m.failed_entries(errors))


class _Sender:
    """One broker's queue and sender thread."""

    def __init__(
        self,
        broker: Broker,
        channel: BrokerChannel,
        event_log: EventLog,
        backoff_s: float,
        max_backoff_s: float,
        drop_failed: bool = False,
    ) -> None:
        self.broker_id = broker.id
        self._drop_failed = drop_failed
        self._channel = channel
        self._events = event_log
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self.queue: queue.Queue[_Queued | None] = queue.Queue()
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"controller-to-broker-{broker.id}-send-thread", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self.queue.put(None)
        self._channel.close()  # cancels a call in flight: never wait out its timeout
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stopped.is_set():
            item = self.queue.get()
            if item is None:
                return
            try:
                response = self._send_until_answered(item.request)
            except RpcMalformed as exc:
                log.error(
                    "dropping %s to broker %d: %s", api_name(item.request), self.broker_id, exc
                )
                self._events.emit(
                    ControlRequestDropped(
                        api=api_name(item.request),
                        broker_id=self.broker_id,
                        controller_epoch=item.request.header.controller_epoch,
                        reason=str(exc)[:500],
                    ),
                )
                continue
            if response is None and self._drop_failed and not self._stopped.is_set():
                continue  # sender-drops: the failed request is lost
            if response is None:
                return
            self._events.emit(
                ControlResponseReceived(
                    api=api_name(item.request),
                    broker_id=self.broker_id,
                    controller_epoch=item.request.header.controller_epoch,
                    error=response.error.name,
                    partition_errors=_partition_error_count(response),
                ),
            )
            if item.callback is not None:
                try:
                    item.callback(self.broker_id, response)
                except Exception:
                    log.exception("response callback for broker %d failed", self.broker_id)

    def _send_until_answered(self, request: ControlRequest) -> ControlResponse | None:
        backoff = self._backoff_s
        while not self._stopped.is_set():
            try:
                return _call(self._channel, request)
            except RpcClosed:
                return None  # the channel was closed: the broker was removed
            except RpcMalformed:
                raise  # resending the same bytes cannot help
            except RpcError as exc:
                if self._stopped.is_set():
                    return None
                if self._drop_failed:
                    log.warning(
                        "sending %s to broker %d failed (%s); dropped",
                        api_name(request),
                        self.broker_id,
                        exc.status,
                    )
                    return None
                log.warning(
                    "sending %s to broker %d failed (%s); retrying in %.2fs",
                    api_name(request),
                    self.broker_id,
                    exc.status,
                    backoff,
                )
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, self._max_backoff_s)
        return None


class ControllerChannelManager:
    """Senders for every live broker. Called on the controller event thread."""

    def __init__(
        self,
        event_log: EventLog,
        connect: Callable[[Broker], BrokerChannel] = grpc_channel,
        backoff_s: float = 0.1,
        max_backoff_s: float = 1.0,
        drop_failed: bool = False,
    ) -> None:
        """`drop_failed` (bug switch `sender-drops`): a request whose send failed is
        dropped instead of resent."""
        self._events = event_log
        self._drop_failed = drop_failed
        self._connect = connect
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._senders: dict[int, _Sender] = {}
        self._lock = threading.Lock()  # guards _senders for metric readers on other threads

    def startup(self, brokers: list[Broker]) -> None:
        """Open a sender for each broker."""
        for broker in brokers:
            self.add_broker(broker)

    def add_broker(self, broker: Broker) -> None:
        """Open a sender for a new (or re-registered) broker."""
        with self._lock:
            if broker.id in self._senders:
                return
            sender = _Sender(
                broker,
                self._connect(broker),
                self._events,
                self._backoff_s,
                self._max_backoff_s,
                self._drop_failed,
            )
            self._senders[broker.id] = sender
        sender.start()

    def remove_broker(self, broker_id: int) -> None:
        """Stop a dead broker's sender; its queued requests are dropped."""
        with self._lock:
            sender = self._senders.pop(broker_id, None)
        if sender is not None:
            sender.stop()

    def send(
        self, broker_id: int, request: ControlRequest, callback: ResponseCallback | None = None
    ) -> bool:
        """Queue `request` for `broker_id`; False if there is no sender for it."""
        with self._lock:
            sender = self._senders.get(broker_id)
        if sender is None:
            log.warning("not sending %s to broker %d: not live", api_name(request), broker_id)
            return False
        self._events.emit(
            ControlRequestSent(
                api=api_name(request),
                broker_id=broker_id,
                controller_epoch=request.header.controller_epoch,
                broker_epoch=request.header.broker_epoch,
                partitions=len(request.partition_states),
            ),
        )
        sender.queue.put(_Queued(request, callback))
        return True

    def queue_sizes(self) -> dict[int, int]:
        """Requests waiting per broker (any thread)."""
        with self._lock:
            return {broker_id: s.queue.qsize() for broker_id, s in self._senders.items()}

    def shutdown(self) -> None:
        """Stop every sender."""
        with self._lock:
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.stop()
