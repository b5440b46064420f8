"""`ControllerChannelManager` with `FakeBrokerChannel`s: one named sender thread per broker,
in-order delivery, resending after transport failures, removal and shutdown.

Synchronized with `wait_until` and `threading.Event`s, never with sleeps. Backoffs are
10-20 ms so that retries are quick.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from controller.channel_manager import ControllerChannelManager, ControlResponse
from controller.testing.brokers import FakeBrokerChannel, make_broker
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors, RpcDeadlineExceeded, RpcMalformed
from zkdata.model import Broker

TIMEOUT = 5.0
POLL = 0.002
TP = TopicPartition("orders", 0)


class Channels:
    """The `connect` factory: one `FakeBrokerChannel` per connection, kept by broker id."""

    def __init__(self) -> None:
        self.opened: list[FakeBrokerChannel] = []
        self.by_broker: dict[int, FakeBrokerChannel] = {}

    def __call__(self, broker: Broker) -> FakeBrokerChannel:
        channel = FakeBrokerChannel(broker.id)
        self.opened.append(channel)
        self.by_broker[broker.id] = channel
        return channel


@pytest.fixture
def channels() -> Channels:
    return Channels()


@pytest.fixture
def events() -> RecordingEventLog:
    return RecordingEventLog()


@pytest.fixture
def manager(channels: Channels, events: RecordingEventLog) -> Iterator[ControllerChannelManager]:
    mgr = ControllerChannelManager(events, channels, backoff_s=0.01, max_backoff_s=0.02)
    yield mgr
    for channel in channels.opened:
        channel.release()
    mgr.shutdown()


def update_metadata(n: int, broker_epoch: int = 101) -> m.UpdateMetadataRequest:
    """A distinguishable request: `n` is the controller epoch."""
    return m.UpdateMetadataRequest(m.ControlHeader(9, n, broker_epoch), (), ())


def sender_threads() -> set[str]:
    return {
        t.name
        for t in threading.enumerate()
        if t.name.startswith("controller-to-broker-") and t.is_alive()
    }


def wait_for(condition: object, message: str) -> None:
    assert callable(condition)
    wait_until(condition, TIMEOUT, message, interval=POLL)


class Responses:
    """A response callback that records what it saw and on which thread."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, ControlResponse, str]] = []
        self.lock = threading.Lock()

    def __call__(self, broker_id: int, response: ControlResponse) -> None:
        with self.lock:
            self.seen.append((broker_id, response, threading.current_thread().name))

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


# --- delivery --------------------------------------------------------------------------------


