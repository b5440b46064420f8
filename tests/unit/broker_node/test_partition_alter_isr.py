"""A partition leader at inter.broker.protocol.version 2.7 (AlterIsr, KIP-497), after Kafka
2.8's `PartitionTest` (testIsrExpansion, testAlterIsrUnknownTopic, testAlterIsrInvalidVersion,
testAlterIsrUnexpectedError, testSingleInFlightAlterIsr): ISR changes are proposed to the
controller, never written to the state znode; one proposal is pending at a time; the high
watermark counts the larger of the committed and proposed ISRs meanwhile; the controller's
answer commits the proposal, sends it again, or leaves it pending until a LeaderAndIsr.

Setup: broker 1 leads "orders" partition 0, replicas (1, 2, 3), at leader epoch 5 with the
state znode at zkVersion 7, on a real `PartitionLog`; its `AlterIsrManager` is real but its
thread is not started: `Rig.answer` sends what is pending to a scripted controller on the
test's thread. The partition's clock is manual; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from broker_node.alter_isr_manager import AlterIsrManager
from broker_node.partition import Partition
from broker_node.partition_isr import PartitionConfig
from broker_node.storage import PartitionLog
from broker_node.testing import FakeIsrStore
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

TP = TopicPartition("orders", 0)
REPLICAS = (1, 2, 3)
EPOCH = 5
ZK_VERSION = 7
LAG_MS = 10_000
START_MS = 1_000_000


class ScriptedController:
    """Answers AlterIsr: the proposal written at the next zkVersion, or `error` for it;
    records the requests."""

    def __init__(self) -> None:
        self.requests: list[m.AlterIsrRequest] = []
        self.error = Errors.NONE
        self.leader_epoch: int | None = None

    def __call__(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        self.requests.append(request)
        results = []
        for p in request.partitions:
            if self.error is not Errors.NONE:
                results.append(m.AlterIsrPartitionResult(p.topic_partition, self.error))
                continue
            epoch = p.leader_epoch if self.leader_epoch is None else self.leader_epoch
            results.append(
                m.AlterIsrPartitionResult(
                    p.topic_partition, Errors.NONE, 1, epoch, p.new_isr, p.current_isr_version + 1
                )
            )
        return m.AlterIsrResponse(Errors.NONE, tuple(results))


@dataclass
class Rig:
    """The partition, its AlterIsr manager and controller, and what it recorded."""

    partition: Partition
    alter: AlterIsrManager
    controller: ScriptedController
    store: FakeIsrStore
    events: RecordingEventLog
    clock: list[int]
    notified: list[TopicPartition] = field(default_factory=list)

    def lead(self, isr: tuple[int, ...] = (1, 2), epoch: int = EPOCH) -> None:
        """The controller's LeaderAndIsr makes broker 1 leader."""
        self.partition.make_leader(
            m.LeaderAndIsrPartitionState(
                TP.topic, TP.partition, 3, 1, epoch, isr, ZK_VERSION, REPLICAS
            )
        )

    def produce(self, count: int) -> None:
        """Append `count` records as leader."""
        records = [m.ProducedRecord(b"k", b"v", timestamp_ms=1_700_000_000_000)] * count
        assert self.partition.append_as_leader(records, 1)[0] is Errors.NONE

    def fetch(self, replica: int, offset: int) -> None:
        """Follower `replica` fetches from `offset`."""
        self.partition.read(m.FetchPartition(TP.topic, TP.partition, offset, EPOCH, 500), replica)

    def answer(self) -> None:
        """The controller answers what is pending, in one request."""
        self.alter.send_once(list(self.alter._unsent.values()))

    def kinds(self) -> list[str]:
        """Kinds of the ISR events emitted."""
        return [e["kind"] for e in self.events.events if e["kind"].startswith("isr_")]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    """A partition of broker 1 at IBP 2.7, not yet leading."""
    log = PartitionLog(tmp_path / "orders-0")
    controller = ScriptedController()
    alter = AlterIsrManager(1, lambda: 101, controller)
    store, events, clock = FakeIsrStore(), RecordingEventLog("broker-1"), [START_MS]
    notified: list[TopicPartition] = []
    partition = Partition(
        TP,
        1,
        log,
        store,
        events,
        PartitionConfig(LAG_MS, 1, alter_isr=alter),
        notified.append,
        lambda: clock[0],
    )
    yield Rig(partition, alter, controller, store, events, clock, notified)
    log.close()


