"""Every case of Kafka 2.8's `PartitionStateMachineTest` as data: each case id is the Kafka
test method it mirrors. Kafka drives `ZkPartitionStateMachine` against mocks of
`KafkaZkClient` and the request batch; here `PartitionStateMachine` runs against
`FakePartitionZk` and a real `RequestBatch` whose sends are recorded, so each case checks
the state reached, what was written to ZooKeeper and what each broker was sent.

The numbers are Kafka's: broker 5 (and 6), controller epoch 50, partition t-0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from kazoo.exceptions import ConnectionLoss
from parity_rig import BROKER, CONTROLLER_EPOCH, OTHER, TP, make_parity_rig

from controller.context import PartitionReplica
from controller.election_strategies import (
    ControlledShutdownElection,
    ElectionStrategy,
    OfflineElection,
    PreferredElection,
)
from controller.partition_state_machine import PartitionStateMachine
from controller.states import PartitionState, ReplicaState
from domain import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from zkdata.fenced_writes import OpResult
from zkdata.model import ReplicaAssignment
from zkdata.pipelined_reads import Reads

P = PartitionState

# --- transitions that touch neither ZooKeeper nor the brokers --------------------------------


@pytest.mark.parametrize(
    ("start", "target", "end"),
    [
        pytest.param(
            P.NON_EXISTENT, P.NEW, P.NEW, id="testNonexistentPartitionToNewPartitionTransition"
        ),
        pytest.param(
            P.NON_EXISTENT,
            P.ONLINE,
            P.NON_EXISTENT,
            id="testInvalidNonexistentPartitionToOnlinePartitionTransition",
        ),
        pytest.param(
            P.NON_EXISTENT,
            P.OFFLINE,
            P.NON_EXISTENT,
            id="testInvalidNonexistentPartitionToOfflinePartitionTransition",
        ),
        pytest.param(
            P.NEW, P.OFFLINE, P.OFFLINE, id="testNewPartitionToOfflinePartitionTransition"
        ),
        pytest.param(
            P.NEW,
            P.NON_EXISTENT,
            P.NEW,
            id="testInvalidNewPartitionToNonexistentPartitionTransition",
        ),
        pytest.param(P.ONLINE, P.OFFLINE, P.OFFLINE, id="testOnlinePartitionToOfflineTransition"),
        pytest.param(
            P.ONLINE,
            P.NON_EXISTENT,
            P.ONLINE,
            id="testInvalidOnlinePartitionToNonexistentPartitionTransition",
        ),
        pytest.param(
            P.ONLINE, P.NEW, P.ONLINE, id="testInvalidOnlinePartitionToNewPartitionTransition"
        ),
        pytest.param(
            P.OFFLINE,
            P.NON_EXISTENT,
            P.NON_EXISTENT,
            id="testOfflinePartitionToNonexistentPartitionTransition",
        ),
        pytest.param(
            P.OFFLINE, P.NEW, P.OFFLINE, id="testInvalidOfflinePartitionToNewPartitionTransition"
        ),
    ],
)
def test_plain_transition(
    start: PartitionState, target: PartitionState, end: PartitionState
) -> None:
    """Valid transitions only change the state; invalid ones leave it and are reported.
    Neither writes to ZooKeeper or sends a request (Online from NonExistent is refused
    before any election)."""
    rig = make_parity_rig()
    rig.live(BROKER)
    rig.ctx.add_topic(TP.topic, {0: ReplicaAssignment((BROKER,))})
    rig.ctx.set_partition_state(TP, start)
    rig.psm.handle_state_changes([TP], target, OfflineElection())
    assert rig.ctx.partition_state(TP) is end
    assert rig.zk.calls == []
    assert rig.send.sent == []
    invalid = rig.events.of_kind(EventKind.INVALID_STATE_TRANSITION)
    assert len(invalid) == (0 if end is target else 1)


# --- transitions to Online: elections ----------------------------------------------------------


@dataclass(frozen=True)
class Election:
    """One election case: the cluster, the state znode before, what must be written (leader,
    leader epoch, ISR; None: nothing) and which brokers get LeaderAndIsr."""

    live: tuple[int, ...]
    replicas: tuple[int, ...]
    start: PartitionState
    znode: tuple[int, tuple[int, ...]] | None  # leader, ISR at leader epoch 0
    strategy: ElectionStrategy
    written: tuple[int, int, tuple[int, ...]] | None
    recipients: tuple[int, ...]
    end: PartitionState
    shutting_down: tuple[int, ...] = ()


ELECTIONS = [
    pytest.param(
        Election((BROKER,), (BROKER,), P.NEW, None, OfflineElection(), (BROKER, 0, (BROKER,)),
                 (BROKER,), P.ONLINE),
        id="testNewPartitionToOnlinePartitionTransition",
    ),
    pytest.param(
        Election((BROKER,), (BROKER,), P.NEW, (BROKER, (BROKER,)), OfflineElection(), None, (),
                 P.NEW),
        id="testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates",
    ),
    pytest.param(
        Election((BROKER,), (BROKER,), P.ONLINE, (BROKER, (BROKER,)), PreferredElection(),
                 (BROKER, 1, (BROKER,)), (BROKER,), P.ONLINE),
        id="testOnlinePartitionToOnlineTransition",
    ),
    pytest.param(
        Election((BROKER, OTHER), (BROKER, OTHER), P.ONLINE, (BROKER, (BROKER, OTHER)),
                 ControlledShutdownElection(), (OTHER, 1, (OTHER,)), (BROKER, OTHER), P.ONLINE,
                 shutting_down=(BROKER,)),
        id="testOnlinePartitionToOnlineTransitionForControlledShutdown",
    ),
    pytest.param(
        Election((BROKER,), (BROKER,), P.OFFLINE, (NO_LEADER, (BROKER,)), OfflineElection(),
                 (BROKER, 1, (BROKER,)), (BROKER,), P.ONLINE),
        id="testOfflinePartitionToOnlinePartitionTransition",
    ),
    pytest.param(
        Election((BROKER,), (OTHER, BROKER), P.OFFLINE, (OTHER, (OTHER,)),
                 OfflineElection(allow_unclean=True), (BROKER, 1, (BROKER,)), (BROKER,), P.ONLINE),
        id="testOfflinePartitionToUncleanOnlinePartitionTransition",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", ELECTIONS)
def test_election(case: Election) -> None:
    """The state znode written under this controller's epoch, the LeaderAndIsr each broker
    gets (with `is_new` only for a new partition) and the state reached."""
    rig = make_parity_rig()
    rig.live(*case.live)
    for broker_id in case.shutting_down:
        rig.ctx.mark_shutting_down(broker_id)
    rig.ctx.add_topic(TP.topic, {0: ReplicaAssignment(case.replicas)})
    rig.ctx.set_partition_state(TP, case.start)
    if case.znode is not None:
        leader, isr = case.znode
        if case.start is P.NEW:  # a znode the context does not know yet
            stored = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, isr, 0), CONTROLLER_EPOCH)
            rig.zk.put_state(TP, stored)
        else:
            rig.lead(TP, leader, isr)
    before = rig.zk.state(TP)
    rig.psm.handle_state_changes([TP], P.ONLINE, case.strategy)
    assert rig.ctx.partition_state(TP) is case.end
    after = rig.zk.state(TP)
    if case.written is None:
        assert after == before
    else:
        assert after is not None
        lai = after.leader_and_isr
        assert (lai.leader, lai.leader_epoch, lai.isr) == case.written
        assert after.controller_epoch == CONTROLLER_EPOCH
        assert rig.ctx.leadership(TP) == after
    sent = rig.leader_and_isr_sent()
    assert sorted(sent) == sorted(case.recipients)
    for states in sent.values():
        assert after is not None
        lai = after.leader_and_isr
        assert [(s.leader, s.leader_epoch, s.isr, s.zk_version) for s in states] == [
            (lai.leader, lai.leader_epoch, lai.isr, lai.zk_version)
        ]
        assert [s.is_new for s in states] == [case.start is P.NEW]
        assert [s.replicas for s in states] == [case.replicas]


@pytest.mark.parametrize(
    "start",
    [
        pytest.param(
            P.OFFLINE, id="testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup"
        )
    ],
)
def test_offline_to_online_error_code_from_state_lookup(start: PartitionState) -> None:
    """Kafka's testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup: the
    state znode is gone (NONODE); the partition stays Offline and nothing is sent. The
    first round here decides from the context and the conditional write finds no znode,
    which fails the partition in the same way."""
    rig = make_parity_rig()
    rig.live(BROKER)
    rig.ctx.add_topic(TP.topic, {0: ReplicaAssignment((BROKER,))})
    rig.ctx.set_partition_state(TP, start)
    rig.lead(TP, NO_LEADER, (BROKER,))
    rig.zk.delete_state(TP)
    results = rig.psm.handle_state_changes([TP], P.ONLINE, OfflineElection())
    assert rig.ctx.partition_state(TP) is start
    assert results[TP] == "state znode is missing"
    assert rig.send.sent == []


class _UnreachableZk:
    """A `PartitionZk` whose every read and write fails as a lost connection does."""

    def get_partition_states(
        self, partitions: Iterable[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        raise ConnectionLoss()

    def create_partition_states(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        raise ConnectionLoss()

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        raise ConnectionLoss()


@pytest.mark.parametrize(
    ("start", "leadership"),
    [
        pytest.param(
            P.NEW,
            False,
            id="testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates",
        ),
        pytest.param(
            P.OFFLINE,
            True,
            id="testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup",
        ),
    ],
)
def test_zookeeper_client_exception(start: PartitionState, leadership: bool) -> None:
    """ZooKeeper fails during the election: as in Kafka, the call does not fail; the
    partition keeps its state, its failure is reported with the error, and the batch is
    still sent (empty here: the one partition failed)."""
    rig = make_parity_rig()
    rig.live(BROKER)
    rig.ctx.add_topic(TP.topic, {0: ReplicaAssignment((BROKER,))})
    rig.ctx.set_partition_state(TP, start)
    if leadership:
        rig.ctx.set_leadership(
            TP,
            LeaderIsrAndControllerEpoch(LeaderAndIsr(NO_LEADER, 0, (BROKER,), 0), CONTROLLER_EPOCH),
        )
    psm = PartitionStateMachine(rig.ctx, _UnreachableZk(), rig.batch, rig.events)
    results = psm.handle_state_changes([TP], P.ONLINE, OfflineElection())
    assert results == {TP: "ConnectionLoss"}
    assert rig.ctx.partition_state(TP) is start
    [failed] = rig.events.of_kind(EventKind.LEADER_ELECTION_FAILED)
    assert failed["reason"] == "ConnectionLoss"
    assert rig.send.sent == []


# --- OfflinePartitionsCount ----------------------------------------------------------------------

FOUR = [TopicPartition("test", p) for p in range(4)]


@pytest.mark.parametrize(
    "partitions", [pytest.param(FOUR, id="testUpdatingOfflinePartitionsCount")]
)
def test_updating_offline_partitions_count(partitions: list[TopicPartition]) -> None:
    """Kafka's testUpdatingOfflinePartitionsCount: New -> Offline counts four offline
    partitions; electing their leaders brings the count back to zero."""
    rig = make_parity_rig()
    rig.live(BROKER)
    rig.ctx.add_topic("test", {p.partition: ReplicaAssignment((BROKER,)) for p in partitions})
    for tp in partitions:
        rig.zk.put_state(
            tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER, 0, (BROKER,), 0), CONTROLLER_EPOCH)
        )
    rig.psm.handle_state_changes(partitions, P.NEW)
    rig.psm.handle_state_changes(partitions, P.OFFLINE)
    assert rig.ctx.offline_partition_count() == 4
    rig.psm.handle_state_changes(partitions, P.ONLINE, OfflineElection())
    assert rig.ctx.offline_partition_count() == 0
    assert all(rig.ctx.partition_state(tp) is P.ONLINE for tp in partitions)


@pytest.mark.parametrize(
    "partitions", [pytest.param(FOUR, id="testNoOfflinePartitionsChangeForTopicsBeingDeleted")]
)
def test_no_offline_partitions_change_for_topics_being_deleted(
    partitions: list[TopicPartition],
) -> None:
    """Kafka's testNoOfflinePartitionsChangeForTopicsBeingDeleted: partitions of a topic
    whose deletion has started are not counted offline."""
    rig = make_parity_rig()
    rig.ctx.add_topic("test", {p.partition: ReplicaAssignment((BROKER,)) for p in partitions})
    rig.ctx.queue_topic_deletion(["test"])
    rig.ctx.begin_topic_deletion(["test"])
    rig.psm.handle_state_changes(partitions, P.NEW)
    rig.psm.handle_state_changes(partitions, P.OFFLINE)
    assert all(rig.ctx.partition_state(tp) is P.OFFLINE for tp in partitions)
    assert rig.ctx.offline_partition_count() == 0


@pytest.mark.parametrize(
    "partitions", [pytest.param(FOUR, id="testUpdatingOfflinePartitionsCountDuringTopicDeletion")]
)
def test_updating_offline_partitions_count_during_topic_deletion(
    partitions: list[TopicPartition],
) -> None:
    """Kafka's testUpdatingOfflinePartitionsCountDuringTopicDeletion: four offline
    partitions whose replicas are offline stop counting once their topic is queued for
    deletion, because the deletion starts at once."""
    rig = make_parity_rig()
    rig.ctx.add_topic("test", {p.partition: ReplicaAssignment((BROKER,)) for p in partitions})
    rig.deletion_zk.topics.add("test")
    rig.psm.handle_state_changes(partitions, P.NEW)
    rig.psm.handle_state_changes(partitions, P.OFFLINE)
    for tp in partitions:
        rig.ctx.set_replica_state(PartitionReplica(tp, BROKER), ReplicaState.OFFLINE)
    assert rig.ctx.offline_partition_count() == 4
    rig.deletion.on_deletion_requests(["test"])
    assert rig.ctx.offline_partition_count() == 0