def test_requests_to_one_broker_are_sent_in_order_on_its_named_thread(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    requests = [update_metadata(n) for n in range(30)]
    for request in requests:
        assert manager.send(1, request) is True

    channel = channels.by_broker[1]
    wait_for(lambda: len(channel.requests()) == 30, "30 requests answered")
    assert channel.requests() == requests
    assert set(channel.thread_names()) == {"controller-to-broker-1-send-thread"}


def test_each_broker_has_its_own_sender(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.startup([make_broker(1), make_broker(2)])
    manager.send(1, update_metadata(1))
    manager.send(2, update_metadata(2))
    wait_for(
        lambda: all(len(channels.by_broker[b].requests()) == 1 for b in (1, 2)),
        "one request answered by each broker",
    )
    assert channels.by_broker[2].thread_names() == ["controller-to-broker-2-send-thread"]
    assert channels.by_broker[2].requests() == [update_metadata(2)]
    assert sender_threads() >= {
        "controller-to-broker-1-send-thread",
        "controller-to-broker-2-send-thread",
    }


def test_the_callback_gets_the_response_on_the_sender_thread(
    manager: ControllerChannelManager,
) -> None:
    manager.add_broker(make_broker(1))
    stop = m.StopReplicaRequest(
        m.ControlHeader(9, 3, 101), (m.StopReplicaPartitionState("orders", 0, 4, False),)
    )
    responses = Responses()
    manager.send(1, stop, responses)
    wait_for(lambda: responses.count() == 1, "the StopReplica response")
    ((broker_id, response, thread),) = responses.seen
    assert broker_id == 1
    assert response == m.StopReplicaResponse(Errors.NONE, (m.PartitionError(TP, Errors.NONE),))
    assert thread == "controller-to-broker-1-send-thread"


def test_a_failing_callback_does_not_stop_the_sender(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    def explode(broker_id: int, response: ControlResponse) -> None:
        raise RuntimeError("callback bug")

    manager.add_broker(make_broker(1))
    manager.send(1, update_metadata(1), explode)
    responses = Responses()
    manager.send(1, update_metadata(2), responses)
    wait_for(lambda: responses.count() == 1, "the second response")


def test_sent_requests_and_responses_are_logged(
    manager: ControllerChannelManager, events: RecordingEventLog
) -> None:
    manager.add_broker(make_broker(1))
    lai = m.LeaderAndIsrRequest(
        m.ControlHeader(9, 3, 101),
        (m.LeaderAndIsrPartitionState("orders", 0, 3, 1, 4, (1,), 7, (1,)),),
    )
    responses = Responses()
    manager.send(1, lai, responses)
    wait_for(lambda: responses.count() == 1, "the LeaderAndIsr response")
    wait_for(
        lambda: events.of_kind(EventKind.CONTROL_RESPONSE_RECEIVED), "the response event logged"
    )
    (sent,) = events.of_kind(EventKind.CONTROL_REQUEST_SENT)
    assert {k: sent[k] for k in ("api", "broker_id", "controller_epoch", "broker_epoch")} == {
        "api": "LeaderAndIsr",
        "broker_id": 1,
        "controller_epoch": 3,
        "broker_epoch": 101,
    }
    assert sent["partitions"] == 1
    (received,) = events.of_kind(EventKind.CONTROL_RESPONSE_RECEIVED)
    assert (received["api"], received["error"], received["partition_errors"]) == (
        "LeaderAndIsr",
        "NONE",
        0,
    )


# --- transport failures ------------------------------------------------------------------------


def test_a_transport_failure_is_retried_with_the_same_request_until_answered(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    channel = channels.by_broker[1]
    channel.fail_next(2)
    first = update_metadata(1)
    responses = Responses()
    manager.send(1, first, responses)
    later = Responses()
    manager.send(1, update_metadata(2), later)

    wait_for(lambda: later.count() == 1, "the request queued behind the retried one")
    assert channel.calls()[:3] == [first, first, first]
    assert channel.requests() == [first, update_metadata(2)]
    assert [r for _, r, _ in responses.seen] == [m.UpdateMetadataResponse(Errors.NONE)]


def test_a_broker_error_in_the_response_is_not_retried(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    channels.by_broker[1].answer_with(Errors.STALE_CONTROLLER_EPOCH)
    responses = Responses()
    manager.send(1, update_metadata(1), responses)
    wait_for(lambda: responses.count() == 1, "the response")
    assert responses.seen[0][1] == m.UpdateMetadataResponse(Errors.STALE_CONTROLLER_EPOCH)
    assert len(channels.by_broker[1].calls()) == 1


def test_retries_go_on_while_the_broker_stays_unreachable(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    channel = channels.by_broker[1]
    channel.fail_next(1_000_000, RpcDeadlineExceeded)
    responses = Responses()
    manager.send(1, update_metadata(1), responses)
    wait_for(lambda: len(channel.calls()) >= 5, "five attempts")
    assert responses.count() == 0
    channel.fail_next(0)
    wait_for(lambda: responses.count() == 1, "the answer once the broker is back")


def test_a_request_that_does_not_encode_is_dropped_and_the_queue_goes_on(
    manager: ControllerChannelManager, channels: Channels, events: RecordingEventLog
) -> None:
    """Resending the same bytes cannot help (a leader epoch past int32, say): the request
    is dropped once, reported, and the requests behind it still go out."""
    manager.add_broker(make_broker(1))
    channel = channels.by_broker[1]
    channel.fail_next(1, RpcMalformed)
    dropped = Responses()
    manager.send(1, update_metadata(1), dropped)
    later = Responses()
    manager.send(1, update_metadata(2), later)

    wait_for(lambda: later.count() == 1, "the request queued behind the dropped one")
    assert dropped.count() == 0
    assert channel.calls() == [update_metadata(1), update_metadata(2)]
    (event,) = events.of_kind(EventKind.CONTROL_REQUEST_DROPPED)
    assert event["broker_id"] == 1
    assert event["api"] == "UpdateMetadata"


# --- adding, removing, shutting down -------------------------------------------------------


def test_send_to_an_unknown_broker_returns_false(
    manager: ControllerChannelManager, events: RecordingEventLog
) -> None:
    manager.add_broker(make_broker(1))
    assert manager.send(2, update_metadata(1)) is False
    assert events.of_kind(EventKind.CONTROL_REQUEST_SENT) == []


def test_adding_a_broker_twice_keeps_one_sender(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    manager.add_broker(make_broker(1, epoch=999))
    assert len(channels.opened) == 1
    assert manager.queue_sizes() == {1: 0}


def test_remove_broker_stops_its_thread_and_closes_its_channel(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.startup([make_broker(1), make_broker(2)])
    manager.remove_broker(1)

    assert channels.by_broker[1].closed
    assert not channels.by_broker[2].closed
    wait_for(
        lambda: "controller-to-broker-1-send-thread" not in sender_threads(),
        "broker 1's sender thread to end",
    )
    assert manager.send(1, update_metadata(1)) is False
    assert manager.queue_sizes() == {2: 0}
    manager.remove_broker(1)  # removing again is harmless
    assert channels.by_broker[1].close_count == 1


def test_a_bounced_broker_gets_a_fresh_channel(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    old = channels.by_broker[1]
    manager.remove_broker(1)
    manager.add_broker(make_broker(1, epoch=500))
    new = channels.by_broker[1]
    assert new is not old
    assert old.closed
    assert not new.closed
    manager.send(1, update_metadata(1, broker_epoch=500))
    wait_for(lambda: len(new.requests()) == 1, "the request on the new channel")


def test_remove_broker_does_not_wait_for_a_call_in_flight(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    """A broker that stops answering (a network partition) leaves its sender blocked in a
    call. Removing the broker runs on the controller event thread and must not stall it
    until the call gives up: closing the channel cancels the call (as gRPC's
    `Channel.close` does), so it should come first."""
    manager.add_broker(make_broker(1))
    channel = channels.by_broker[1]
    channel.hold()
    manager.send(1, update_metadata(1))
    wait_for(lambda: len(channel.calls()) == 1, "the call to be in flight")

    removed = threading.Event()

    def remove() -> None:
        manager.remove_broker(1)
        removed.set()

    remover = threading.Thread(target=remove, name="test-remover", daemon=True)
    remover.start()
    try:
        assert removed.wait(1.0), "remove_broker blocked on the call in flight"
        assert channel.closed
    finally:
        channel.release()
        remover.join(TIMEOUT)


def test_queue_sizes_reflect_the_requests_waiting(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.startup([make_broker(1), make_broker(2)])
    channel = channels.by_broker[1]
    channel.hold()
    for n in range(4):
        manager.send(1, update_metadata(n))
    wait_for(lambda: len(channel.calls()) == 1, "the first call to be in flight")

    assert manager.queue_sizes() == {1: 3, 2: 0}

    channel.release()
    wait_for(lambda: len(channel.requests()) == 4, "all four answered")
    wait_for(lambda: manager.queue_sizes() == {1: 0, 2: 0}, "empty queues")


def test_queue_sizes_can_be_read_from_another_thread(
    manager: ControllerChannelManager, channels: Channels
) -> None:
    manager.add_broker(make_broker(1))
    channels.by_broker[1].hold()
    manager.send(1, update_metadata(1))
    manager.send(1, update_metadata(2))
    wait_for(lambda: len(channels.by_broker[1].calls()) == 1, "the first call in flight")
    seen: list[dict[int, int]] = []
    reader = threading.Thread(target=lambda: seen.append(manager.queue_sizes()), name="reader")
    reader.start()
    reader.join(TIMEOUT)
    assert seen == [{1: 1}]


def test_shutdown_stops_every_sender(manager: ControllerChannelManager, channels: Channels) -> None:
    manager.startup([make_broker(b) for b in (1, 2, 3)])
    names = {f"controller-to-broker-{b}-send-thread" for b in (1, 2, 3)}
    wait_for(lambda: names <= sender_threads(), "three sender threads")

    manager.shutdown()

    assert all(channels.by_broker[b].closed for b in (1, 2, 3))
    wait_for(lambda: not names & sender_threads(), "every sender thread to end")
    assert manager.queue_sizes() == {}
    assert manager.send(1, update_metadata(1)) is False
