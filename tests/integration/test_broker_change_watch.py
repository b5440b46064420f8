"""The `/brokers/ids` watch of bug switch `kafka-3085` on a real ensemble: a callback built
by `Watchers.reading` reads the registrations on kazoo's thread when the watch fires, and
the BrokerChange it enqueues carries what was registered at that moment, not later."""

from __future__ import annotations

import queue

import pytest
from kazoo.client import KazooClient

from controller import events as ev
from controller.watchers import Watchers
from domain import EndPoint
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.model import BrokerInfo

pytestmark = pytest.mark.integration


def test_the_event_carries_the_registrations_read_when_the_watch_fired(
    zk_client: KazooClient,
) -> None:
    zk = KafkaZkClient(zk_client)
    zk.create_persistent_paths()
    enqueued: queue.Queue[ev.ControllerEvent] = queue.Queue()
    watchers = Watchers(enqueued.put)
    callback = watchers.reading(ev.BrokerChange(), lambda: ev.BrokerChange(zk.get_all_brokers()))
    assert zk.watch_children(paths.BROKER_IDS, callback) == []
    epoch = zk.register_broker(BrokerInfo(1, (EndPoint("127.0.0.1", 9001),), timestamp_ms=1))
    event = enqueued.get(timeout=10)
    zk.register_broker(BrokerInfo(2, (EndPoint("127.0.0.1", 9002),), timestamp_ms=1))
    assert isinstance(event, ev.BrokerChange)
    assert event.listing is not None
    assert {b: broker.epoch for b, broker in event.listing.brokers.items()} == {1: epoch}
    assert enqueued.empty()  # the watch fired once; nothing re-armed it
