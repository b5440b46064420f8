"""`ReplicaStateMachine` against `FakePartitionZk`: OfflineReplica's StopReplica and ISR
shrink, NewReplica, OnlineReplica, deletion states, invalid transitions and startup.

Setup (unless a test says otherwise): controller epoch 4 at `/controller_epoch` zkVersion
12, brokers 1, 2, 3 live, topic "orders" with partition 0 (replicas 1, 2, 3; leader 1,
ISR 1, 2, 3) and partition 1 (replicas 2, 3, 1; leader 2, ISR 2, 3, 1), both at leader
epoch 4 and zkVersion 7, every replica Online.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pytest

from controller.context import ControllerContext, PartitionReplica
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import ReplicaState
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import NO_LEADER, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from zkdata.errors import ControllerMovedError
from zkdata.model import ReplicaAssignment

CONTROLLER_ID = 9
EPOCH = 4
EPOCH_ZK_VERSION = 12
TOPIC = "orders"
TP0 = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)


@dataclass
class Rig:
    """A replica state machine over a hand-filled context and a fake ZooKeeper."""

    ctx: ControllerContext
    zk: FakePartitionZk
    send: RecordingSend
    events: RecordingEventLog
    batch: RequestBatch
    rsm: ReplicaStateMachine

    def lead(
        self, tp: TopicPartition, leader: int, isr: tuple[int, ...], leader_epoch: int = 4
    ) -> LeaderIsrAndControllerEpoch:
        """Give `tp` a leadership in ZooKeeper (zkVersion 7) and in the context."""
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, leader_epoch, isr, 7), EPOCH - 1)
        self.zk.put_state(tp, state, 7)
        self.ctx.set_leadership(tp, state)
        return state

    def set_states(self, replicas: Iterable[PartitionReplica], state: ReplicaState) -> None:
        for replica in replicas:
            self.ctx.set_replica_state(replica, state)

    def lai_sent(self) -> dict[int, list[m.LeaderAndIsrPartitionState]]:
        return {b: list(r.partition_states) for b, r in self.send.of_type(m.LeaderAndIsrRequest)}

    def stop_sent(self) -> dict[int, list[m.StopReplicaPartitionState]]:
        return {b: list(r.partition_states) for b, r in self.send.of_type(m.StopReplicaRequest)}

    def invalid(self) -> list[tuple[int, str, str]]:
        return [
            (e["replica"], e["current"], e["target"])
            for e in self.events.of_kind(EventKind.INVALID_STATE_TRANSITION)
        ]


@pytest.fixture
def rig() -> Rig:
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.epoch_zk_version = EPOCH_ZK_VERSION
    ctx.set_live_brokers(make_broker(b) for b in (1, 2, 3))
    ctx.add_topic(TOPIC, {0: ReplicaAssignment((1, 2, 3)), 1: ReplicaAssignment((2, 3, 1))})
    zk = FakePartitionZk(EPOCH_ZK_VERSION)
    send = RecordingSend()
    events = RecordingEventLog()
    batch = RequestBatch(CONTROLLER_ID, ctx, send)
    r = Rig(ctx, zk, send, events, batch, ReplicaStateMachine(ctx, zk, batch, events))
    r.lead(TP0, 1, (1, 2, 3))
    r.lead(TP1, 2, (2, 3, 1))
    r.set_states(ctx.replicas_for_partitions([TP0, TP1]), ReplicaState.ONLINE)
    return r


def on(broker_id: int, *tps: TopicPartition) -> list[PartitionReplica]:
    return [PartitionReplica(tp, broker_id) for tp in tps]


# --- OfflineReplica ---------------------------------------------------------------------------


def test_offline_replica_gets_stop_replica_without_delete(rig: Rig) -> None:
    rig.ctx.mark_shutting_down(1)  # still registered, so it can be told
    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)
    stop = rig.stop_sent()
    assert sorted(stop) == [1]
    assert [(s.topic_partition, s.delete_partition) for s in stop[1]] == [
        (TP0, False),
        (TP1, False),
    ]


def test_offline_replica_is_removed_from_the_isr_and_from_leadership(rig: Rig) -> None:
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)

    led = LeaderIsrAndControllerEpoch(LeaderAndIsr(NO_LEADER, 5, (2, 3), 8), EPOCH)
    followed = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2, 3), 8), EPOCH)
    assert rig.zk.state(TP0) == led
    assert rig.zk.state(TP1) == followed
    assert rig.ctx.leadership(TP0) == led
    assert rig.ctx.leadership(TP1) == followed
    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.OFFLINE
    assert rig.ctx.replica_state(PartitionReplica(TP1, 1)) is ReplicaState.OFFLINE
    (update,) = rig.zk.calls_to("update_leader_and_isr")
    assert update.epoch_zk_version == EPOCH_ZK_VERSION
    assert {tp: s.leader_and_isr.zk_version for tp, s in update.states.items()} == {
        TP0: 7,
        TP1: 7,
    }


def test_isr_changed_by_the_controller_carries_the_zxid_its_write_committed_at(
    rig: Rig,
) -> None:
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)

    changed = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert sorted((e["partition"], e["zxid"]) for e in changed) == [(0, 0x100), (1, 0x101)]


def test_offline_replica_sends_the_shrunk_isr_to_the_remaining_live_replicas(rig: Rig) -> None:
    rig.ctx.remove_live_brokers([3])
    rig.ctx.mark_shutting_down(1)
    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)

    sent = rig.lai_sent()
    assert sorted(sent) == [2]  # not 1 (going offline), not 3 (dead)
    assert [(s.topic_partition, s.leader, s.isr, s.leader_epoch) for s in sent[2]] == [
        (TP0, NO_LEADER, (2, 3), 5),
        (TP1, 2, (2, 3), 5),
    ]
    assert all(not s.is_new for s in sent[2])


def test_offline_replica_never_empties_the_isr(rig: Rig) -> None:
    rig.lead(TP0, 1, (1,))
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(on(1, TP0), ReplicaState.OFFLINE)
    assert rig.zk.state(TP0) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(NO_LEADER, 5, (1,), 8), EPOCH
    )


def test_offline_replica_outside_the_isr_writes_nothing(rig: Rig) -> None:
    rig.lead(TP0, 2, (2, 3))
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(on(1, TP0), ReplicaState.OFFLINE)
    assert rig.zk.methods() == ["get_partition_states"]  # read, nothing to shrink
    assert rig.zk.zk_version(TP0) == 7
    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.OFFLINE
    assert sorted(rig.lai_sent()) == [2, 3]  # the others still hear the current state


def test_offline_replica_left_out_by_a_state_written_in_the_same_change_reads_nothing(
    rig: Rig,
) -> None:
    """The offline election just wrote TP0's state without broker 1 (the context holds
    that very state): nothing is read back, nothing written, and the others still hear
    the state."""
    state = rig.lead(TP0, 2, (2, 3))
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(
        on(1, TP0), ReplicaState.OFFLINE, just_written={TP0: state.leader_and_isr}
    )
    assert rig.zk.calls == []
    assert rig.ctx.leadership(TP0) == state
    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.OFFLINE
    assert sorted(rig.lai_sent()) == [2, 3]


def test_offline_replica_reads_a_written_state_the_context_no_longer_holds(rig: Rig) -> None:
    """The context learnt a newer state of TP0 after the controller's own write: that one
    is not trusted for leaving the partition alone, so it is read from ZooKeeper."""
    state = rig.lead(TP0, 2, (2, 3))
    rig.ctx.remove_live_brokers([1])
    older = LeaderAndIsr(2, 4, (2, 3), 6)
    rig.rsm.handle_state_changes(on(1, TP0), ReplicaState.OFFLINE, just_written={TP0: older})
    assert rig.zk.methods() == ["get_partition_states"]
    assert rig.ctx.leadership(TP0) == state


def test_offline_replica_without_leadership_only_changes_state(rig: Rig) -> None:
    rig.ctx.add_topic("fresh", {0: ReplicaAssignment((1, 2))})
    fresh = TopicPartition("fresh", 0)
    rig.set_states(on(1, fresh), ReplicaState.NEW)
    rig.rsm.handle_state_changes(on(1, fresh), ReplicaState.OFFLINE)
    assert rig.ctx.replica_state(PartitionReplica(fresh, 1)) is ReplicaState.OFFLINE
    assert rig.zk.calls == []
    assert [s.leader_epoch for s in rig.stop_sent()[1]] == [-1]


def test_new_replica_without_leadership_going_offline_updates_every_live_broker(
    rig: Rig,
) -> None:
    """Kafka's NewReplica -> OfflineReplica without a leader: an UpdateMetadata for the
    partition goes to every live (or shutting-down) broker."""
    rig.ctx.add_topic("fresh", {0: ReplicaAssignment((1, 2))})
    fresh = TopicPartition("fresh", 0)
    rig.set_states(on(1, fresh), ReplicaState.NEW)
    rig.ctx.mark_shutting_down(3)

    rig.rsm.handle_state_changes(on(1, fresh), ReplicaState.OFFLINE)

    assert sorted(b for b, _ in rig.send.of_type(m.UpdateMetadataRequest)) == [1, 2, 3]


def test_offline_replica_of_a_topic_being_deleted_sends_no_leader_and_isr(rig: Rig) -> None:
    rig.ctx.queue_topic_deletion([TOPIC])
    rig.rsm.handle_state_changes(on(1, TP0), ReplicaState.OFFLINE)
    assert rig.lai_sent() == {}
    assert [s.leader_epoch for s in rig.stop_sent()[1]] == [-2]
    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.OFFLINE


def test_offline_replica_re_reads_after_a_concurrent_isr_change(rig: Rig) -> None:
    rig.ctx.remove_live_brokers([3])
    rig.zk.bump_version_once(TP0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 3)), EPOCH))

    rig.rsm.handle_state_changes(on(3, TP0), ReplicaState.OFFLINE)

    # the first attempt starts from the context; the lost race reads ZooKeeper, once
    assert rig.zk.methods() == [
        "update_leader_and_isr",
        "get_partition_states",
        "update_leader_and_isr",
    ]
    expected = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 5, (1,), 9), EPOCH)
    assert rig.zk.state(TP0) == expected
    assert rig.ctx.leadership(TP0) == expected
    assert rig.ctx.replica_state(PartitionReplica(TP0, 3)) is ReplicaState.OFFLINE


def test_offline_replica_with_a_stale_context_writes_zookeepers_isr_minus_it(rig: Rig) -> None:
    """The leader of TP0 grew nothing and shrank 3 out since the context learnt the state:
    ZooKeeper holds ISR (1, 2) at zkVersion 8 while the cache still says (1, 2, 3) at 7.
    The write from the cache loses on its zkVersion; then removing 2 writes ZooKeeper's
    ISR minus 2, conditional on the version read."""
    in_zk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2)), EPOCH - 1)
    rig.zk.put_state(TP0, in_zk, 8)
    rig.ctx.remove_live_brokers([2])

    rig.rsm.handle_state_changes(on(2, TP0), ReplicaState.OFFLINE)

    assert rig.zk.methods() == [
        "update_leader_and_isr",
        "get_partition_states",
        "update_leader_and_isr",
    ]
    update = rig.zk.calls_to("update_leader_and_isr")[-1]
    assert update.states[TP0].leader_and_isr == LeaderAndIsr(1, 5, (1,), 8)
    expected = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 5, (1,), 9), EPOCH)
    assert rig.zk.state(TP0) == expected
    assert rig.ctx.leadership(TP0) == expected
    assert [(s.isr, s.leader_epoch) for s in rig.lai_sent()[1]] == [((1,), 5)]


def test_offline_replica_already_out_of_the_isr_in_zookeeper_writes_nothing(rig: Rig) -> None:
    """The cache still has 3 in TP0's ISR, ZooKeeper no longer does: the write from the
    cache loses on its zkVersion, the read shows nothing to write, and the context takes
    what ZooKeeper holds."""
    in_zk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2)), EPOCH - 1)
    rig.zk.put_state(TP0, in_zk, 8)
    rig.ctx.remove_live_brokers([3])

    rig.rsm.handle_state_changes(on(3, TP0), ReplicaState.OFFLINE)

    assert rig.zk.methods() == ["update_leader_and_isr", "get_partition_states"]
    assert rig.ctx.leadership(TP0) == rig.zk.state(TP0)
    assert rig.ctx.replica_state(PartitionReplica(TP0, 3)) is ReplicaState.OFFLINE


def test_offline_replica_shrinks_many_partitions_in_one_write_without_reading(
    rig: Rig,
) -> None:
    """The context is current: no state znode is read, and one write shrinks them all."""
    rig.ctx.remove_live_brokers([1])
    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)
    assert rig.zk.methods() == ["update_leader_and_isr"]
    (update,) = rig.zk.calls_to("update_leader_and_isr")
    assert sorted(update.states) == [TP0, TP1]


def test_a_state_from_a_newer_controller_fails_only_its_partition(rig: Rig) -> None:
    """TP0's state znode carries epoch + 1: its replica stays Online with an event naming
    the partition and why; TP1's replica goes offline; nothing raises."""
    newer = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 9, (1, 2, 3)), EPOCH + 1)
    rig.zk.put_state(TP0, newer, 8)
    rig.ctx.remove_live_brokers([1])

    rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)

    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.ONLINE
    assert rig.ctx.replica_state(PartitionReplica(TP1, 1)) is ReplicaState.OFFLINE
    assert rig.zk.state(TP0) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(1, 9, (1, 2, 3), 8), EPOCH + 1
    )
    assert rig.zk.state(TP1) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2, 3), 8), EPOCH)
    (failed,) = rig.events.of_kind(EventKind.ISR_SHRINK_FAILED)
    assert (failed["topic"], failed["partition"], failed["replica"]) == (TOPIC, 0, 1)
    assert "another controller" in failed["reason"]
    assert f"epoch {EPOCH + 1}" in failed["reason"]
    (change,) = rig.events.of_kind(EventKind.REPLICA_STATE_CHANGE)
    assert (change["replicas"], change["failed"]) == (1, 1)


