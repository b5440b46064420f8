"""Bug switches of the controller's state changes, through `ActiveController`'s wiring
from `ControllerConfig` to the state machines over `FakePartitionZk`:

- `kafka-5083`: the last ISR member going offline leaves an empty ISR;
- `unclean-election`: an out-of-sync live replica leads although the topic's config
  forbids it;
- `kafka-6082`: writes are checked at ZooKeeper's any-version of `/controller_epoch`, so
  those of a controller that was replaced still land.

Setup: controller epoch 4 won at `/controller_epoch` zkVersion 12, brokers 1, 2, 3
registered; topic "orders" partition 0 on replicas 1, 2, 3, leader 1 at leader epoch 4,
state znode at zkVersion 7. Without switches each test shows Kafka's fixed behaviour.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest

from bugs import NO_BUGS, BugSwitches
from bugs.catalog import EMPTY_ISR, UNCLEAN_ELECTION, UNFENCED_ZK_WRITES
from controller.active import ActiveController, fencing_version
from controller.config import ControllerConfig
from controller.context import ControllerContext, PartitionReplica
from controller.election_strategies import OfflineElection
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import FakeChannels, make_broker
from controller.testing.zookeeper import FakePartitionZk
from controller.watchers import Watchers
from domain import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.errors import ControllerMovedError
from zkdata.fenced_writes import ANY_EPOCH_VERSION
from zkdata.model import ReplicaAssignment
from zkdata.topic_configs import UNCLEAN_LEADER_ELECTION_ENABLE

CONTROLLER_ID = 9
EPOCH = 4
EPOCH_ZK_VERSION = 12
TP = TopicPartition("orders", 0)


class Controller:
    """An `ActiveController` over a fake ZooKeeper, its channels never started."""

    def __init__(self, switches: BugSwitches, isr: tuple[int, ...]) -> None:
        self.ctx = ControllerContext()
        self.ctx.epoch = EPOCH
        self.ctx.epoch_zk_version = EPOCH_ZK_VERSION
        self.ctx.set_live_brokers(make_broker(b) for b in (1, 2, 3))
        self.ctx.add_topic(TP.topic, {0: ReplicaAssignment((1, 2, 3))})
        self.zk = FakePartitionZk(EPOCH_ZK_VERSION)
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, isr, 7), EPOCH - 1)
        self.zk.put_state(TP, state, 7)
        self.ctx.set_leadership(TP, state)
        self.ctx.set_partition_state(TP, PartitionState.ONLINE)
        for replica in self.ctx.replicas_for_partitions([TP]):
            self.ctx.set_replica_state(replica, ReplicaState.ONLINE)
        self.events = RecordingEventLog()
        self.active = ActiveController(
            CONTROLLER_ID,
            self.ctx,
            cast(KafkaZkClient, self.zk),
            self.events,
            Watchers(lambda _: None),
            ControllerConfig(bug_switches=switches),
            FakeChannels(),
        )

    def kill(self, broker_id: int) -> None:
        """The broker's registration is gone: its replica goes offline."""
        self.ctx.remove_live_brokers([broker_id])
        self.active.replicas.handle_state_changes(
            [PartitionReplica(TP, broker_id)], ReplicaState.OFFLINE
        )


@pytest.fixture
def built() -> Iterator[list[Controller]]:
    made: list[Controller] = []
    yield made
    for controller in made:
        controller.active.on_resignation()


def _controller(built: list[Controller], switches: BugSwitches, isr: tuple[int, ...]) -> Controller:
    built.append(Controller(switches, isr))
    return built[-1]


# -- kafka-5083 ---------------------------------------------------------------------------


def test_the_last_isr_member_stays_in_the_isr_by_default(built: list[Controller]) -> None:
    controller = _controller(built, NO_BUGS, isr=(1,))
    controller.kill(1)
    stored = controller.zk.state(TP)
    assert stored is not None
    assert (stored.leader_and_isr.leader, stored.leader_and_isr.isr) == (NO_LEADER, (1,))


