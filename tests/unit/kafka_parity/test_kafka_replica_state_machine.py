"""Every case of Kafka 2.8's `ReplicaStateMachineTest` as data: each case id is the Kafka
test method it mirrors. Kafka drives `ZkReplicaStateMachine` against mocks of
`KafkaZkClient` and the request batch; here `ReplicaStateMachine` runs against
`FakePartitionZk` and a real `RequestBatch` whose sends are recorded, so each case checks
the state reached, what was written to ZooKeeper and what each broker was sent.

The numbers are Kafka's: broker 5 (and 6), controller epoch 50, replica 5 of t-0. The
brokers of the partition are live in every case that sends something, so that what the
batch queued is what the brokers receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest
from parity_rig import BROKER, CONTROLLER_EPOCH, OTHER, TP, ParityRig, make_parity_rig

from controller.context import PartitionReplica
from controller.states import ReplicaState
from domain import NO_LEADER
from eventlog import EventKind
from zkdata.model import ReplicaAssignment

R = ReplicaState
REPLICA = PartitionReplica(TP, BROKER)


def _rig(replicas: tuple[int, ...] = (BROKER,), live: tuple[int, ...] = (BROKER,)) -> ParityRig:
    rig = make_parity_rig()
    rig.live(*live)
    rig.ctx.add_topic(TP.topic, {0: ReplicaAssignment(replicas)})
    return rig


# --- startup -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("live", "replica", "state"),
    [
        pytest.param((BROKER,), BROKER, R.ONLINE, id="testStartupOnlinePartition"),
        pytest.param((), BROKER, R.OFFLINE, id="testStartupOfflinePartition"),
        pytest.param((BROKER,), 100, R.OFFLINE, id="testStartupWithReplicaWithoutLeader"),
    ],
)
def test_startup(live: tuple[int, ...], replica: int, state: ReplicaState) -> None:
    """Startup puts a replica on a live broker Online and any other Offline."""
    rig = _rig(replicas=(replica,), live=live)
    rig.rsm.startup()
    assert rig.ctx.replica_state(PartitionReplica(TP, replica)) is state


# --- invalid transitions: nothing changes, nothing is written or sent ------------------------

_INVALID = [
    (R.NON_EXISTENT, R.ONLINE, "Nonexistent", "Online"),
    (R.NON_EXISTENT, R.OFFLINE, "Nonexistent", "Offline"),
    (R.NON_EXISTENT, R.DELETION_STARTED, "Nonexistent", "ReplicaDeletionStarted"),
    (R.NON_EXISTENT, R.DELETION_INELIGIBLE, "Nonexistent", "ReplicaDeletionIneligible"),
    (R.NON_EXISTENT, R.DELETION_SUCCESSFUL, "Nonexistent", "ReplicaDeletionSuccessful"),
    (R.NEW, R.NON_EXISTENT, "New", "Nonexistent"),
    (R.NEW, R.DELETION_STARTED, "New", "ReplicaDeletionStarted"),
    (R.NEW, R.DELETION_INELIGIBLE, "New", "ReplicaDeletionIneligible"),
    (R.NEW, R.DELETION_SUCCESSFUL, "New", "ReplicaDeletionSuccessful"),
    (R.ONLINE, R.NON_EXISTENT, "Online", "Nonexistent"),
    (R.ONLINE, R.NEW, "Online", "New"),
    (R.ONLINE, R.DELETION_STARTED, "Online", "ReplicaDeletionStarted"),
    (R.ONLINE, R.DELETION_INELIGIBLE, "Online", "ReplicaDeletionIneligible"),
    (R.ONLINE, R.DELETION_SUCCESSFUL, "Online", "ReplicaDeletionSuccessful"),
    (R.OFFLINE, R.NON_EXISTENT, "Offline", "Nonexistent"),
    (R.OFFLINE, R.NEW, "Offline", "New"),
    (R.OFFLINE, R.DELETION_SUCCESSFUL, "Offline", "ReplicaDeletionSuccessful"),
    (R.DELETION_STARTED, R.NON_EXISTENT, "ReplicaDeletionStarted", "Nonexistent"),
    (R.DELETION_STARTED, R.NEW, "ReplicaDeletionStarted", "New"),
    (R.DELETION_STARTED, R.ONLINE, "ReplicaDeletionStarted", "Online"),
    (R.DELETION_STARTED, R.OFFLINE, "ReplicaDeletionStarted", "Offline"),
    (R.DELETION_SUCCESSFUL, R.NEW, "ReplicaDeletionSuccessful", "New"),
    (R.DELETION_SUCCESSFUL, R.ONLINE, "ReplicaDeletionSuccessful", "Online"),
    (R.DELETION_SUCCESSFUL, R.OFFLINE, "ReplicaDeletionSuccessful", "Offline"),
    (
        R.DELETION_SUCCESSFUL,
        R.DELETION_STARTED,
        "ReplicaDeletionSuccessful",
        "ReplicaDeletionStarted",
    ),
    (
        R.DELETION_SUCCESSFUL,
        R.DELETION_INELIGIBLE,
        "ReplicaDeletionSuccessful",
        "ReplicaDeletionIneligible",
    ),
    (R.DELETION_INELIGIBLE, R.NON_EXISTENT, "ReplicaDeletionIneligible", "Nonexistent"),
    (R.DELETION_INELIGIBLE, R.NEW, "ReplicaDeletionIneligible", "New"),
    (
        R.DELETION_INELIGIBLE,
        R.DELETION_STARTED,
        "ReplicaDeletionIneligible",
        "ReplicaDeletionStarted",
    ),
    (
        R.DELETION_INELIGIBLE,
        R.DELETION_SUCCESSFUL,
        "ReplicaDeletionIneligible",
        "ReplicaDeletionSuccessful",
    ),
]


def _invalid_id(start: str, target: str) -> str:
    """Kafka's method name for an invalid transition, e.g.
    testInvalidNewReplicaToNonexistentReplicaTransition."""
    suffix = "" if start.startswith("ReplicaDeletion") else "Replica"
    to = "" if target.startswith("ReplicaDeletion") else "Replica"
    return f"testInvalid{start}{suffix}To{target}{to}Transition"


@pytest.mark.parametrize(
    ("start", "target"),
    [pytest.param(f, t, id=_invalid_id(fn, tn)) for f, t, fn, tn in _INVALID],
)
def test_invalid_transition(start: ReplicaState, target: ReplicaState) -> None:
    """The replica keeps its state; the refusal is reported; nothing is written or sent."""
    rig = _rig()
    rig.lead(TP, BROKER, (BROKER,))
    rig.ctx.set_replica_state(REPLICA, start)
    rig.rsm.handle_state_changes([REPLICA], target)
    assert rig.ctx.replica_state(REPLICA) is start
    assert len(rig.events.of_kind(EventKind.INVALID_STATE_TRANSITION)) == 1
    assert rig.zk.methods() == []
    assert rig.send.sent == []


# --- valid transitions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "target"),
    [
        pytest.param(R.NON_EXISTENT, R.NEW, id="testNonexistentReplicaToNewReplicaTransition"),
        pytest.param(R.NEW, R.ONLINE, id="testNewReplicaToOnlineReplicaTransition"),
        pytest.param(
            R.OFFLINE,
            R.DELETION_INELIGIBLE,
            id="testOfflineReplicaToReplicaDeletionIneligibleTransition",
        ),
        pytest.param(
            R.DELETION_STARTED,
            R.DELETION_INELIGIBLE,
            id="testReplicaDeletionStartedToReplicaDeletionIneligibleTransition",
        ),
        pytest.param(
            R.DELETION_STARTED,
            R.DELETION_SUCCESSFUL,
            id="testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition",
        ),
    ],
)
def test_transition_without_requests(start: ReplicaState, target: ReplicaState) -> None:
    """The state changes; a partition without leadership gives nothing to send, and none of
    these transitions writes to ZooKeeper."""
    rig = _rig()
    rig.ctx.set_replica_state(REPLICA, start)
    rig.rsm.handle_state_changes([REPLICA], target)
    assert rig.ctx.replica_state(REPLICA) is target
    assert rig.zk.methods() == []
    assert rig.send.sent == []


@dataclass(frozen=True)
class Requests:
    """One transition that writes or sends: the partition's replicas and live brokers, its
    leadership before (leader, ISR at leader epoch 0, zkVersion 0; None: unknown), then
    what must be written (leader, leader epoch, ISR, zkVersion; None: nothing), what each
    broker gets (LeaderAndIsr states as the same 4-tuples, StopReplica delete flags, the
    UpdateMetadata recipients) and the assignment afterwards."""

    start: ReplicaState
    target: ReplicaState
    replicas: tuple[int, ...]
    leadership: tuple[int, tuple[int, ...]] | None
    written: tuple[int, int, tuple[int, ...], int] | None
    leader_and_isr: Mapping[int, tuple[int, int, tuple[int, ...], int]]
    stop_replica: Mapping[int, bool]
    update_metadata: tuple[int, ...]
    assignment_after: tuple[int, ...]


_ONE = (BROKER,)
_TWO = (BROKER, OTHER)
_LED = (BROKER, _ONE)
_SAME = {BROKER: (BROKER, 0, _ONE, 0)}

REQUESTS = [
    pytest.param(
        Requests(R.NEW, R.OFFLINE, _ONE, None, None, {}, {BROKER: False}, _ONE, _ONE),
        id="testNewReplicaToOfflineReplicaTransition",
    ),
    pytest.param(
        Requests(R.ONLINE, R.ONLINE, _ONE, _LED, None, _SAME, {}, _ONE, _ONE),
        id="testOnlineReplicaToOnlineReplicaTransition",
    ),
    pytest.param(
        Requests(R.ONLINE, R.OFFLINE, _TWO, (BROKER, _TWO), (NO_LEADER, 1, (OTHER,), 1),
                 {OTHER: (NO_LEADER, 1, (OTHER,), 1)}, {BROKER: False}, _TWO, _TWO),
        id="testOnlineReplicaToOfflineReplicaTransition",
    ),
    pytest.param(
        Requests(R.OFFLINE, R.ONLINE, _ONE, _LED, None, _SAME, {}, _ONE, _ONE),
        id="testOfflineReplicaToOnlineReplicaTransition",
    ),
    pytest.param(
        Requests(R.OFFLINE, R.DELETION_STARTED, _ONE, None, None, {}, {BROKER: True}, (), _ONE),
        id="testOfflineReplicaToReplicaDeletionStartedTransition",
    ),
    pytest.param(
        Requests(R.DELETION_SUCCESSFUL, R.NON_EXISTENT, _ONE, None, None, {}, {}, (), ()),
        id="testReplicaDeletionSuccessfulToNonexistentReplicaTransition",
    ),
    pytest.param(
        Requests(R.DELETION_INELIGIBLE, R.ONLINE, _ONE, _LED, None, _SAME, {}, _ONE, _ONE),
        id="testReplicaDeletionIneligibleToOnlineReplicaTransition",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", REQUESTS)
def test_transition_with_requests(case: Requests) -> None:
    """The state reached, the state znode written under this controller's epoch (an ISR
    shrink writes from the context's current state without reading the znode first, where
    Kafka reads it: docs/kafka-differences.md, and leaves the context holding what it
    wrote), and what each broker of the partition receives. Every broker of the partition
    is live."""
    rig = _rig(replicas=case.replicas, live=case.replicas)
    if case.leadership is not None:
        rig.lead(TP, *case.leadership)
    rig.ctx.set_replica_state(REPLICA, case.start)
    rig.rsm.handle_state_changes([REPLICA], case.target)
    assert rig.ctx.replica_state(REPLICA) is case.target
    after = rig.zk.state(TP)
    if case.written is None:
        assert "update_leader_and_isr" not in rig.zk.methods()
    else:
        assert rig.zk.methods() == ["update_leader_and_isr"]
        assert after is not None
        lai = after.leader_and_isr
        assert (lai.leader, lai.leader_epoch, lai.isr, lai.zk_version) == case.written
        assert after.controller_epoch == CONTROLLER_EPOCH
        assert rig.ctx.leadership(TP) == after
    sent = {
        broker: [(s.leader, s.leader_epoch, s.isr, s.zk_version, s.is_new) for s in states]
        for broker, states in rig.leader_and_isr_sent().items()
    }
    assert sent == {b: [(*lai4, False)] for b, lai4 in case.leader_and_isr.items()}
    stops = {
        broker: [(s.topic_partition, s.delete_partition) for s in states]
        for broker, states in rig.stop_replica_sent().items()
    }
    assert stops == {b: [(TP, delete)] for b, delete in case.stop_replica.items()}
    assert sorted(rig.update_metadata_sent()) == sorted(case.update_metadata)
    assert rig.ctx.replicas(TP) == case.assignment_after