def test_offline_replica_when_the_controller_moved_raises_and_sends_nothing(rig: Rig) -> None:
    rig.zk.epoch_zk_version = EPOCH_ZK_VERSION + 1
    with pytest.raises(ControllerMovedError):
        rig.rsm.handle_state_changes(on(1, TP0, TP1), ReplicaState.OFFLINE)
    assert rig.send.sent == []
    assert rig.zk.zk_version(TP0) == 7
    assert rig.ctx.replica_state(PartitionReplica(TP0, 1)) is ReplicaState.ONLINE
    rig.batch.new_batch()


# --- NewReplica -------------------------------------------------------------------------------


def test_new_replica_that_is_the_leader_is_reported_invalid(rig: Rig) -> None:
    replica = PartitionReplica(TP0, 1)
    rig.ctx.set_replica_state(replica, ReplicaState.NON_EXISTENT)

    rig.rsm.handle_state_changes([replica], ReplicaState.NEW)

    assert rig.ctx.replica_state(replica) is ReplicaState.NON_EXISTENT
    assert rig.invalid() == [(1, "NonExistentReplica", "NewReplica")]
    assert rig.send.sent == []


def test_new_replica_of_a_led_partition_gets_leader_and_isr_marked_new(rig: Rig) -> None:
    replica = PartitionReplica(TP0, 2)
    rig.ctx.set_replica_state(replica, ReplicaState.NON_EXISTENT)

    rig.rsm.handle_state_changes([replica], ReplicaState.NEW)

    assert rig.ctx.replica_state(replica) is ReplicaState.NEW
    sent = rig.lai_sent()
    assert sorted(sent) == [2]
    assert [(s.topic_partition, s.leader, s.is_new) for s in sent[2]] == [(TP0, 1, True)]