def test_kafka_5083_empties_the_isr_when_its_last_member_dies(built: list[Controller]) -> None:
    controller = _controller(built, BugSwitches(frozenset({EMPTY_ISR})), isr=(1,))
    controller.kill(1)
    stored = controller.zk.state(TP)
    assert stored is not None
    assert (stored.leader_and_isr.leader, stored.leader_and_isr.isr) == (NO_LEADER, ())
    (changed,) = controller.events.of_kind(EventKind.ISR_CHANGED)
    assert changed["isr"] == []


def test_kafka_5083_shrinks_a_larger_isr_as_usual(built: list[Controller]) -> None:
    controller = _controller(built, BugSwitches(frozenset({EMPTY_ISR})), isr=(1, 2))
    controller.kill(2)
    stored = controller.zk.state(TP)
    assert stored is not None
    assert stored.leader_and_isr.isr == (1,)


# -- unclean-election -----------------------------------------------------------------------


def _offline_election(controller: Controller) -> object:
    controller.ctx.set_topic_config(TP.topic, {UNCLEAN_LEADER_ELECTION_ENABLE: "false"})
    controller.ctx.remove_live_brokers([1])
    controller.ctx.set_partition_state(TP, PartitionState.OFFLINE)
    return controller.active.partitions.handle_state_changes(
        [TP], PartitionState.ONLINE, OfflineElection()
    )[TP]


def test_an_out_of_sync_replica_never_leads_by_default(built: list[Controller]) -> None:
    controller = _controller(built, NO_BUGS, isr=(1,))
    assert _offline_election(controller) == "no eligible leader (offline)"
    assert controller.ctx.partition_state(TP) is PartitionState.OFFLINE


def test_unclean_election_switch_ignores_the_topic_config(built: list[Controller]) -> None:
    controller = _controller(built, BugSwitches(frozenset({UNCLEAN_ELECTION})), isr=(1,))
    assert _offline_election(controller) == LeaderAndIsr(2, 5, (2,), 8)
    (elected,) = controller.events.of_kind(EventKind.LEADER_ELECTED)
    assert elected["unclean"] is True


def test_unclean_election_switch_still_prefers_a_live_isr_member(built: list[Controller]) -> None:
    controller = _controller(built, BugSwitches(frozenset({UNCLEAN_ELECTION})), isr=(1, 3))
    assert _offline_election(controller) == LeaderAndIsr(3, 5, (3,), 8)


# -- kafka-6082 -----------------------------------------------------------------------------


def test_fencing_version_is_the_won_one_unless_kafka_6082() -> None:
    assert fencing_version(EPOCH_ZK_VERSION, NO_BUGS) == EPOCH_ZK_VERSION
    switches = BugSwitches(frozenset({UNFENCED_ZK_WRITES}))
    assert fencing_version(EPOCH_ZK_VERSION, switches) == ANY_EPOCH_VERSION


@pytest.mark.parametrize(
    ("switches", "lands"),
    [
        pytest.param(NO_BUGS, False, id="fenced"),
        pytest.param(BugSwitches(frozenset({UNFENCED_ZK_WRITES})), True, id="kafka-6082"),
    ],
)
def test_a_replaced_controllers_isr_write(
    built: list[Controller], switches: BugSwitches, lands: bool
) -> None:
    """Another controller was elected (`/controller_epoch` moved to zkVersion 13) and this
    one, not yet aware, takes a dead follower out of the ISR."""
    controller = _controller(built, switches, isr=(1, 2, 3))
    controller.ctx.epoch_zk_version = fencing_version(EPOCH_ZK_VERSION, switches)
    controller.zk.epoch_zk_version = EPOCH_ZK_VERSION + 1
    if not lands:
        with pytest.raises(ControllerMovedError):
            controller.kill(3)
        assert controller.zk.zk_version(TP) == 7
        return
    controller.kill(3)
    stored = controller.zk.state(TP)
    assert stored is not None
    assert (stored.leader_and_isr.isr, stored.controller_epoch) == ((1, 2), EPOCH)
