"""Bug switch `kafka-4229` in `KafkaController`: by default a controller whose session
expired resigns, and when it wins a later election it fails over again as any winner
does. With the switch the expired term leaves its state behind: the next failover fails
before it starts, and the broker holds `/controller` without an active controller.

Setup: broker 7 wins epoch 4 (the failover itself is a recording stand-in); its session
expires; the new session re-registers it and it wins epoch 5.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import STALE_TERM_STATE
from controller import controller as controller_module
from controller import events as ev
from controller.config import ControllerConfig
from controller.controller import KafkaController
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.controller_election import ControllerEpoch


class ElectionZk:
    """`/controller` and `/controller_epoch`: every election is won."""

    def __init__(self) -> None:
        self.holder: int | None = None
        self.epoch = 3

    def watch_exists(self, path: str, callback: WatchCallback) -> None:
        pass

    def get_controller_id(self) -> int | None:
        return self.holder

    def register_controller_and_increment_epoch(self, broker_id: int) -> ControllerEpoch:
        self.holder, self.epoch = broker_id, self.epoch + 1
        return ControllerEpoch(self.epoch, self.epoch + 10, 1000 + self.epoch)

    def delete_controller_if_owned(self) -> None:
        self.holder = None


class FailoverRecorder:
    """Stands in for `ActiveController`: records each failover it is asked to run."""

    failovers: list[int] = []

    def __init__(self, broker_id: int, context: Any, *_args: Any) -> None:
        self._context = context
        self.deletion = self

    def on_failover(self) -> None:
        FailoverRecorder.failovers.append(self._context.epoch)

    def on_resignation(self) -> bool:
        return True

    def ineligible_topics(self) -> tuple[str, ...]:
        return ()


@pytest.fixture
def failovers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    FailoverRecorder.failovers = []
    monkeypatch.setattr(controller_module, "ActiveController", FailoverRecorder)
    return FailoverRecorder.failovers


def _expired_then_reelected(switches: BugSwitches) -> tuple[KafkaController, RecordingEventLog]:
    zk, events = ElectionZk(), RecordingEventLog()
    config = ControllerConfig(bug_switches=switches)
    broker = KafkaController(7, cast(KafkaZkClient, zk), events, lambda: 0, config)
    broker.process(ev.Startup())
    assert broker.is_active
    assert broker.active is not None
    broker.process(ev.Expire())
    zk.holder = None  # the expired session's /controller went with it
    broker.process(ev.RegisterBrokerAndReelect())
    assert zk.holder == 7
    assert broker.context.epoch == 5
    return broker, events


def test_a_controller_whose_session_expired_fails_over_again_by_default(
    failovers: list[int],
) -> None:
    broker, events = _expired_then_reelected(NO_BUGS)
    assert failovers == [4, 5]
    assert broker.is_active
    assert broker.active is not None
    assert events.of_kind(EventKind.EVENT_FAILED) == []


def test_kafka_4229_the_next_failover_fails_and_nobody_acts(failovers: list[int]) -> None:
    broker, events = _expired_then_reelected(BugSwitches(frozenset({STALE_TERM_STATE})))
    assert failovers == [4]
    assert broker.active_controller_id == 7  # the controller of record
    assert broker.active is None
    (failed,) = events.of_kind(EventKind.EVENT_FAILED)
    assert failed["event"] == "ControllerFailover"
    assert "epoch 4" in failed["error"]