def test_new_replica_without_leadership_just_becomes_new(rig: Rig) -> None:
    rig.ctx.add_topic("fresh", {0: ReplicaAssignment((1, 2))})
    replicas = rig.ctx.replicas_for_partitions([TopicPartition("fresh", 0)])
    rig.rsm.handle_state_changes(replicas, ReplicaState.NEW)
    assert [rig.ctx.replica_state(r) for r in replicas] == [ReplicaState.NEW] * 2
    assert rig.send.sent == []


# --- OnlineReplica ----------------------------------------------------------------------------


def test_online_from_new_adds_the_replica_to_the_assignment_if_missing(rig: Rig) -> None:
    rig.ctx.add_live_brokers([make_broker(4)])
    replica = PartitionReplica(TP0, 4)
    rig.ctx.set_replica_state(replica, ReplicaState.NEW)

    rig.rsm.handle_state_changes([replica], ReplicaState.ONLINE)

    assert rig.ctx.replicas(TP0) == (1, 2, 3, 4)
    assert rig.ctx.replica_state(replica) is ReplicaState.ONLINE
    assert rig.lai_sent() == {}


def test_online_from_new_keeps_an_assignment_that_has_the_replica(rig: Rig) -> None:
    replica = PartitionReplica(TP0, 2)
    rig.ctx.set_replica_state(replica, ReplicaState.NEW)
    rig.rsm.handle_state_changes([replica], ReplicaState.ONLINE)
    assert rig.ctx.replicas(TP0) == (1, 2, 3)


