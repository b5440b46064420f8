"""Bug switch `kafka-1120` in `BrokerChanges`: a broker whose registration was replaced
between two notifications (same id, a new broker epoch) is a bounce by default: the
controller fails it, then starts it and sends its new process full metadata and its
replicas. With the switch the controller compares broker ids only: it takes the new
registration into its context and does nothing else, so the new process is sent nothing.

Setup: brokers 1, 2, 3 are live (broker epochs 10, 20, 30); topic "orders" partition 0
has replicas 3, 1 and is led by 3. Steps: broker 3 registers again (epoch 31) and the
controller processes the broker change.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import IDS_ONLY_BROKER_CHANGE
from controller.broker_changes import classify_brokers, refreshed_registrations
from controller.context import ControllerContext
from controller.testing.broker_changes import broker_changes_for
from controller.testing.brokers import make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import BrokerListing, WatchCallback
from zkdata.model import Broker, ReplicaAssignment

TP = TopicPartition("orders", 0)
EPOCHS = st.dictionaries(st.integers(0, 6), st.integers(0, 5), max_size=6)


class ListingZk(FakePartitionZk):
    """State znodes as the fake keeps them, plus the registrations under `/brokers/ids`."""

    def __init__(self, brokers: list[Broker]) -> None:
        super().__init__(12)
        self.brokers = {b.id: b for b in brokers}

    def watch_children(self, path: str, callback: WatchCallback) -> list[str]:
        return [str(b) for b in self.brokers]

    def watch_exists(self, path: str, callback: WatchCallback) -> bool:
        return True

    def get_all_brokers(self) -> BrokerListing:
        return BrokerListing(dict(self.brokers), {})


def _bounce(switches: BugSwitches) -> tuple[ControllerContext, dict[str, Any], list[Any]]:
    """Broker 3 re-registered with epoch 31; the change processed. Returns the context,
    the `broker_change` event and the UpdateMetadata calls `(brokers, partitions)`."""
    ctx = ControllerContext()
    ctx.epoch, ctx.epoch_zk_version = 4, 12
    ctx.set_live_brokers([make_broker(1, 10), make_broker(2, 20), make_broker(3, 30)])
    ctx.add_topic(TP.topic, {0: ReplicaAssignment((3, 1))})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 2, (3, 1), 5), 4)
    ctx.set_leadership(TP, state)
    zk = ListingZk([make_broker(1, 10), make_broker(2, 20), make_broker(3, 31)])
    zk.put_state(TP, state, 5)
    events = RecordingEventLog()
    metadata: list[Any] = []
    changes, channels = broker_changes_for(
        ctx,
        zk,
        events,
        switches,
        update_metadata=lambda brokers, partitions: metadata.append(
            (set(brokers), list(partitions))
        ),
    )
    try:
        changes.process_broker_change()
    finally:
        channels.shutdown()
    (change,) = events.of_kind(EventKind.BROKER_CHANGE)
    return ctx, change, metadata


def test_by_default_a_replaced_registration_is_a_bounce_and_its_process_is_served() -> None:
    ctx, change, metadata = _bounce(NO_BUGS)
    assert (change["new"], change["dead"], change["bounced"]) == ([], [], [3])
    assert ctx.broker_epoch(3) == 31
    assert ({3}, [TP]) in metadata  # the new process gets full metadata


def test_kafka_1120_takes_the_new_registration_but_serves_nothing_to_it() -> None:
    ctx, change, metadata = _bounce(BugSwitches(frozenset({IDS_ONLY_BROKER_CHANGE})))
    assert (change["new"], change["dead"], change["bounced"]) == ([], [], [])
    assert ctx.broker_epoch(3) == 31  # refreshed, as Kafka refreshed its broker list
    assert all(3 not in brokers for brokers, _ in metadata)


@given(EPOCHS, EPOCHS)
def test_refreshed_registrations_are_the_bounces_the_ids_hide(
    registered: dict[int, int], known: dict[int, int]
) -> None:
    fixed = classify_brokers(registered, known)
    ids_only = classify_brokers(registered, known, detect_bounces=False)
    assert refreshed_registrations(registered, known, fixed) == sorted(
        b for b in registered.keys() & known.keys() if registered[b] < known[b]
    )
    hidden = refreshed_registrations(registered, known, ids_only)
    assert set(fixed.bounced) <= set(hidden)
