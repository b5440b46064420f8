"""ISR change notifications on the active controller (Kafka 2.8's
`processIsrChangeNotification`): the notified partitions' states are reloaded into the
context, every live broker gets them in UpdateMetadata, and the notifications are
deleted. A partition the controller does not know (its topic deleted meanwhile) is left
out; Kafka reloads it into its cache and sends it with no replicas (kafka-differences.md,
ISR change notifications for unknown partitions).

Setup: broker 1 and 2 live; topic "t" with partition 0 on [1, 2]; the leader shrank the
ISR to [1] and wrote a notification naming t-0 and "gone"-0, a partition of a deleted
topic.
"""

from __future__ import annotations

from typing import cast

import pytest

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import NO_ISR_METADATA
from controller import active, isr_changes
from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.context import ControllerContext
from controller.testing.brokers import FakeChannels, make_broker
from controller.testing.zookeeper import FakePartitionZk
from controller.watchers import Watchers
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.model import ReplicaAssignment
from zkdata.pipelined_reads import Reads

TP, GONE = TopicPartition("t", 0), TopicPartition("gone", 0)


def test_known_partitions_are_reloaded_and_sent_unknown_ones_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    ctx.add_topic("t", {0: ReplicaAssignment((1, 2))})
    ctx.set_leadership(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2)), 1))
    zk = FakePartitionZk()
    shrunk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1,)), 1)
    zk.put_state(TP, shrunk, 8)
    zk.put_state(GONE, shrunk, 2)
    notes = Reads({"isr_change_0000000004": (TP, GONE)}, {})
    deleted: list[list[str]] = []
    monkeypatch.setattr(isr_changes, "read_isr_change_notifications", lambda zk, watch: notes)
    monkeypatch.setattr(
        isr_changes,
        "delete_isr_change_notifications",
        lambda zk, children, version: deleted.append(list(children)),
    )
    sent: list[tuple[frozenset[int], list[TopicPartition]]] = []
    isr_changes.process_isr_change_notification(
        ctx,
        cast(KafkaZkClient, zk),
        Watchers(lambda _: None),
        RecordingEventLog(),
        lambda brokers, partitions: sent.append((frozenset(brokers), partitions)),
    )
    state = ctx.leadership(TP)
    assert state is not None
    assert state.leader_and_isr.isr == (1,)
    assert ctx.leadership(GONE) is None
    assert sent == [(frozenset({1, 2}), [TP])]
    assert deleted == [["isr_change_0000000004"]]


def test_kafka_1367_reloads_the_context_but_tells_no_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bug switch `kafka-1367` (no `send_update_metadata`): the context learns the shrunk
    ISR and the notification is handled, but the brokers' metadata keeps the old ISR."""
    ctx = ControllerContext()
    ctx.set_live_brokers([make_broker(1), make_broker(2)])
    ctx.add_topic("t", {0: ReplicaAssignment((1, 2))})
    ctx.set_leadership(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2)), 1))
    zk = FakePartitionZk()
    zk.put_state(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1,)), 1), 8)
    notes = Reads({"isr_change_0000000005": (TP,)}, {})
    deleted: list[list[str]] = []
    monkeypatch.setattr(isr_changes, "read_isr_change_notifications", lambda zk, watch: notes)
    monkeypatch.setattr(
        isr_changes,
        "delete_isr_change_notifications",
        lambda zk, children, version: deleted.append(list(children)),
    )
    events = RecordingEventLog()
    isr_changes.process_isr_change_notification(
        ctx, cast(KafkaZkClient, zk), Watchers(lambda _: None), events, None
    )
    state = ctx.leadership(TP)
    assert state is not None
    assert state.leader_and_isr.isr == (1,)
    assert deleted == [["isr_change_0000000005"]]
    [handled] = events.of_kind(EventKind.ISR_CHANGE_HANDLED)
    assert handled["partitions"] == 1


@pytest.mark.parametrize(
    ("switches", "tells"),
    [(NO_BUGS, True), (BugSwitches(frozenset({NO_ISR_METADATA})), False)],
    ids=["fixed", "kafka-1367"],
)
def test_the_active_controller_passes_the_update_metadata_sender_unless_kafka_1367(
    monkeypatch: pytest.MonkeyPatch, switches: BugSwitches, tells: bool
) -> None:
    passed: list[object] = []
    monkeypatch.setattr(
        active, "process_isr_change_notification", lambda *args: passed.append(args[-1])
    )
    ctx = ControllerContext()
    controller = ActiveController(
        9,
        ctx,
        cast(KafkaZkClient, FakePartitionZk()),
        RecordingEventLog(),
        Watchers(lambda _: None),
        ControllerConfig(bug_switches=switches),
        FakeChannels(),
    )
    try:
        controller.process_isr_change_notification()
    finally:
        controller.on_resignation()
    [sender] = passed
    assert (sender is not None) is tells