def test_online_from_offline_sends_the_current_leadership(rig: Rig) -> None:
    replica = PartitionReplica(TP1, 3)
    rig.ctx.set_replica_state(replica, ReplicaState.OFFLINE)

    rig.rsm.handle_state_changes([replica], ReplicaState.ONLINE)

    assert rig.ctx.replica_state(replica) is ReplicaState.ONLINE
    sent = rig.lai_sent()
    assert sorted(sent) == [3]
    assert [(s.topic_partition, s.leader, s.is_new) for s in sent[3]] == [(TP1, 2, False)]


# --- deletion and NonExistentReplica ---------------------------------------------------------


def test_deletion_started_sends_stop_replica_with_delete(rig: Rig) -> None:
    rig.set_states(on(3, TP0, TP1), ReplicaState.OFFLINE)
    rig.rsm.handle_state_changes(on(3, TP0, TP1), ReplicaState.DELETION_STARTED)
    assert [(s.topic_partition, s.delete_partition) for s in rig.stop_sent()[3]] == [
        (TP0, True),
        (TP1, True),
    ]
    assert rig.ctx.replica_state(PartitionReplica(TP0, 3)) is ReplicaState.DELETION_STARTED


def test_non_existent_removes_the_replica_from_the_assignment(rig: Rig) -> None:
    replica = PartitionReplica(TP0, 3)
    rig.ctx.set_replica_state(replica, ReplicaState.DELETION_SUCCESSFUL)

    rig.rsm.handle_state_changes([replica], ReplicaState.NON_EXISTENT)

    assert rig.ctx.replicas(TP0) == (1, 2)
    assert rig.ctx.replica_state(replica) is ReplicaState.NON_EXISTENT
    assert rig.send.sent == []


