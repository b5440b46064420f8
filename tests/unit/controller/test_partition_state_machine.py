"""`PartitionStateMachine` against `FakePartitionZk`: initial leadership of new partitions,
the four elections, the BADVERSION re-read loop, fencing, and invalid transitions.

Setup (unless a test says otherwise): controller epoch 4 at `/controller_epoch` zkVersion
12, brokers 1, 2, 3 live, topic "orders" partition 0 assigned to (1, 2, 3). Requests go
to a `RecordingSend`; events to a `RecordingEventLog`. Ends with hypothesis properties
over random sequences of broker failures and offline elections.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kazoo.exceptions import NoNodeError

from controller.context import ControllerContext
from controller.election_strategies import (
    ControlledShutdownElection,
    OfflineElection,
    PreferredElection,
    ReassignElection,
)
from controller.partition_state_machine import ElectionStats, PartitionStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState
from controller.testing.brokers import RecordingSend, make_broker
from controller.testing.zookeeper import FakePartitionZk
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from zkdata.errors import ControllerMovedError
from zkdata.model import ReplicaAssignment
from zkdata.topic_configs import UNCLEAN_LEADER_ELECTION_ENABLE

CONTROLLER_ID = 9
EPOCH = 4
EPOCH_ZK_VERSION = 12
TOPIC = "orders"
TP = TopicPartition(TOPIC, 0)


@dataclass
class Rig:
    """A state machine over a hand-filled context, a fake ZooKeeper and a recording send."""

    ctx: ControllerContext
    zk: FakePartitionZk
    send: RecordingSend
    events: RecordingEventLog
    batch: RequestBatch
    psm: PartitionStateMachine
    elections: list[float] = field(default_factory=list)
    unclean: list[int] = field(default_factory=list)

    def lai_sent(self) -> dict[int, list[m.LeaderAndIsrPartitionState]]:
        """Per broker, the LeaderAndIsr partition states sent."""
        return {b: list(r.partition_states) for b, r in self.send.of_type(m.LeaderAndIsrRequest)}

    def seed(
        self,
        tp: TopicPartition,
        leader: int,
        leader_epoch: int,
        isr: tuple[int, ...],
        zk_version: int = 7,
        state: PartitionState = PartitionState.OFFLINE,
        controller_epoch: int = EPOCH - 1,
    ) -> LeaderIsrAndControllerEpoch:
        """An existing partition: its state znode, its leadership in the context, its state."""
        stored = LeaderIsrAndControllerEpoch(
            LeaderAndIsr(leader, leader_epoch, isr, zk_version), controller_epoch
        )
        self.zk.put_state(tp, stored, zk_version)
        self.ctx.set_leadership(tp, stored)
        self.ctx.set_partition_state(tp, state)
        return stored


def make_rig(
    live: Iterable[int] = (1, 2, 3),
    assignment: dict[int, tuple[int, ...]] | None = None,
    unclean_default: bool = False,
) -> Rig:
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.epoch_zk_version = EPOCH_ZK_VERSION
    ctx.set_live_brokers(make_broker(b) for b in live)
    parts = assignment if assignment is not None else {0: (1, 2, 3)}
    ctx.add_topic(TOPIC, {p: ReplicaAssignment(r) for p, r in parts.items()})
    zk = FakePartitionZk(EPOCH_ZK_VERSION)
    send = RecordingSend()
    events = RecordingEventLog()
    batch = RequestBatch(CONTROLLER_ID, ctx, send)
    elections: list[float] = []
    unclean: list[int] = []
    stats = ElectionStats(on_election=elections.append, on_unclean=unclean.append)
    psm = PartitionStateMachine(ctx, zk, batch, events, unclean_default, stats)
    return Rig(ctx, zk, send, events, batch, psm, elections, unclean)


@pytest.fixture
def rig() -> Rig:
    return make_rig()


def failures(rig: Rig) -> list[str]:
    return [e["reason"] for e in rig.events.of_kind(EventKind.LEADER_ELECTION_FAILED)]


# --- New -> Online ---------------------------------------------------------------------------


def test_new_to_online_leads_with_the_first_live_replica_and_all_live_replicas_in_the_isr() -> None:
    rig = make_rig(live=(2, 3, 4), assignment={0: (1, 3, 2)})
    rig.psm.handle_state_changes([TP], PartitionState.NEW)
    assert rig.ctx.partition_state(TP) is PartitionState.NEW

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, OfflineElection())

    expected = LeaderAndIsr(3, 0, (3, 2), 0)
    assert result == {TP: expected}
    assert rig.ctx.partition_state(TP) is PartitionState.ONLINE
    assert rig.ctx.leadership(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    assert rig.zk.state(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    (create,) = rig.zk.calls_to("create_partition_states")
    assert create.epoch_zk_version == EPOCH_ZK_VERSION
    assert rig.zk.methods() == ["create_partition_states"]  # nothing to read first


def test_new_to_online_sends_leader_and_isr_marked_new_to_the_isr() -> None:
    rig = make_rig(live=(2, 3, 4), assignment={0: (1, 3, 2)})
    rig.psm.handle_state_changes([TP], PartitionState.NEW)
    rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    sent = rig.lai_sent()
    assert sorted(sent) == [2, 3]
    for states in sent.values():
        (state,) = states
        assert (state.leader, state.leader_epoch, state.isr, state.is_new) == (3, 0, (3, 2), True)
        assert state.controller_epoch == EPOCH
        assert state.replicas == (1, 3, 2)
    assert sorted(b for b, _ in rig.send.of_type(m.UpdateMetadataRequest)) == [2, 3, 4]
    (elected,) = rig.events.of_kind(EventKind.LEADER_ELECTED)
    assert (elected["strategy"], elected["leader"], elected["unclean"]) == ("initial", 3, False)


def test_new_partition_with_no_live_replica_stays_new_and_the_failure_is_reported() -> None:
    rig = make_rig(live=(4,), assignment={0: (1, 2, 3)})
    rig.psm.handle_state_changes([TP], PartitionState.NEW)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    assert result == {TP: "no live replica to lead a new partition"}
    assert failures(rig) == ["no live replica to lead a new partition"]
    assert rig.ctx.partition_state(TP) is PartitionState.NEW
    assert rig.ctx.leadership(TP) is None
    assert rig.zk.calls == []
    assert rig.send.sent == []


def test_new_partition_whose_state_znode_exists_stays_new(rig: Rig) -> None:
    rig.zk.put_state(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 3, (2,)), EPOCH))
    rig.psm.handle_state_changes([TP], PartitionState.NEW)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    assert result == {TP: "state znode already exists"}
    assert rig.ctx.partition_state(TP) is PartitionState.NEW
    assert rig.ctx.leadership(TP) is None
    assert rig.send.sent == []


def test_replicas_on_shutting_down_brokers_do_not_join_a_new_partition(rig: Rig) -> None:
    rig.ctx.mark_shutting_down(1)
    rig.psm.handle_state_changes([TP], PartitionState.NEW)
    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)
    assert result == {TP: LeaderAndIsr(2, 0, (2, 3), 0)}


# --- Offline -> Online ---------------------------------------------------------------------


def test_offline_election_bumps_the_leader_epoch_and_picks_a_live_isr_member(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), zk_version=7)
    rig.ctx.remove_live_brokers([1])

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, OfflineElection())

    expected = LeaderAndIsr(2, 5, (2,), 8)
    assert result == {TP: expected}
    assert rig.ctx.partition_state(TP) is PartitionState.ONLINE
    assert rig.ctx.leadership(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    assert rig.zk.state(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    assert rig.zk.methods() == ["update_leader_and_isr"]  # state known from the context
    (update,) = rig.zk.calls_to("update_leader_and_isr")
    assert update.epoch_zk_version == EPOCH_ZK_VERSION
    assert update.states[TP].leader_and_isr.zk_version == 7  # conditional on what was read
    assert len(rig.elections) == 1
    assert rig.unclean == []


def test_leader_elected_carries_the_zxid_its_write_committed_at(rig: Rig) -> None:
    """The event names the ZooKeeper transaction of its write (the Stat's mzxid), which
    orders it against the epoch bump of a successor (`controller_writes_fenced`)."""
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), zk_version=7)
    rig.ctx.remove_live_brokers([1])
    rig.psm.handle_state_changes([TP], PartitionState.ONLINE, OfflineElection())
    rig.seed(TP, leader=2, leader_epoch=5, isr=(2,), zk_version=8)
    rig.ctx.remove_live_brokers([2])
    rig.psm.handle_state_changes([TP], PartitionState.ONLINE, OfflineElection(True))

    first, second = rig.events.of_kind(EventKind.LEADER_ELECTED)
    assert (first["zk_version"], first["zxid"]) == (8, 0x100)
    assert (second["zk_version"], second["zxid"]) == (9, 0x101)


def test_offline_election_tells_the_live_replicas(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), zk_version=7)
    rig.ctx.remove_live_brokers([1])
    rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    sent = rig.lai_sent()
    assert sorted(sent) == [2, 3]  # live replicas, not only the ISR
    for (state,) in sent.values():
        assert (state.leader, state.leader_epoch, state.isr) == (2, 5, (2,))
        assert (state.zk_version, state.is_new) == (8, False)


def test_offline_election_reads_the_state_znode_not_the_context(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), zk_version=7)
    # a leader shrank the ISR since the context was loaded
    rig.zk.put_state(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 3)), EPOCH), 8)
    rig.ctx.remove_live_brokers([1])

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    assert result == {TP: LeaderAndIsr(3, 5, (3,), 9)}


@pytest.mark.parametrize(
    ("default", "topic_config", "strategy", "expected_leader"),
    [
        pytest.param(False, None, OfflineElection(), None, id="off-by-default"),
        pytest.param(True, None, OfflineElection(), 2, id="broker-default-on"),
        pytest.param(False, "true", OfflineElection(), 2, id="topic-config-on"),
        pytest.param(False, " TRUE ", OfflineElection(), 2, id="topic-config-case"),
        pytest.param(True, "false", OfflineElection(), None, id="topic-config-overrides-default"),
        pytest.param(False, "false", OfflineElection(True), 2, id="strategy-allows-unclean"),
    ],
)
def test_unclean_election_only_when_enabled(
    default: bool, topic_config: str | None, strategy: OfflineElection, expected_leader: int | None
) -> None:
    rig = make_rig(unclean_default=default)
    if topic_config is not None:
        rig.ctx.set_topic_config(TOPIC, {UNCLEAN_LEADER_ELECTION_ENABLE: topic_config})
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1,), zk_version=7)
    rig.ctx.remove_live_brokers([1])

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, strategy)

    if expected_leader is None:
        assert result == {TP: "no eligible leader (offline)"}
        assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE
        assert rig.zk.zk_version(TP) == 7
        assert rig.zk.calls_to("update_leader_and_isr") == []
        assert rig.send.sent == []
        assert rig.unclean == []
    else:
        assert result == {TP: LeaderAndIsr(expected_leader, 5, (expected_leader,), 8)}
        assert rig.ctx.partition_state(TP) is PartitionState.ONLINE
        assert rig.unclean == [1]
        (elected,) = rig.events.of_kind(EventKind.LEADER_ELECTED)
        assert elected["unclean"] is True


def test_failed_election_leaves_state_and_reports_the_reason(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1,), zk_version=7)
    rig.ctx.set_live_brokers([])

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    assert result == {TP: "no eligible leader (offline)"}
    assert failures(rig) == ["no eligible leader (offline)"]
    (change,) = rig.events.of_kind(EventKind.PARTITION_STATE_CHANGE)
    assert (change["partitions"], change["failed"]) == (0, 1)


def test_missing_state_znode_fails_the_election(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2))
    rig.zk.delete_state(TP)
    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)
    assert result == {TP: "state znode is missing"}
    assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE


def test_malformed_state_znode_is_reported_and_fails_the_election(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2))
    rig.zk.put_malformed(TP, "not JSON")
    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)
    assert result == {TP: "state znode does not decode"}
    (malformed,) = rig.events.of_kind(EventKind.MALFORMED_ZNODE)
    assert malformed["path"] == "/brokers/topics/orders/partitions/0/state"
    assert malformed["reason"] == "not JSON"
    assert rig.send.sent == []


def test_a_write_failing_with_another_error_fails_that_partition_only() -> None:
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 3, 2)})
    tp1 = TopicPartition(TOPIC, 1)
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2))
    rig.seed(tp1, leader=1, leader_epoch=2, isr=(1, 3))
    rig.ctx.remove_live_brokers([1])
    rig.zk.fail_next_update(TP, NoNodeError())

    result = rig.psm.handle_state_changes([TP, tp1], PartitionState.ONLINE)

    assert result == {TP: "state znode is missing", tp1: LeaderAndIsr(3, 3, (3,), 8)}
    assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE
    assert rig.ctx.partition_state(tp1) is PartitionState.ONLINE
    assert [s.topic_partition for (s,) in rig.lai_sent().values()] == [tp1, tp1]


def test_many_partitions_are_read_and_written_in_one_call_each() -> None:
    rig = make_rig(assignment={p: (1, 2, 3) for p in range(20)})
    tps = rig.ctx.partitions_of(TOPIC)
    for tp in tps:
        rig.seed(tp, leader=1, leader_epoch=0, isr=(1, 2, 3))
    rig.ctx.remove_live_brokers([1])

    result = rig.psm.handle_state_changes(tps, PartitionState.ONLINE)

    assert all(isinstance(r, LeaderAndIsr) and r.leader == 2 for r in result.values())
    assert rig.zk.methods() == ["update_leader_and_isr"]  # state known from the context
    lai = dict(rig.send.of_type(m.LeaderAndIsrRequest))
    assert sorted(lai) == [2, 3]
    assert all(len(r.partition_states) == 20 for r in lai.values())


# --- BADVERSION: re-read and re-decide --------------------------------------------------------


def test_a_concurrent_isr_change_makes_the_election_re_read_and_re_decide(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2, 3), zk_version=7)
    rig.ctx.remove_live_brokers([1])
    # between our read and our write, leader 1 shrinks the ISR to (1, 3)
    rig.zk.bump_version_once(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 3)), EPOCH))

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    # without the concurrent write the answer would have been leader 2, ISR (2, 3)
    expected = LeaderAndIsr(3, 5, (3,), 9)
    assert result == {TP: expected}
    # the first attempt starts from the context; only the lost race re-reads ZooKeeper
    assert rig.zk.methods() == [
        "update_leader_and_isr",
        "get_partition_states",
        "update_leader_and_isr",
    ]
    first, second = rig.zk.calls_to("update_leader_and_isr")
    assert first.states[TP].leader_and_isr.zk_version == 7
    assert second.states[TP].leader_and_isr.zk_version == 8
    assert rig.zk.state(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    assert rig.ctx.leadership(TP) == LeaderIsrAndControllerEpoch(expected, EPOCH)
    sent = rig.lai_sent()
    assert sorted(sent) == [2, 3]
    for (state,) in sent.values():  # only the final decision is sent, once
        assert (state.leader, state.isr, state.zk_version) == (3, (3,), 9)
    assert len(rig.events.of_kind(EventKind.LEADER_ELECTED)) == 1


def test_a_bad_version_retries_only_the_partition_that_lost_the_race() -> None:
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 2, 3)})
    tp1 = TopicPartition(TOPIC, 1)
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2, 3))
    rig.seed(tp1, leader=1, leader_epoch=4, isr=(1, 2, 3))
    rig.ctx.remove_live_brokers([1])
    rig.zk.bump_version_once(tp1, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2)), EPOCH))

    result = rig.psm.handle_state_changes([TP, tp1], PartitionState.ONLINE)

    assert result == {TP: LeaderAndIsr(2, 5, (2, 3), 8), tp1: LeaderAndIsr(2, 5, (2,), 9)}
    reads = rig.zk.calls_to("get_partition_states")
    assert [c.partitions for c in reads] == [(tp1,)]


# --- fencing ---------------------------------------------------------------------------------


def test_a_state_znode_written_by_a_newer_controller_fails_only_its_partition() -> None:
    """Kafka aborts the state change of that partition alone ("written by another
    controller"); the other partitions of the round are elected and the machine does not
    raise: losing the controllership is the fenced write's business, not this read's."""
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 2, 3)})
    tp1, tp2 = TopicPartition(TOPIC, 1), TopicPartition(TOPIC, 2)
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), controller_epoch=EPOCH + 1)
    rig.seed(tp1, leader=1, leader_epoch=4, isr=(1, 2))
    rig.seed(tp2, leader=1, leader_epoch=4, isr=(1, 3))
    rig.ctx.remove_live_brokers([1])
    before = rig.ctx.leadership(TP)

    result = rig.psm.handle_state_changes([TP, tp1, tp2], PartitionState.ONLINE)

    assert result[tp1] == LeaderAndIsr(2, 5, (2,), 8)
    assert result[tp2] == LeaderAndIsr(3, 5, (3,), 8)
    reason = result[TP]
    assert isinstance(reason, str)
    assert "another controller" in reason
    (update,) = rig.zk.calls_to("update_leader_and_isr")
    assert set(update.states) == {tp1, tp2}
    assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE
    assert rig.ctx.partition_state(tp1) is PartitionState.ONLINE
    assert rig.ctx.leadership(TP) == before
    (failed,) = rig.events.of_kind(EventKind.LEADER_ELECTION_FAILED)
    assert (failed["topic"], failed["partition"]) == (TOPIC, 0)
    assert f"epoch {EPOCH + 1}" in failed["reason"]
    assert sorted(
        tp
        for _, r in rig.send.of_type(m.LeaderAndIsrRequest)
        for tp in (s.topic_partition for s in r.partition_states)
    ) == [tp1, tp1, tp2, tp2]


def test_a_newer_controllers_znode_found_after_a_lost_race_fails_that_partition(
    rig: Rig,
) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2))
    rig.ctx.remove_live_brokers([1])
    rig.zk.bump_version_once(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 6, (3,)), EPOCH + 1))

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE)

    reason = result[TP]
    assert isinstance(reason, str)
    assert "another controller" in reason
    assert rig.zk.state(TP) == LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 6, (3,), 8), EPOCH + 1)
    assert rig.send.sent == []


@pytest.mark.parametrize("path", ["create", "update"])
def test_controller_moved_from_zookeeper_propagates_and_sends_nothing(path: str) -> None:
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 2, 3)})
    tp1 = TopicPartition(TOPIC, 1)
    rig.seed(tp1, leader=1, leader_epoch=4, isr=(1, 2))  # an election in the same round
    if path == "create":
        rig.psm.handle_state_changes([TP], PartitionState.NEW)
        partitions = [tp1, TP]
    else:
        partitions = [tp1]
    rig.ctx.remove_live_brokers([1])
    rig.zk.epoch_zk_version = EPOCH_ZK_VERSION + 1  # another controller was elected

    with pytest.raises(ControllerMovedError):
        rig.psm.handle_state_changes(partitions, PartitionState.ONLINE)

    assert rig.send.sent == []
    assert rig.ctx.partition_state(tp1) is PartitionState.OFFLINE
    assert rig.zk.zk_version(tp1) == 7
    assert rig.zk.state(TP) is None
    rig.batch.new_batch()  # the batch was emptied
    rig.batch.send()
    assert rig.send.sent == []


# --- transitions that need no election -----------------------------------------------------


def test_online_to_offline_and_offline_to_non_existent_touch_no_znode(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), state=PartitionState.ONLINE)
    assert rig.psm.handle_state_changes([TP], PartitionState.OFFLINE) == {
        TP: PartitionState.OFFLINE
    }
    assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE
    rig.psm.handle_state_changes([TP], PartitionState.NON_EXISTENT)
    assert rig.ctx.partition_state(TP) is PartitionState.NON_EXISTENT
    assert rig.zk.calls == []
    assert rig.send.sent == []


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (PartitionState.NON_EXISTENT, PartitionState.ONLINE),
        (PartitionState.NON_EXISTENT, PartitionState.OFFLINE),
        (PartitionState.ONLINE, PartitionState.NON_EXISTENT),
        (PartitionState.NEW, PartitionState.NON_EXISTENT),
        (PartitionState.ONLINE, PartitionState.NEW),
        (PartitionState.OFFLINE, PartitionState.NEW),
    ],
    ids=lambda s: s.value,
)
def test_invalid_transitions_are_reported_and_leave_the_state(
    rig: Rig, current: PartitionState, target: PartitionState
) -> None:
    if current is not PartitionState.NON_EXISTENT:
        rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), state=current)

    result = rig.psm.handle_state_changes([TP], target)

    assert result == {}
    assert rig.ctx.partition_state(TP) is current
    (invalid,) = rig.events.of_kind(EventKind.INVALID_STATE_TRANSITION)
    assert invalid["machine"] == "partition"
    assert (invalid["current"], invalid["target"]) == (current.value, target.value)
    assert rig.zk.calls == []
    assert rig.send.sent == []


def test_an_invalid_partition_does_not_stop_the_valid_ones() -> None:
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 2, 3)})
    tp1 = TopicPartition(TOPIC, 1)
    rig.seed(tp1, leader=1, leader_epoch=4, isr=(1, 2))
    rig.ctx.remove_live_brokers([1])
    result = rig.psm.handle_state_changes([TP, tp1], PartitionState.ONLINE)
    assert result == {tp1: LeaderAndIsr(2, 5, (2,), 8)}
    assert len(rig.events.of_kind(EventKind.INVALID_STATE_TRANSITION)) == 1


def test_no_partitions_means_no_round(rig: Rig) -> None:
    rig.batch.add_update_metadata([1], [])  # a batch left unsent would make new_batch raise
    assert rig.psm.handle_state_changes([], PartitionState.ONLINE) == {}


# --- controlled shutdown, preferred and reassignment elections ------------------------------


def test_controlled_shutdown_election_moves_leadership_off_shutting_down_brokers(
    rig: Rig,
) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2, 3), state=PartitionState.ONLINE)
    rig.ctx.mark_shutting_down(1)
    rig.ctx.mark_shutting_down(2)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, ControlledShutdownElection())

    assert result == {TP: LeaderAndIsr(3, 5, (3,), 8)}
    sent = rig.lai_sent()
    assert sorted(sent) == [1, 2, 3]  # shutting-down replicas learn they are followers
    (elected,) = rig.events.of_kind(EventKind.LEADER_ELECTED)
    assert elected["strategy"] == "controlled_shutdown"


def test_controlled_shutdown_election_fails_when_only_shutting_down_brokers_are_in_the_isr(
    rig: Rig,
) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2), state=PartitionState.ONLINE)
    rig.ctx.mark_shutting_down(1)
    rig.ctx.mark_shutting_down(2)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, ControlledShutdownElection())

    assert result == {TP: "no eligible leader (controlled_shutdown)"}
    state = rig.ctx.leadership(TP)
    assert state is not None
    assert state.leader_and_isr.leader == 1
    assert rig.send.sent == []


def test_preferred_election_moves_leadership_to_the_first_replica_and_keeps_the_isr(
    rig: Rig,
) -> None:
    rig.seed(TP, leader=2, leader_epoch=4, isr=(2, 3, 1), state=PartitionState.ONLINE)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, PreferredElection())

    assert result == {TP: LeaderAndIsr(1, 5, (2, 3, 1), 8)}
    assert sorted(rig.lai_sent()) == [1, 2, 3]
    assert rig.ctx.preferred_replica_imbalance_count() == 0


@pytest.mark.parametrize(
    ("isr", "live"),
    [
        pytest.param((2, 3), (1, 2, 3), id="preferred-not-in-isr"),
        pytest.param((2, 3, 1), (2, 3), id="preferred-not-live"),
    ],
)
def test_preferred_election_fails_unless_the_preferred_replica_can_lead(
    isr: tuple[int, ...], live: tuple[int, ...]
) -> None:
    rig = make_rig(live=live)
    rig.seed(TP, leader=2, leader_epoch=4, isr=isr, state=PartitionState.ONLINE)
    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, PreferredElection())
    assert result == {TP: "no eligible leader (preferred)"}
    assert rig.ctx.partition_state(TP) is PartitionState.ONLINE
    assert rig.zk.zk_version(TP) == 7


def test_reassign_election_picks_from_the_target_replicas(rig: Rig) -> None:
    rig.ctx.set_assignment(TP, ReplicaAssignment((1, 2, 3, 4), (4,), (1, 2)))
    rig.ctx.add_live_brokers([make_broker(4)])
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2, 3, 4), state=PartitionState.ONLINE)

    result = rig.psm.handle_state_changes([TP], PartitionState.ONLINE, ReassignElection())

    assert result == {TP: LeaderAndIsr(3, 5, (1, 2, 3, 4), 8)}
    assert sorted(rig.lai_sent()) == [3, 4]


# --- startup ---------------------------------------------------------------------------------


def test_startup_derives_states_then_brings_new_and_offline_partitions_online() -> None:
    rig = make_rig(assignment={0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 2, 3)})
    tp1, tp2 = TopicPartition(TOPIC, 1), TopicPartition(TOPIC, 2)
    led_by_live = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2, 3), 3), EPOCH - 1)
    rig.zk.put_state(tp1, led_by_live, 3)
    rig.ctx.set_leadership(tp1, led_by_live)
    led_by_dead = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 1, (1, 3), 3), EPOCH - 1)
    rig.zk.put_state(tp2, led_by_dead, 3)
    rig.ctx.set_leadership(tp2, led_by_dead)
    rig.ctx.remove_live_brokers([1])

    rig.psm.startup()

    assert rig.ctx.partitions_in_states(PartitionState.ONLINE) == [TP, tp1, tp2]
    assert rig.ctx.leadership(TP) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 0, (2, 3)), EPOCH)
    assert rig.ctx.leadership(tp1) == led_by_live  # untouched
    assert rig.ctx.leadership(tp2) == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(3, 2, (3,), 4), EPOCH
    )


def test_trigger_online_skips_topics_queued_for_deletion(rig: Rig) -> None:
    rig.seed(TP, leader=1, leader_epoch=4, isr=(1, 2))
    rig.ctx.remove_live_brokers([1])
    rig.ctx.queue_topic_deletion([TOPIC])
    assert rig.psm.trigger_online_partition_state_change() == {}
    assert rig.ctx.partition_state(TP) is PartitionState.OFFLINE
    assert rig.zk.calls == []


# --- properties --------------------------------------------------------------------------------

BROKERS = (1, 2, 3, 4, 5)


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[dict[int, tuple[int, ...]], list[frozenset[int]], bool]:
    """Assignments of 1-4 partitions, then a sequence of live broker sets."""
    assignment = {
        p: tuple(draw(st.permutations(BROKERS))[: draw(st.integers(1, 3))])
        for p in range(draw(st.integers(1, 4)))
    }
    steps = draw(st.lists(st.frozensets(st.sampled_from(BROKERS)), min_size=1, max_size=8))
    return assignment, steps, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_offline_elections_never_write_an_empty_isr_or_a_dead_leader(
    scenario: tuple[dict[int, tuple[int, ...]], list[frozenset[int]], bool],
) -> None:
    assignment, steps, unclean = scenario
    rig = make_rig(live=BROKERS, assignment=assignment, unclean_default=unclean)
    rig.psm.startup()  # every partition New -> Online with all brokers live
    last_epoch = {tp: 0 for tp in rig.ctx.all_partitions()}
    for live in steps:
        rig.ctx.set_live_brokers(make_broker(b) for b in sorted(live))
        rig.zk.calls.clear()
        offline = rig.ctx.partitions_with_offline_leader()
        rig.psm.handle_state_changes(offline, PartitionState.OFFLINE)
        rig.psm.trigger_online_partition_state_change()

        for call in rig.zk.calls_to("update_leader_and_isr"):
            for tp, written in call.states.items():
                lai = written.leader_and_isr
                assert lai.isr, f"{tp}: empty ISR written with leader {lai.leader}"
                assert lai.leader in live, f"{tp}: leader {lai.leader} not in {sorted(live)}"
                assert lai.leader in lai.isr
                assert lai.leader in assignment[tp.partition]
                assert written.controller_epoch == EPOCH
                assert lai.leader_epoch > last_epoch[tp]
                last_epoch[tp] = lai.leader_epoch
        for tp in rig.ctx.all_partitions():
            state = rig.ctx.leadership(tp)
            assert state is not None
            stored = rig.zk.state(tp)
            assert stored == state, f"{tp}: context {state} but ZooKeeper {stored}"
            online = rig.ctx.partition_state(tp) is PartitionState.ONLINE
            assert online == (state.leader_and_isr.leader in live)


@settings(max_examples=100, deadline=None)
@given(
    isr=st.lists(st.sampled_from(BROKERS), min_size=1, max_size=5, unique=True),
    shutting_down=st.frozensets(st.sampled_from(BROKERS)),
)
def test_controlled_shutdown_never_elects_or_keeps_a_shutting_down_broker_in_the_isr(
    isr: list[int], shutting_down: frozenset[int]
) -> None:
    rig = make_rig(live=BROKERS, assignment={0: BROKERS})
    rig.seed(TP, leader=isr[0], leader_epoch=1, isr=tuple(isr), state=PartitionState.ONLINE)
    for b in shutting_down:
        rig.ctx.mark_shutting_down(b)

    result = rig.psm.handle_state_changes(
        [TP], PartitionState.ONLINE, ControlledShutdownElection()
    )[TP]

    if isinstance(result, LeaderAndIsr):
        assert result.leader not in shutting_down
        assert not set(result.isr) & shutting_down
        assert result.leader in result.isr
    else:
        assert set(isr) <= shutting_down
