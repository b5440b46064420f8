"""The controller's AlterIsr (`controller.alter_isr`), after Kafka 2.8's
`KafkaController.processAlterIsr` and `ControllerIntegrationTest.testIdempotentAlterIsr`.

Setup: broker 1 (epoch 101) leads "orders" partition 0, replicas (1, 2, 3), at leader
epoch 5 with ISR (1, 2) in a state znode at zkVersion 7; the controller (epoch 3) knows
the same. A `FakePartitionZk` stands for ZooKeeper; UpdateMetadata sends are recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from kazoo.exceptions import BadVersionError, ConnectionLoss, NoNodeError

from controller.alter_isr import (
    check_broker_epoch,
    judge_partition,
    process_alter_isr,
    written_outcome,
)
from controller.context import ControllerContext
from controller.testing.brokers import make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors
from zkdata.errors import ControllerMovedError
from zkdata.model import ReplicaAssignment

TP = TopicPartition("orders", 0)
OTHER = TopicPartition("orders", 1)
THIRD = TopicPartition("orders", 2)
CURRENT = LeaderAndIsr(1, 5, (1, 2), 7)
CONTROLLER_EPOCH = 3


def proposal(
    epoch: int = 5, isr: tuple[int, ...] = (1, 2, 3), version: int = 7, tp: TopicPartition = TP
) -> m.AlterIsrPartition:
    """Broker 1's proposal for `tp`."""
    return m.AlterIsrPartition(tp, epoch, isr, version)


# -- the decisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("known", "sent", "expected"),
    [
        (101, 101, Errors.NONE),
        (101, 100, Errors.STALE_BROKER_EPOCH),  # testStaleBrokerEpoch: an older registration
        (101, 102, Errors.STALE_BROKER_EPOCH),
        (None, 101, Errors.STALE_BROKER_EPOCH),  # the broker is not live
    ],
)
def test_check_broker_epoch(known: int | None, sent: int, expected: Errors) -> None:
    assert check_broker_epoch(known, sent) is expected


@pytest.mark.parametrize(
    ("current", "proposed", "expected"),
    [
        # the controller does not know the partition
        (None, proposal(), (Errors.UNKNOWN_TOPIC_OR_PARTITION, False)),
        # an older leader epoch than the controller's: FENCED_LEADER_EPOCH
        (CURRENT, proposal(epoch=4), (Errors.FENCED_LEADER_EPOCH, False)),
        # testIdempotentAlterIsr: the state already says it; answered, nothing written
        (CURRENT, proposal(isr=(1, 2), version=6), (CURRENT, False)),
        # a new ISR at the current epoch: written at the zkVersion the leader sent
        (CURRENT, proposal(), (LeaderAndIsr(1, 5, (1, 2, 3), 7), True)),
        # an older zkVersion is left for ZooKeeper to refuse (INVALID_UPDATE_VERSION)
        (CURRENT, proposal(version=6), (LeaderAndIsr(1, 5, (1, 2, 3), 6), True)),
        # Kafka 2.8 fences only older epochs: a newer one is written as asked
        (CURRENT, proposal(epoch=6), (LeaderAndIsr(1, 6, (1, 2, 3), 7), True)),
    ],
)
def test_judge_partition(
    current: LeaderAndIsr | None,
    proposed: m.AlterIsrPartition,
    expected: tuple[object, bool],
) -> None:
    assert judge_partition(current, 1, proposed) == expected


def test_judge_partition_takes_the_sender_as_leader() -> None:
    """The ISR (1, 2) at epoch 5 sent by broker 2 differs from broker 1's state."""
    answer, write = judge_partition(CURRENT, 2, proposal(isr=(1, 2)))
    assert (answer, write) == (LeaderAndIsr(2, 5, (1, 2), 7), True)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (8, LeaderAndIsr(1, 5, (1, 2, 3), 8)),
        (BadVersionError(), Errors.INVALID_UPDATE_VERSION),
        (NoNodeError(), Errors.UNKNOWN_TOPIC_OR_PARTITION),
        (ConnectionLoss(), Errors.UNKNOWN_SERVER_ERROR),
    ],
)
def test_written_outcome(outcome: object, expected: object) -> None:
    wanted = LeaderAndIsr(1, 5, (1, 2, 3), 7)
    assert written_outcome(wanted, outcome) == expected  # type: ignore[arg-type]


# -- processing a request --------------------------------------------------------------------