def test_non_existent_removes_the_replica_from_adding_and_removing_replicas_too(
    rig: Rig,
) -> None:
    """Kafka's `ReplicaAssignment.removeReplica` filters the replica out of `replicas`,
    `addingReplicas` and `removingReplicas` alike."""
    rig.ctx.set_assignment(TP0, ReplicaAssignment((1, 2, 3, 4), (4,), (3,)))
    replica = PartitionReplica(TP0, 3)
    rig.ctx.set_replica_state(replica, ReplicaState.DELETION_SUCCESSFUL)

    rig.rsm.handle_state_changes([replica], ReplicaState.NON_EXISTENT)

    assert rig.ctx.assignment(TP0) == ReplicaAssignment((1, 2, 4), (4,), ())


# --- invalid transitions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (ReplicaState.NON_EXISTENT, ReplicaState.ONLINE),
        (ReplicaState.NON_EXISTENT, ReplicaState.OFFLINE),
        (ReplicaState.ONLINE, ReplicaState.NEW),
        (ReplicaState.ONLINE, ReplicaState.DELETION_STARTED),
        (ReplicaState.ONLINE, ReplicaState.NON_EXISTENT),
        (ReplicaState.OFFLINE, ReplicaState.DELETION_SUCCESSFUL),
        (ReplicaState.DELETION_SUCCESSFUL, ReplicaState.ONLINE),
    ],
    ids=lambda s: s.value,
)
def test_invalid_transitions_are_reported_and_leave_the_state(
    rig: Rig, current: ReplicaState, target: ReplicaState
) -> None:
    replica = PartitionReplica(TP0, 2)
    rig.ctx.set_replica_state(replica, current)

    rig.rsm.handle_state_changes([replica], target)  # never raises

    assert rig.ctx.replica_state(replica) is current
    assert rig.invalid() == [(2, current.value, target.value)]
    assert rig.zk.calls == []
    assert rig.send.sent == []
    assert rig.ctx.replicas(TP0) == (1, 2, 3)


