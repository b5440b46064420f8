"""When `BrokerChanges` reads `/brokers/ids`, and bug switch `kafka-3085`: by default the
handler reads the registrations when it processes the BrokerChange event; with the switch
the watch reads them when it fires and the event carries that list, however stale it is
by the time the event is processed.

Setup: brokers 1, 2, 3 are live (broker epochs 10, 20, 30) and no topic exists. Steps:
broker 3's registration vanishes and the `/brokers/ids` watch fires; before the event is
processed, broker 3 registers again (epoch 31). Then the event is processed.
"""

from __future__ import annotations

import queue
from typing import Any

from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import ENQUEUE_TIME_BROKERS
from controller import events as ev
from controller.context import ControllerContext
from controller.testing.broker_changes import broker_changes_for
from controller.testing.brokers import make_broker
from controller.testing.zookeeper import FakePartitionZk
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import BrokerListing, WatchCallback
from zkdata.model import Broker


class RegistrationsZk(FakePartitionZk):
    """State znodes as the fake keeps them, plus `/brokers/ids` and its child watch."""

    def __init__(self, brokers: list[Broker]) -> None:
        super().__init__(12)
        self.brokers = {b.id: b for b in brokers}
        self.watch: WatchCallback | None = None

    def watch_children(self, path: str, callback: WatchCallback) -> list[str]:
        self.watch = callback
        return [str(b) for b in self.brokers]

    def watch_exists(self, path: str, callback: WatchCallback) -> bool:
        return True  # the registrations' data watches: not what this test is about

    def get_all_brokers(self) -> BrokerListing:
        return BrokerListing(dict(self.brokers), {})

    def fire(self) -> None:
        watch, self.watch = self.watch, None
        assert watch is not None, "the /brokers/ids watch was not armed"
        watch(WatchedEvent(EventType.CHILD, KeeperState.CONNECTED, "/brokers/ids"))


def _bounce_while_queued(switches: BugSwitches) -> tuple[ControllerContext, dict[str, Any]]:
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = 4, 12
    ctx.set_live_brokers([make_broker(1, 10), make_broker(2, 20), make_broker(3, 30)])
    zk = RegistrationsZk([make_broker(1, 10), make_broker(2, 20), make_broker(3, 30)])
    events = RecordingEventLog()
    enqueued: queue.Queue[ev.ControllerEvent] = queue.Queue()
    changes, channels = broker_changes_for(ctx, zk, events, switches, enqueue=enqueued.put)
    zk.watch_children("/brokers/ids", changes.broker_watch())
    try:
        del zk.brokers[3]
        zk.fire()
        zk.brokers[3] = make_broker(3, 31)
        event = enqueued.get_nowait()
        assert isinstance(event, ev.BrokerChange)
        changes.process_broker_change(event.listing)
    finally:
        channels.shutdown()
    (change,) = events.of_kind(EventKind.BROKER_CHANGE)
    assert enqueued.empty()
    return ctx, change


def test_by_default_the_registrations_are_read_when_the_event_is_processed() -> None:
    ctx, change = _bounce_while_queued(NO_BUGS)
    assert (change["new"], change["dead"], change["bounced"]) == ([], [], [3])
    assert ctx.broker_epoch(3) == 31


def test_kafka_3085_decides_on_the_list_read_when_the_watch_fired() -> None:
    ctx, change = _bounce_while_queued(BugSwitches(frozenset({ENQUEUE_TIME_BROKERS})))
    assert (change["new"], change["dead"], change["bounced"]) == ([], [3], [])
    assert 3 not in ctx.live_or_shutting_down_broker_ids()  # registered, yet dead for good
