"""Where a follower finds its leader's address: by default among the live leaders its
LeaderAndIsr names; with bug switch `kafka-4443` among the live brokers of its metadata
cache, as Kafka's broker did before LeaderAndIsr named them, so that a broker whose cache
is still empty (a new process, before any UpdateMetadata) does not fetch.

Setup: broker 1, just started (empty metadata cache), is told to follow broker 2 on
"orders" partition 0; a stand-in replica manager records the leaders it is handed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from broker_node.control_requests import ControlRequestHandler
from broker_node.replica_manager import ReplicaManager
from bugs import NO_BUGS, BugSwitches
from bugs.catalog import LEADER_AND_ISR_FIRST
from domain import EndPoint, TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

HEADER = m.ControlHeader(3, 5, 100)
TP = TopicPartition("orders", 0)
LEADER = m.LiveLeader(2, "broker2", 9092)


class RecordingReplicas:
    """The replica manager's `become_leader_or_follower`, recorded."""

    def __init__(self) -> None:
        self.leaders: list[tuple[m.LiveLeader, ...]] = []

    def become_leader_or_follower(
        self, states: Iterable[m.LeaderAndIsrPartitionState], live_leaders: Iterable[m.LiveLeader]
    ) -> dict[TopicPartition, Errors]:
        self.leaders.append(tuple(live_leaders))
        return {}


def _shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)


def _handler(switches: BugSwitches) -> tuple[ControlRequestHandler, RecordingReplicas]:
    replicas = RecordingReplicas()
    control = ControlRequestHandler(
        1,
        lambda: 100,
        RecordingEventLog("b1"),
        _shutdown,
        cast(ReplicaManager, replicas),
        bug_switches=switches,
    )
    control.on_registered()
    return control, replicas


def _follow(control: ControlRequestHandler, leader_epoch: int) -> None:
    state = m.LeaderAndIsrPartitionState(
        TP.topic, TP.partition, 5, 2, leader_epoch, (1, 2), 0, (1, 2)
    )
    answer = control.leader_and_isr(m.LeaderAndIsrRequest(HEADER, (state,), (LEADER,)))
    assert answer.partition_errors == (m.PartitionError(TP, Errors.NONE),)


def _metadata_naming_broker_2(control: ControlRequestHandler) -> None:
    live = (m.LiveBroker(2, (EndPoint("broker2", 9092),)),)
    assert control.update_metadata(m.UpdateMetadataRequest(HEADER, (), live)).error is Errors.NONE


def test_a_follower_finds_its_leader_in_the_leader_and_isr_itself() -> None:
    control, replicas = _handler(NO_BUGS)
    _follow(control, 7)
    assert replicas.leaders == [(LEADER,)]


def test_with_kafka_4443_a_follower_with_an_empty_cache_finds_no_leader() -> None:
    control, replicas = _handler(BugSwitches(frozenset({LEADER_AND_ISR_FIRST})))
    _follow(control, 7)
    assert replicas.leaders == [()]  # nowhere to fetch from
    _metadata_naming_broker_2(control)
    _follow(control, 8)  # only a later LeaderAndIsr, after the UpdateMetadata, finds it
    assert replicas.leaders[1] == (LEADER,)