def test_isr_expansion_is_proposed_and_committed_by_the_controllers_answer(rig: Rig) -> None:
    """testIsrExpansion at IBP 2.7: the follower counts for the high watermark at once, the
    ISR changes when the controller answers; nothing is written to ZooKeeper by the leader
    and no ISR change notification is recorded."""
    rig.lead()
    rig.produce(10)
    rig.fetch(2, 10)
    rig.fetch(3, 10)
    p = rig.partition
    assert (p.isr, p.maximal_isr) == ((1, 2), (1, 2, 3))
    assert rig.alter.pending() == [TP]
    assert p.log.high_watermark == 10
    rig.produce(5)
    rig.fetch(2, 15)  # the joining follower 3 still counts: the high watermark waits for it
    assert p.log.high_watermark == 10
    rig.fetch(3, 15)
    assert p.log.high_watermark == 15
    rig.answer()
    (request,) = rig.controller.requests
    assert request.partitions == (m.AlterIsrPartition(TP, EPOCH, (1, 2, 3), ZK_VERSION),)
    assert (p.isr, p.maximal_isr, p.zk_version) == ((1, 2, 3), (1, 2, 3), ZK_VERSION + 1)
    assert rig.store.writes == []
    assert rig.notified == []
    (changed,) = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert (changed["reason"], changed["isr"], changed["zk_version"]) == ("expand", [1, 2, 3], 8)
    # as when decided: the follower had the high watermark (`isr_join_after_epoch_start`)
    assert (changed["follower_log_end_offset"], changed["high_watermark"]) == (10, 10)


@pytest.mark.parametrize(
    "error",
    [Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.INVALID_UPDATE_VERSION, Errors.FENCED_LEADER_EPOCH],
)
def test_alter_isr_final_errors_give_up_and_keep_the_proposal_pending(
    rig: Rig, error: Errors
) -> None:
    """testAlterIsrUnknownTopic, testAlterIsrInvalidVersion: the committed ISR stays, the
    maximal one keeps the follower, nothing is sent again, and no other ISR change is
    proposed until a LeaderAndIsr."""
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    rig.controller.error = error
    rig.answer()
    p = rig.partition
    assert (p.isr, p.maximal_isr) == ((1, 2), (1, 2, 3))
    assert rig.alter.pending() == []
    (failed,) = rig.events.of_kind(EventKind.ISR_UPDATE_FAILED)
    assert failed["reason"] == f"AlterIsr answered {error.name}"
    rig.clock[0] += LAG_MS + 1
    p.maybe_shrink_isr()  # follower 2 lags now, but the proposal is still pending
    assert rig.alter.pending() == []


def test_alter_isr_unexpected_error_is_sent_again(rig: Rig) -> None:
    """testAlterIsrUnexpectedError: any other error sends the same proposal again."""
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    rig.controller.error = Errors.UNKNOWN_SERVER_ERROR
    rig.answer()
    assert rig.alter.pending() == [TP]
    assert rig.partition.maximal_isr == (1, 2, 3)
    rig.controller.error = Errors.NONE
    rig.answer()
    first, second = rig.controller.requests
    assert first.partitions == second.partitions
    assert rig.partition.isr == (1, 2, 3)


