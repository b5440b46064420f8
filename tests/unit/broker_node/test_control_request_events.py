"""The events `ControlRequestHandler` writes name the broker epoch its fencing check used, so
the cluster invariants can judge each accepted request against the registration it was
checked with, even when a new registration lands while the request is being applied."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

from broker_node.control_requests import ControlRequestHandler
from domain import EndPoint
from eventlog import Event, EventKind, LiveBrokersChanged, RequestAccepted, RequestRejected
from eventlog.testing import RecordingEventLog
from rpc import messages as m


def _epochs(*values: int) -> Callable[[], int]:
    """A broker epoch that moves on at each read and then stays at the last value."""
    it: Iterator[int] = iter(values)
    last = [values[0]]

    def read() -> int:
        last[0] = next(it, last[0])
        return last[0]

    return read


def _shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    raise AssertionError("not called")


def _handler(epoch: Callable[[], int]) -> tuple[ControlRequestHandler, RecordingEventLog]:
    events = RecordingEventLog("broker1")
    return ControlRequestHandler(1, epoch, events, _shutdown), events


def test_accepted_request_names_the_epoch_its_check_used() -> None:
    handler, events = _handler(_epochs(100, 200))  # re-registered after the check
    handler.update_metadata(m.UpdateMetadataRequest(m.ControlHeader(2, 5, 100), (), ()))
    (accepted,) = events.of_type(RequestAccepted)
    assert accepted.broker_epoch == 100
    assert accepted.request_broker_epoch == 100


def test_rejected_request_names_the_epoch_its_check_used() -> None:
    handler, events = _handler(_epochs(200, 300))
    handler.stop_replica(m.StopReplicaRequest(m.ControlHeader(2, 5, 100), ()))
    (rejected,) = events.of_type(RequestRejected)
    assert rejected.broker_epoch == 200
    assert rejected.error == "STALE_BROKER_EPOCH"


def _metadata(epoch: int, *ids: int) -> m.UpdateMetadataRequest:
    brokers = tuple(m.LiveBroker(i, (EndPoint(f"broker{i}", 9092),), None) for i in ids)
    return m.UpdateMetadataRequest(m.ControlHeader(2, epoch, 100), (), brokers)


def test_live_brokers_changed_only_when_the_live_set_moves() -> None:
    """A broker's last `live_brokers_changed` is whom it believes alive: written on the
    first UpdateMetadata, not on one listing the same brokers, again when one is gone."""
    handler, events = _handler(_epochs(100))
    handler.update_metadata(_metadata(5, 3, 1, 2))
    handler.update_metadata(_metadata(5, 1, 2, 3))
    handler.update_metadata(_metadata(6, 1, 2))
    first, second = events.of_type(LiveBrokersChanged)
    assert (first.live_brokers, first.added, first.removed) == ([1, 2, 3], [1, 2, 3], [])
    assert (second.live_brokers, second.added, second.removed) == ([1, 2], [], [3])
    assert (second.controller_id, second.controller_epoch) == (2, 6)


def test_a_refused_update_metadata_changes_no_live_brokers() -> None:
    handler, events = _handler(_epochs(200))  # addressed to epoch 100: stale
    handler.update_metadata(_metadata(5, 1, 2))
    assert events.of_type(LiveBrokersChanged) == []


class _CollectorWatchingLog(RecordingEventLog):
    """Records, with each event, whether Python's cyclic collector was on."""

    def __init__(self) -> None:
        super().__init__("broker1")
        self.collector_on: list[tuple[str, bool]] = []

    def emit(self, event: Event, /) -> dict[str, Any]:
        self.collector_on.append((event.kind, gc.isenabled()))
        return super().emit(event)


def test_leader_and_isr_and_update_metadata_are_applied_with_the_collector_paused() -> None:
    events = _CollectorWatchingLog()
    handler = ControlRequestHandler(1, lambda: 100, events, _shutdown)
    header = m.ControlHeader(2, 5, 100)
    state = m.LeaderAndIsrPartitionState("t", 0, 5, 1, 1, (1, 2), 0, (1, 2))
    gc.enable()
    handler.leader_and_isr(m.LeaderAndIsrRequest(header, (state,), ()))
    handler.update_metadata(m.UpdateMetadataRequest(header, (), ()))
    assert gc.isenabled()
    accepted = [on for kind, on in events.collector_on if kind == EventKind.REQUEST_ACCEPTED]
    assert accepted == [False, False]
