"""Kafka 2.8's BrokerModifications: a known broker rewrites its registration with other
endpoints; the controller takes them (keeping the broker epoch) and sends UpdateMetadata
carrying them to every live broker. The data watch is armed again while the broker is
known; a registration that vanished or came back from another session is BrokerChange's.

Setup: brokers 1, 2, 3 live (epochs 101, 102, 103), each `/brokers/ids/N` watched.
"""

from __future__ import annotations

import queue
from typing import cast

from controller import events as ev
from controller.broker_modifications import BrokerModificationHandler
from controller.context import ControllerContext
from controller.request_batch import RequestBatch
from controller.states import ControllerState
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.registrations import FakeRegistrationsZk
from controller.watchers import Watchers
from domain import EndPoint, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from zkdata.client import KafkaZkClient

NEW_ENDPOINT = (EndPoint("broker2.new", 19092),)


class Rig:
    """The handler over the fake registrations, a real request batch and a queue."""

    def __init__(self) -> None:
        brokers = [make_broker(b) for b in (1, 2, 3)]
        self.ctx = ControllerContext()
        self.ctx.epoch = 4
        self.ctx.set_live_brokers(brokers)
        self.zk = FakeRegistrationsZk(brokers)
        self.events = RecordingEventLog()
        self.queued: queue.Queue[ev.ControllerEvent] = queue.Queue()
        self.send = RecordingSend()
        batch = RequestBatch(9, self.ctx, self.send)

        def send_update_metadata(
            broker_ids: frozenset[int] | list[int], partitions: list[TopicPartition]
        ) -> None:
            batch.new_batch()
            batch.add_update_metadata(broker_ids, partitions)
            batch.send()

        self.handler = BrokerModificationHandler(
            self.ctx,
            cast(KafkaZkClient, self.zk),
            Watchers(self.queued.put),
            self.events,
            send_update_metadata,
        )
        self.handler.watch([1, 2, 3])

    def process_queued(self) -> list[ev.ControllerEvent]:
        """Hand every queued event to the handler, as the event thread would."""
        handled: list[ev.ControllerEvent] = []
        while not self.queued.empty():
            event = self.queued.get_nowait()
            assert isinstance(event, ev.BrokerModifications)
            self.handler.process(event.broker_id)
            handled.append(event)
        return handled

    def update_metadata(self) -> list[tuple[int, m.UpdateMetadataRequest]]:
        return self.send.of_type(m.UpdateMetadataRequest)


def test_new_endpoints_reach_every_live_broker() -> None:
    rig = Rig()
    rig.zk.rewrite(2, NEW_ENDPOINT)
    assert rig.process_queued() == [ev.BrokerModifications(2)]
    known = rig.ctx.live_broker(2)
    assert known is not None
    assert (known.info.endpoints, known.epoch) == (NEW_ENDPOINT, 102)
    sent = rig.update_metadata()
    assert sorted(b for b, _ in sent) == [1, 2, 3]
    for _, request in sent:
        (broker2,) = [b for b in request.live_brokers if b.id == 2]
        assert broker2.endpoints == NEW_ENDPOINT
    (modified,) = rig.events.of_kind(EventKind.BROKER_MODIFIED)
    assert modified["broker_id"] == 2
    assert modified["endpoints"] == ["PLAINTEXT://broker2.new:19092"]
    assert modified["previous"] == ["PLAINTEXT://broker2:9092"]
    assert rig.zk.armed(2) == 1, "the data watch was not armed again"


def test_a_rewrite_with_the_same_endpoints_sends_nothing() -> None:
    rig = Rig()
    broker = rig.zk.brokers[3]
    rig.zk.rewrite(3, broker.info.endpoints)
    assert rig.process_queued() == [ev.BrokerModifications(3)]
    assert rig.update_metadata() == []
    assert rig.events.of_kind(EventKind.BROKER_MODIFIED) == []
    assert rig.zk.armed(3) == 1


def test_a_registration_from_another_session_is_left_to_broker_change() -> None:
    rig = Rig()
    rig.zk.replace(make_broker(2, epoch=500, port=19092))
    rig.process_queued()
    known = rig.ctx.live_broker(2)
    assert known is not None
    assert known.epoch == 102
    assert known.info.endpoints == make_broker(2).info.endpoints
    assert rig.update_metadata() == []


def test_a_vanished_or_unknown_broker_changes_nothing_and_is_not_watched_again() -> None:
    rig = Rig()
    rig.ctx.remove_live_brokers([1])
    rig.zk.remove(1)
    rig.process_queued()
    rig.handler.process(7)
    assert rig.update_metadata() == []
    assert rig.zk.armed(1) == 0
    assert rig.zk.armed(7) == 0


def test_a_second_change_is_seen_through_the_rearmed_watch() -> None:
    rig = Rig()
    rig.zk.rewrite(2, NEW_ENDPOINT)
    rig.process_queued()
    again = (EndPoint("broker2.third", 29092),)
    rig.zk.rewrite(2, again)
    assert rig.process_queued() == [ev.BrokerModifications(2)]
    known = rig.ctx.live_broker(2)
    assert known is not None
    assert known.info.endpoints == again
    assert len(rig.update_metadata()) == 6


def test_broker_modifications_is_timed_as_a_broker_change() -> None:
    """Kafka's BrokerModifications event has the BrokerChange controller state, so it
    counts toward LeaderElectionRateAndTimeMs."""
    assert ev.BrokerModifications(1).state is ControllerState.BROKER_CHANGE