def test_an_invalid_replica_does_not_stop_the_valid_ones(rig: Rig) -> None:
    rig.ctx.set_replica_state(PartitionReplica(TP0, 2), ReplicaState.DELETION_SUCCESSFUL)
    rig.ctx.set_replica_state(PartitionReplica(TP1, 2), ReplicaState.OFFLINE)
    rig.rsm.handle_state_changes(on(2, TP0, TP1), ReplicaState.ONLINE)
    assert rig.ctx.replica_state(PartitionReplica(TP0, 2)) is ReplicaState.DELETION_SUCCESSFUL
    assert rig.ctx.replica_state(PartitionReplica(TP1, 2)) is ReplicaState.ONLINE
    assert len(rig.invalid()) == 1


def test_no_replicas_means_no_round(rig: Rig) -> None:
    rig.batch.add_update_metadata([1], [])  # a batch left unsent would make new_batch raise
    rig.rsm.handle_state_changes([], ReplicaState.ONLINE)


# --- startup ---------------------------------------------------------------------------------


def test_startup_puts_replicas_on_live_brokers_online_and_the_others_offline(rig: Rig) -> None:
    for replica in rig.ctx.replicas_for_partitions([TP0, TP1]):
        rig.ctx.set_replica_state(replica, ReplicaState.NON_EXISTENT)
    rig.ctx.remove_live_brokers([3])

    rig.rsm.startup()

    states = {
        (r.topic_partition.partition, r.replica): rig.ctx.replica_state(r)
        for r in rig.ctx.replicas_for_partitions([TP0, TP1])
    }
    assert states == {
        (0, 1): ReplicaState.ONLINE,
        (0, 2): ReplicaState.ONLINE,
        (0, 3): ReplicaState.OFFLINE,
        (1, 1): ReplicaState.ONLINE,
        (1, 2): ReplicaState.ONLINE,
        (1, 3): ReplicaState.OFFLINE,
    }
    # the live replicas heard their leaderships; broker 3 left both ISRs
    assert sorted(rig.lai_sent()) == [1, 2]
    assert rig.zk.state(TP0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 5, (1, 2), 8), EPOCH)
    assert rig.zk.state(TP1) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2, 1), 8), EPOCH)
    assert 3 not in {b for b, _ in rig.send.sent}
