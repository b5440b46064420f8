"""Bug switches `kafka-13407` and `kafka-2437` in `KafkaController`: what the `/controller`
watch enqueues, an election that finds `/controller` naming this broker while no
controller runs here, and a change of `/controller` to another broker.

Setup: broker 7; a fake ZooKeeper whose `/controller` names `holder` (held by this
broker's session when it names 7). The active controller is a stand-in that records its
resignation; the failover is replaced by a recorder (neither is under test here).
"""

from __future__ import annotations

from typing import cast

import pytest
from kazoo.protocol.states import EventType, KeeperState, WatchedEvent

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NO_RESIGN_ON_DATA_CHANGE, OWN_ZNODE_NO_FAILOVER
from bugs.switches import switches_of
from controller import events as ev
from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.controller import KafkaController
from controller.watchers import controller_watch_events
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.controller_election import ControllerEpoch

BROKER = 7


class HolderZk:
    """`/controller` naming `holder` (this session's node when it names broker 7)."""

    def __init__(self, holder: int | None) -> None:
        self.holder = holder
        self.deleted = 0
        self.registered = 0

    def watch_exists(self, path: str, callback: WatchCallback) -> None:
        pass

    def get_controller_id(self) -> int | None:
        return self.holder

    def delete_controller_if_owned(self) -> None:
        if self.holder == BROKER:
            self.holder = None
            self.deleted += 1

    def register_controller_and_increment_epoch(self, broker_id: int) -> ControllerEpoch:
        self.holder = broker_id
        self.registered += 1
        return ControllerEpoch(5, 4, 0x10)


class StandInActive:
    """The active controller's teardown, recorded."""

    def __init__(self) -> None:
        self.resigned = False

    def on_resignation(self) -> bool:
        self.resigned = True
        return True


def _broker(
    zk: HolderZk, switches: BugSwitches, monkeypatch: pytest.MonkeyPatch
) -> tuple[KafkaController, RecordingEventLog, list[int]]:
    events = RecordingEventLog()
    config = ControllerConfig(bug_switches=switches)
    broker = KafkaController(BROKER, cast(KafkaZkClient, zk), events, lambda: 0, config)
    failovers: list[int] = []
    monkeypatch.setattr(broker, "_on_controller_failover", lambda: failovers.append(1))
    return broker, events, failovers


def _make_active(broker: KafkaController) -> StandInActive:
    active = StandInActive()
    broker.active = cast(ActiveController, active)
    broker._active_controller_id = BROKER
    return active


def _watched(kind: EventType, state: KeeperState = KeeperState.CONNECTED) -> WatchedEvent:
    return WatchedEvent(kind, state, "/controller")


def test_a_suspension_re_checks_the_controller_and_only_the_switch_ends_the_term() -> None:
    suspended = _watched(EventType.NONE, KeeperState.CONNECTING)
    assert controller_watch_events(suspended) == (ev.ControllerChange(),)
    buggy = controller_watch_events(suspended, resign_on_suspension=True)
    assert [type(e) for e in buggy] == [ev.Expire, ev.Reelect]
    assert cast(ev.Expire, buggy[0]).reason == "its ZooKeeper connection was lost"
    for resign in (False, True):
        assert controller_watch_events(_watched(EventType.DELETED), resign) == (ev.Reelect(),)
        changed = controller_watch_events(_watched(EventType.CHANGED), resign)
        assert changed == (ev.ControllerChange(),)
        assert controller_watch_events(_watched(EventType.NONE, KeeperState.CLOSED)) == ()


def test_an_own_controller_znode_with_no_controller_running_is_given_up_and_won_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    zk = HolderZk(BROKER)
    broker, events, failovers = _broker(zk, NO_BUGS, monkeypatch)
    broker.process(ev.Reelect())
    assert zk.deleted == 1
    assert zk.registered == 1
    assert failovers == [1]
    assert len(events.of_kind(EventKind.CONTROLLER_ELECTED)) == 1


def test_with_kafka_13407_the_election_stops_at_its_own_znode_and_nothing_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    zk = HolderZk(BROKER)
    broker, events, failovers = _broker(zk, switches_of([OWN_ZNODE_NO_FAILOVER]), monkeypatch)
    active = _make_active(broker)
    broker.process(ev.Expire("its ZooKeeper connection was lost"))
    assert active.resigned
    broker.process(ev.Reelect())
    assert (zk.deleted, zk.registered, failovers) == (0, 0, [])
    assert broker.is_active  # `/controller` names it, so it reports itself active ...
    assert broker.active is None  # ... with no controller running
    resigned = events.of_kind(EventKind.CONTROLLER_RESIGNED)
    assert [e["reason"] for e in resigned] == ["its ZooKeeper connection was lost"]


def test_a_controller_resigns_when_controller_names_another_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    zk = HolderZk(8)
    broker, events, _ = _broker(zk, NO_BUGS, monkeypatch)
    active = _make_active(broker)
    broker.process(ev.ControllerChange())
    assert active.resigned
    assert broker.active is None
    assert events.of_kind(EventKind.CONTROLLER_RESIGNED)


def test_with_kafka_2437_a_change_to_another_broker_leaves_the_controller_acting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    zk = HolderZk(8)
    broker, events, _ = _broker(zk, switches_of([NO_RESIGN_ON_DATA_CHANGE]), monkeypatch)
    active = _make_active(broker)
    broker.process(ev.ControllerChange())
    assert not active.resigned
    assert broker.active is cast(ActiveController, active)  # its duties go on
    assert not broker.is_active
    assert not events.of_kind(EventKind.CONTROLLER_RESIGNED)
    assert events.of_kind(EventKind.CONTROLLER_OBSERVED)