def test_single_in_flight_alter_isr(rig: Rig) -> None:
    """testSingleInFlightAlterIsr: while an expansion is pending, a lagging follower is not
    dropped and no second proposal is made."""
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    rig.clock[0] += LAG_MS + 1
    rig.partition.maybe_shrink_isr()
    (item,) = rig.alter._unsent.values()
    assert item.leader_and_isr.isr == (1, 2, 3)


def test_a_pending_shrink_holds_the_high_watermark_until_committed(rig: Rig) -> None:
    """A shrink cannot be assumed to succeed: the dropped follower still counts for the high
    watermark until the controller has written the smaller ISR."""
    rig.lead(isr=(1, 2, 3))
    rig.produce(10)
    rig.clock[0] += LAG_MS + 1
    rig.fetch(2, 10)  # follower 2 caught up now; follower 3 never fetched
    rig.partition.maybe_shrink_isr()
    p = rig.partition
    assert (p.isr, p.maximal_isr) == ((1, 2, 3), (1, 2, 3))
    assert p.log.high_watermark == 0
    rig.answer()
    assert p.isr == (1, 2)
    assert p.log.high_watermark == 10
    (changed,) = rig.events.of_kind(EventKind.ISR_CHANGED)
    assert changed["reason"] == "shrink"


def test_a_leader_and_isr_replaces_the_pending_proposal(rig: Rig) -> None:
    """makeLeader clears the pending AlterIsr: the unsent item is dropped, and an answer to
    the replaced proposal is ignored."""
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    (proposal,) = rig.alter._unsent.values()
    rig.lead(isr=(1,), epoch=EPOCH + 1)
    assert rig.alter.pending() == []
    assert rig.partition.maximal_isr == (1,)
    proposal.callback(m.AlterIsrPartitionResult(TP, Errors.NONE, 1, EPOCH, (1, 2, 3), 8))
    assert (rig.partition.isr, rig.partition.zk_version) == ((1,), ZK_VERSION)


def test_an_answer_after_the_replica_stopped_is_ignored(rig: Rig) -> None:
    """StopReplica (no LeaderAndIsr) while the proposal was in flight: the answer changes
    nothing on a partition this broker no longer leads."""
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    rig.partition.stop()
    rig.answer()
    assert (rig.partition.isr, rig.partition.zk_version) == ((1, 2), ZK_VERSION)
    assert rig.events.of_kind(EventKind.ISR_CHANGED) == []


def test_an_answer_for_another_leader_epoch_is_ignored(rig: Rig) -> None:
    rig.lead()
    rig.produce(10)
    rig.fetch(3, 10)
    rig.controller.leader_epoch = EPOCH + 1
    rig.answer()
    p = rig.partition
    assert (p.isr, p.maximal_isr, p.zk_version) == ((1, 2), (1, 2, 3), ZK_VERSION)
    assert rig.events.of_kind(EventKind.ISR_CHANGED) == []


def test_at_ibp_2_6_the_leader_writes_the_state_znode(tmp_path: Path) -> None:
    """The other path, for contrast: no AlterIsr manager, the ISR is written at once and the
    change recorded for `/isr_change_notification`."""
    log = PartitionLog(tmp_path / "orders-0")
    store = FakeIsrStore()
    notified: list[TopicPartition] = []
    partition = Partition(
        TP, 1, log, store, RecordingEventLog("b"), PartitionConfig(LAG_MS, 1), notified.append
    )
    store.put_state(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, EPOCH, (1, 2)), 3), 0)
    try:
        partition.make_leader(
            m.LeaderAndIsrPartitionState(TP.topic, TP.partition, 3, 1, EPOCH, (1, 2), 0, REPLICAS)
        )
        partition.read(m.FetchPartition(TP.topic, TP.partition, 0, EPOCH, 500), 3)
        assert partition.isr == (1, 2, 3)
        assert [w.state.leader_and_isr.isr for w in store.writes] == [(1, 2, 3)]
        assert notified == [TP]
    finally:
        log.close()
