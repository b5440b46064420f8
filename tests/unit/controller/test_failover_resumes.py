"""What `ActiveController.on_failover` resumes, and bug switch `kafka-1681`: by default a
new controller queues the topic deletions `/admin/delete_topics` asks for and resumes the
reassignments in flight; with the switch it does neither (they wait until their znode
changes again), while the rest of the failover runs as before. And when it tells the live
brokers: by default before the state machines start (their LeaderAndIsr then finds every
broker's metadata cache knowing the leaders, KAFKA-4443); with bug switch `kafka-4443`
after them.

The duties are recording stand-ins and ZooKeeper a stub that answers the few reads the
failover makes itself: no broker, no partition, one deletion request for "doomed".
"""

from __future__ import annotations

from typing import cast

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import LEADER_AND_ISR_FIRST, NO_RESUME
from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.context import ControllerContext
from controller.testing.brokers import FakeChannels
from controller.watchers import Watchers
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata import paths
from zkdata.client import BrokerListing, KafkaZkClient
from zkdata.pipelined_reads import Reads


class StubZk:
    """The reads `on_failover` makes itself; watches are accepted and never fire."""

    kazoo = None

    def watch_children(self, path: str, callback: object) -> list[str]:
        return ["doomed"] if path == paths.DELETE_TOPICS else []

    def watch_exists(self, path: str, callback: object) -> bool:
        return False

    def get_all_brokers(self) -> BrokerListing:
        return BrokerListing({}, {})

    def get_partition_states(
        self, partitions: list[TopicPartition], readers: object = None
    ) -> Reads[TopicPartition, object]:
        return Reads({}, {})


class Duty:
    """Records every call made to it, by method name and arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def __getattr__(self, name: str) -> object:
        def record(*args: object) -> None:
            self.calls.append((name, tuple(list(a) if isinstance(a, list) else a for a in args)))

        return record


def _failover(switches: BugSwitches) -> tuple[Duty, Duty, RecordingEventLog]:
    events = RecordingEventLog()
    active = ActiveController(
        9,
        ControllerContext(),
        cast(KafkaZkClient, StubZk()),
        events,
        Watchers(lambda _: None),
        ControllerConfig(bug_switches=switches),
        FakeChannels(),
    )
    deletion, reassignments = Duty(), Duty()
    active.deletion = deletion  # type: ignore[assignment]
    active.reassignments = reassignments  # type: ignore[assignment]
    active.topics = Duty()  # type: ignore[assignment]
    active.elections = Duty()  # type: ignore[assignment]
    try:
        active.on_failover()
    finally:
        active.channels.shutdown()
    return deletion, reassignments, events


def test_a_new_controller_resumes_deletions_and_reassignments() -> None:
    deletion, reassignments, _ = _failover(NO_BUGS)
    assert deletion.calls == [("init", (["doomed"],)), ("try_topic_deletion", ())]
    assert reassignments.calls == [("on_failover", ())]


def test_kafka_1681_a_new_controller_resumes_nothing() -> None:
    deletion, reassignments, events = _failover(BugSwitches(frozenset({NO_RESUME})))
    assert deletion.calls == [("init", ([],)), ("try_topic_deletion", ())]
    assert reassignments.calls == []
    assert len(events.of_kind(EventKind.CONTROLLER_FAILOVER_DONE)) == 1


def _steps(events: RecordingEventLog) -> list[str]:
    return [e["step"] for e in events.of_kind(EventKind.CONTROLLER_FAILOVER_STEP)]


def test_a_new_controller_tells_the_live_brokers_before_starting_the_state_machines() -> None:
    steps = _steps(_failover(NO_BUGS)[2])
    assert steps.index("update_metadata_sent") < steps.index("state_machines_started")


def test_kafka_4443_a_new_controller_tells_the_live_brokers_after_the_state_machines() -> None:
    steps = _steps(_failover(BugSwitches(frozenset({LEADER_AND_ISR_FIRST})))[2])
    assert steps.index("update_metadata_sent") > steps.index("state_machines_started")
    assert steps.count("update_metadata_sent") == 1