@dataclass
class Rig:
    """A controller context, its fake ZooKeeper, the event log and the sends recorded."""

    ctx: ControllerContext = field(default_factory=ControllerContext)
    zk: FakePartitionZk = field(default_factory=lambda: FakePartitionZk(epoch_zk_version=2))
    events: RecordingEventLog = field(default_factory=lambda: RecordingEventLog("controller"))
    sent: list[tuple[frozenset[int], list[TopicPartition]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ctx.epoch = CONTROLLER_EPOCH
        self.ctx.epoch_zk_version = 2
        self.ctx.add_live_brokers([make_broker(1), make_broker(2), make_broker(3)])
        assignment = ReplicaAssignment((1, 2, 3))
        self.ctx.add_topic("orders", {0: assignment, 1: assignment, 2: assignment})
        for tp in (TP, OTHER, THIRD):
            state = LeaderIsrAndControllerEpoch(CURRENT, CONTROLLER_EPOCH)
            self.zk.put_state(tp, state, CURRENT.zk_version)
            self.ctx.set_leadership(tp, state)

    def send(self, brokers: frozenset[int], partitions: list[TopicPartition]) -> None:
        """Records an UpdateMetadata."""
        self.sent.append((brokers, partitions))

    def alter(self, *partitions: m.AlterIsrPartition, epoch: int = 101) -> m.AlterIsrResponse:
        """Broker 1's AlterIsr."""
        return process_alter_isr(
            self.ctx, self.zk, self.events, self.send, m.AlterIsrRequest(1, epoch, partitions)
        )


def test_a_new_isr_is_written_fenced_taken_and_announced() -> None:
    rig = Rig()
    response = rig.alter(proposal())
    assert response == m.AlterIsrResponse(
        Errors.NONE, (m.AlterIsrPartitionResult(TP, Errors.NONE, 1, 5, (1, 2, 3), 8),)
    )
    (write,) = rig.zk.calls_to("update_leader_and_isr")
    assert write.epoch_zk_version == 2
    stored = rig.zk.state(TP)
    assert stored is not None
    assert (stored.leader_and_isr.isr, stored.controller_epoch) == ((1, 2, 3), CONTROLLER_EPOCH)
    taken = rig.ctx.leadership(TP)
    assert taken is not None
    assert taken.leader_and_isr == LeaderAndIsr(1, 5, (1, 2, 3), 8)
    assert rig.sent == [(frozenset({1, 2, 3}), [TP])]
    (event,) = rig.events.of_kind(EventKind.ALTER_ISR_HANDLED)
    assert (event["written"], event["rejected"], event["error"]) == (1, [], "NONE")


def test_idempotent_alter_isr_answers_the_current_state_without_writing() -> None:
    """Kafka's testIdempotentAlterIsr."""
    rig = Rig()
    response = rig.alter(proposal(isr=(1, 2)))
    assert response.partitions == (m.AlterIsrPartitionResult(TP, Errors.NONE, 1, 5, (1, 2), 7),)
    assert rig.zk.calls_to("update_leader_and_isr") == []


def test_a_stale_broker_epoch_refuses_the_whole_request() -> None:
    rig = Rig()
    assert rig.alter(proposal(), epoch=100) == m.AlterIsrResponse(Errors.STALE_BROKER_EPOCH)
    assert rig.zk.calls == []
    assert rig.sent == []


def test_an_unknown_broker_is_a_stale_broker_epoch() -> None:
    rig = Rig()
    rig.ctx.remove_live_brokers([1])
    assert rig.alter(proposal()).error is Errors.STALE_BROKER_EPOCH


def test_each_partition_gets_its_own_error() -> None:
    """A good write, a zkVersion conflict, an unknown partition and a fenced epoch in one
    request: each answered on its own, only the good one taken; UpdateMetadata names the
    known ones."""
    rig = Rig()
    rig.zk.bump_version_once(OTHER, LeaderIsrAndControllerEpoch(CURRENT, CONTROLLER_EPOCH))
    unknown = TopicPartition("gone", 0)
    response = rig.alter(
        proposal(),
        proposal(tp=OTHER),
        proposal(tp=unknown),
        proposal(tp=THIRD, epoch=4),
    )
    errors = {r.topic_partition: r.error for r in response.partitions}
    assert errors == {
        TP: Errors.NONE,
        THIRD: Errors.FENCED_LEADER_EPOCH,
        OTHER: Errors.INVALID_UPDATE_VERSION,
        unknown: Errors.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert rig.ctx.leadership(OTHER) == LeaderIsrAndControllerEpoch(CURRENT, CONTROLLER_EPOCH)
    (event,) = rig.events.of_kind(EventKind.ALTER_ISR_HANDLED)
    assert (event["written"], event["partitions"]) == (1, 4)
    assert event["rejected"] == [
        "gone-0:UNKNOWN_TOPIC_OR_PARTITION",
        "orders-1:INVALID_UPDATE_VERSION",
        "orders-2:FENCED_LEADER_EPOCH",
    ]
    assert rig.sent == [(frozenset({1, 2, 3}), [TP, OTHER, THIRD])]


def test_a_partition_named_twice_is_judged_once_by_its_last_entry() -> None:
    rig = Rig()
    response = rig.alter(proposal(), proposal(epoch=4))
    assert response.partitions == (m.AlterIsrPartitionResult(TP, Errors.FENCED_LEADER_EPOCH),)
    assert rig.zk.calls_to("update_leader_and_isr") == []


def test_a_moved_controller_raises_and_takes_nothing() -> None:
    rig = Rig()
    rig.zk.epoch_zk_version = 3  # another controller was elected
    with pytest.raises(ControllerMovedError):
        rig.alter(proposal())
    taken = rig.ctx.leadership(TP)
    assert taken is not None
    assert taken.leader_and_isr == CURRENT
    assert rig.sent == []
