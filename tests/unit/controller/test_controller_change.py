"""ControllerChange (the `/controller` watch saw a creation or a change): Kafka 2.8's
`processControllerChange` only re-reads `/controller` and resigns if needed, waiting for
the deletion watch's Reelect to run an election. kazoo's watches are one-shot, so the
watch re-armed after `/controller` vanished would never see that deletion: finding no
controller at all, the event runs the election itself (docs/fencing.md, section 1).

Setup: broker 7, not the controller; `/controller` is absent and every attempt to take it
loses the race to a winner that is gone again at once.
"""

from __future__ import annotations

from typing import cast

from controller import events as ev
from controller.config import ControllerConfig
from controller.controller import KafkaController
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.errors import ControllerMovedError


class ElectionZk:
    """The controller election's ZooKeeper calls: no controller, every race lost."""

    def __init__(self) -> None:
        self.attempts = 0
        self.watched: list[str] = []

    def watch_exists(self, path: str, callback: WatchCallback) -> None:
        self.watched.append(path)

    def get_controller_id(self) -> int | None:
        return None

    def register_controller_and_increment_epoch(self, broker_id: int) -> object:
        self.attempts += 1
        raise ControllerMovedError("lost the race")


def controller(zk: ElectionZk, candidate: bool = True) -> KafkaController:
    config = ControllerConfig(candidate=candidate)
    return KafkaController(7, cast(KafkaZkClient, zk), RecordingEventLog(), lambda: 0, config)


def test_a_controller_change_that_finds_no_controller_runs_the_election() -> None:
    zk = ElectionZk()
    broker = controller(zk)
    broker.process(ev.ControllerChange())
    assert zk.attempts == 3  # three attempts from a fresh read, as after a Reelect
    assert not broker.is_active
    assert "/controller" in zk.watched


def test_a_reelect_runs_the_same_election() -> None:
    zk = ElectionZk()
    controller(zk).process(ev.Reelect())
    assert zk.attempts == 3


def test_a_broker_that_is_no_candidate_watches_but_never_runs() -> None:
    zk = ElectionZk()
    broker = controller(zk, candidate=False)
    for event in (ev.Startup(), ev.Reelect(), ev.ControllerChange()):
        broker.process(event)
    assert zk.attempts == 0
    assert not broker.is_active
    assert zk.watched.count("/controller") == 3  # still observes the next controller
