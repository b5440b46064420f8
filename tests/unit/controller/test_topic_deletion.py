"""Topic deletion (Kafka's TopicDeletionManagerTest): the pure decisions, the manager
against `FakePartitionZk` and `FakeDeletionZk` (state transitions, requests, responses,
eligibility, failover, fencing) and the StopReplica response wiring of the active
controller with `FakeBrokerChannel`s.

Setup (unless a test says otherwise): controller epoch 4 at `/controller_epoch` zkVersion
12, brokers 1, 2, 3 live. Topic "doomed": partition 0 (replicas 1, 2, 3; leader 1) and
partition 1 (replicas 2, 3, 1; leader 2), full ISR, leader epoch 4, zkVersion 7. Topic
"kept": partition 0 (replicas 1, 2; leader 1). Every partition Online, every replica
Online. Sender threads are synchronized with `wait_until`, never with sleeps.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kazoo.exceptions import NotEmptyError

from controller import events as ev
from controller.active import ActiveController
from controller.config import ControllerConfig
from controller.context import ControllerContext, PartitionReplica
from controller.control_responses import StopReplicaResult, stop_replica_result
from controller.deletion_decisions import (
    REASON_DELETION_FAILURE,
    REASON_OFFLINE_REPLICAS,
    REASON_REASSIGNMENT,
    TopicDeletionView,
    plan_deletions,
    triage_requests,
)
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.states import PartitionState, ReplicaState
from controller.testing.brokers import FakeChannels, RecordingSend, make_broker
from controller.testing.zookeeper import FakeDeletionZk, FakePartitionZk
from controller.topic_deletion import TopicDeletionManager
from controller.watchers import Watchers
from domain import EPOCH_DURING_DELETE, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors
from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.errors import ControllerMovedError
from zkdata.model import ReplicaAssignment

CONTROLLER_ID = 9
EPOCH = 4
EPOCH_ZK_VERSION = 12
DOOMED = "doomed"
D0 = TopicPartition(DOOMED, 0)
D1 = TopicPartition(DOOMED, 1)
K0 = TopicPartition("kept", 0)
S = ReplicaState


def replica(tp: TopicPartition, broker: int) -> PartitionReplica:
    return PartitionReplica(tp, broker)


# -- decisions --------------------------------------------------------------------------------


def test_triage_queues_known_topics_and_removes_requests_for_unknown_ones() -> None:
    triage = triage_requests(["b", "ghost", "a", "a"], {"a", "b", "c"}, enabled=True)
    assert triage.queue == ("a", "b")
    assert triage.remove == ("ghost",)
    assert triage.unknown == ("ghost",)


def test_triage_with_deletion_disabled_removes_every_request() -> None:
    triage = triage_requests(["a", "ghost"], {"a"}, enabled=False)
    assert triage.queue == ()
    assert triage.remove == ("a", "ghost")
    assert triage.unknown == ("ghost",)


@pytest.mark.parametrize(
    ("states", "reassigned", "marked", "expected"),
    [
        ((S.DELETION_SUCCESSFUL, S.DELETION_SUCCESSFUL), False, False, "complete"),
        ((), False, False, "complete"),
        ((S.DELETION_SUCCESSFUL,), False, True, "complete"),  # done even if halted meanwhile
        ((S.ONLINE, S.ONLINE), False, False, "start"),
        ((S.OFFLINE, S.DELETION_SUCCESSFUL), False, False, "start"),
        ((S.DELETION_INELIGIBLE, S.DELETION_SUCCESSFUL), False, False, "start+retry"),
        ((S.DELETION_STARTED, S.DELETION_INELIGIBLE), False, False, "wait"),
        ((S.DELETION_STARTED, S.DELETION_SUCCESSFUL), False, False, "wait"),
        ((S.ONLINE,), False, True, "wait"),
        ((S.DELETION_INELIGIBLE,), False, True, "wait+retry"),  # Kafka retries when halted
        ((S.DELETION_INELIGIBLE,), True, False, "wait+retry"),
        ((S.ONLINE,), True, False, "wait"),
    ],
)
def test_plan_deletions(
    states: tuple[ReplicaState, ...], reassigned: bool, marked: bool, expected: str
) -> None:
    plan = plan_deletions({"t": TopicDeletionView(states, reassigned, marked)})
    got = "complete" if plan.complete else "start" if plan.start else "wait"
    if plan.retry:
        got += "+retry"
    assert got == expected


@given(
    st.dictionaries(
        st.sampled_from("abcdef"),
        st.tuples(st.lists(st.sampled_from(list(ReplicaState)), max_size=6), st.booleans()),
    )
)
def test_plan_never_touches_a_topic_in_progress_or_halted(
    topics: dict[str, tuple[list[ReplicaState], bool]],
) -> None:
    views = {
        t: TopicDeletionView(tuple(s), marked_ineligible=halted)
        for t, (s, halted) in topics.items()
    }
    plan = plan_deletions(views)
    for topic in plan.retry:
        assert S.DELETION_STARTED not in views[topic].replica_states
        assert S.DELETION_INELIGIBLE in views[topic].replica_states
    assert not set(plan.complete) & set(plan.start)
    for topic in plan.start:
        assert S.DELETION_STARTED not in views[topic].replica_states
        assert not views[topic].marked_ineligible
    for topic in plan.complete:
        assert all(s is S.DELETION_SUCCESSFUL for s in views[topic].replica_states)


# -- the manager ----------------------------------------------------------------------------


@dataclass
class Rig:
    """A deletion manager over a hand-filled context, both state machines and fakes."""

    ctx: ControllerContext
    zk: FakePartitionZk
    dzk: FakeDeletionZk
    send: RecordingSend
    events: RecordingEventLog
    manager: TopicDeletionManager

    def request(self, *topics: str) -> None:
        """Write deletion requests and fire the watch."""
        self.dzk.requests.update(topics)
        self.manager.on_deletion_requests(sorted(self.dzk.requests))

    def answer(self, broker: int, error: Errors = Errors.NONE, **per_partition: Errors) -> None:
        """Answer the last StopReplica with delete sent to `broker`, mapped to its result as
        the request batch's callback maps it; `p0=...` overrides partition 0's error."""
        request = [
            r
            for b, r in self.send.of_type(m.StopReplicaRequest)
            if b == broker and any(s.delete_partition for s in r.partition_states)
        ][-1]
        response = m.StopReplicaResponse(
            Errors.NONE,
            tuple(
                m.PartitionError(s.topic_partition, per_partition.get(f"p{s.partition}", error))
                for s in request.partition_states
            ),
        )
        self.manager.on_stop_replica_response(broker, stop_replica_result(request, response))

    def states(self, topic: str = DOOMED) -> dict[tuple[int, int], ReplicaState]:
        return {
            (r.topic_partition.partition, r.replica): self.ctx.replica_state(r)
            for tp in self.ctx.partitions_of(topic)
            for r in self.ctx.replicas_for_partitions([tp])
        }

    def deletes_sent(self) -> dict[int, list[m.StopReplicaPartitionState]]:
        """StopReplica entries with delete, by broker (in send order)."""
        out: dict[int, list[m.StopReplicaPartitionState]] = {}
        for b, r in self.send.of_type(m.StopReplicaRequest):
            out.setdefault(b, []).extend(s for s in r.partition_states if s.delete_partition)
        return {b: s for b, s in out.items() if s}

    def kinds(self, kind: EventKind) -> list[dict[str, object]]:
        return self.events.of_kind(kind)

    def broker_fails(self, broker: int) -> None:
        """What `ActiveController.on_broker_failure` does for a queued topic's replicas."""
        self.ctx.remove_live_brokers([broker])
        self.manager.on_replicas_offline(self.ctx.replicas_on_brokers([broker]))

    def broker_starts(
        self, broker: int, rsm: ReplicaStateMachine, epoch: int | None = None
    ) -> None:
        """What `ActiveController.on_broker_startup` does for a queued topic's replicas."""
        self.ctx.add_live_brokers([make_broker(broker, epoch)])
        rsm.handle_state_changes(self.ctx.replicas_on_brokers([broker]), ReplicaState.ONLINE)
        self.manager.resume_deletion_for_topics([DOOMED])


def build_rig(
    enabled: bool = True, live: tuple[int, ...] = (1, 2, 3), doomed_reassigning: bool = False
) -> tuple[Rig, ReplicaStateMachine]:
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.epoch_zk_version = EPOCH_ZK_VERSION
    ctx.set_live_brokers(make_broker(b) for b in live)
    adding = (3,) if doomed_reassigning else ()
    ctx.add_topic(
        DOOMED,
        {0: ReplicaAssignment((1, 2, 3), adding), 1: ReplicaAssignment((2, 3, 1))},
    )
    ctx.add_topic("kept", {0: ReplicaAssignment((1, 2))})
    zk = FakePartitionZk(EPOCH_ZK_VERSION)
    for tp, leader, isr in ((D0, 1, (1, 2, 3)), (D1, 2, (2, 3, 1)), (K0, 1, (1, 2))):
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 4, isr, 7), EPOCH - 1)
        zk.put_state(tp, state, 7)
        ctx.set_leadership(tp, state)
        ctx.set_partition_state(tp, PartitionState.ONLINE)
        for r in ctx.replicas_for_partitions([tp]):
            online = r.replica in live
            ctx.set_replica_state(r, ReplicaState.ONLINE if online else ReplicaState.OFFLINE)
    dzk = FakeDeletionZk(EPOCH_ZK_VERSION, topics=[DOOMED, "kept"], configs=[DOOMED])
    send = RecordingSend()
    events = RecordingEventLog()
    batch = RequestBatch(CONTROLLER_ID, ctx, send, on_response_event=lambda event: None)
    psm = PartitionStateMachine(ctx, zk, batch, events)
    rsm = ReplicaStateMachine(ctx, zk, batch, events)
    clock = iter(float(i) for i in range(1000))
    manager = TopicDeletionManager(ctx, dzk, psm, rsm, batch, events, enabled, lambda: next(clock))
    return Rig(ctx, zk, dzk, send, events, manager), rsm


@pytest.fixture
def rig() -> Rig:
    return build_rig()[0]


def test_deletion_tells_every_broker_then_deletes_every_replica(rig: Rig) -> None:
    rig.request(DOOMED)
    assert rig.ctx.is_topic_queued_for_deletion(DOOMED)
    (requested,) = rig.kinds(EventKind.TOPIC_DELETION_REQUESTED)
    assert requested["topics"] == [DOOMED]
    assert requested["removed"] == []
    assert requested["source"] == "watch"
    assert requested["controller_epoch"] == EPOCH
    # partitions Offline -> NonExistent, and no leader is elected for them
    assert rig.ctx.partition_state(D0) is PartitionState.NON_EXISTENT
    assert rig.ctx.partition_state(D1) is PartitionState.NON_EXISTENT
    assert rig.zk.calls_to("create_partition_states") == []
    # every live broker learns that the topic is going: leader -2
    deleting = [
        (b, r)
        for b, r in rig.send.of_type(m.UpdateMetadataRequest)
        if any(s.topic == DOOMED for s in r.partition_states)
    ]
    assert sorted(b for b, _ in deleting) == [1, 2, 3]
    for _, request in deleting:
        assert {s.leader for s in request.partition_states} == {EPOCH_DURING_DELETE}
        assert request.header.controller_epoch == EPOCH
    # every replica: StopReplica without delete (Offline), then with delete (Started)
    assert {
        b: [s.topic_partition for s in entries] for b, entries in rig.deletes_sent().items()
    } == {
        1: [D0, D1],
        2: [D0, D1],
        3: [D0, D1],
    }
    for entries in rig.deletes_sent().values():
        assert {s.leader_epoch for s in entries} == {EPOCH_DURING_DELETE}
    first_delete = next(
        i
        for i, (_, r) in enumerate(rig.send.sent)
        if isinstance(r, m.StopReplicaRequest) and r.partition_states[0].delete_partition
    )
    told = [i for i, (_, r) in enumerate(rig.send.sent) if isinstance(r, m.UpdateMetadataRequest)]
    assert len(told) == 3
    assert max(told) < first_delete  # brokers stop serving it before its logs go
    assert rig.send.of_type(m.LeaderAndIsrRequest) == []
    assert set(rig.states().values()) == {S.DELETION_STARTED}
    (started,) = rig.kinds(EventKind.TOPIC_DELETION_STARTED)
    assert started == started | {
        "topic": DOOMED,
        "partitions": 2,
        "replicas": 6,
        "offline_replicas": 0,
        "retry": False,
        "controller_epoch": EPOCH,
    }
    # "kept" is untouched
    assert rig.ctx.partition_state(K0) is PartitionState.ONLINE
    assert rig.dzk.writes("delete_topic") == []


def test_the_topic_is_torn_down_once_every_replica_is_deleted(rig: Rig) -> None:
    rig.request(DOOMED)
    rig.answer(1)
    rig.answer(2)
    assert rig.dzk.writes("delete_topic") == []
    assert {s for (_, b), s in rig.states().items() if b in (1, 2)} == {S.DELETION_SUCCESSFUL}
    rig.answer(3)
    (write,) = rig.dzk.writes("delete_topic")
    assert write.topics == (DOOMED,)
    assert write.epoch_zk_version == EPOCH_ZK_VERSION
    assert DOOMED not in rig.dzk.topics
    assert DOOMED not in rig.dzk.configs
    assert DOOMED not in rig.dzk.requests
    assert DOOMED not in rig.ctx.all_topics()
    assert not rig.ctx.is_topic_queued_for_deletion(DOOMED)
    assert rig.ctx.replica_state(replica(D0, 1)) is S.NON_EXISTENT
    assert rig.ctx.leadership(D0) is None
    (completed,) = rig.kinds(EventKind.TOPIC_DELETION_COMPLETED)
    assert completed["topic"] == DOOMED
    assert completed["partitions"] == 2
    assert completed["controller_epoch"] == EPOCH
    assert isinstance(completed["duration_ms"], int)
    assert completed["duration_ms"] > 0
    assert rig.manager.queued_topics() == []
    assert "kept" in rig.ctx.all_topics()


def test_a_failed_replica_halts_the_topic_until_its_broker_starts_again() -> None:
    rig, rsm = build_rig()
    rig.request(DOOMED)
    rig.answer(1)
    rig.answer(2, p1=Errors.KAFKA_STORAGE_ERROR)
    assert rig.ctx.replica_state(replica(D1, 2)) is S.DELETION_INELIGIBLE
    assert rig.ctx.replica_state(replica(D0, 2)) is S.DELETION_SUCCESSFUL
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert halted["reason"] == REASON_DELETION_FAILURE
    assert halted["replicas"] == [[1, 2]]
    assert halted["errors"] == ["KAFKA_STORAGE_ERROR"]
    sent = len(rig.send.sent)
    rig.answer(3)
    assert rig.dzk.writes("delete_topic") == []  # not every replica is deleted
    # halted, not restarted; as in Kafka the failed replica goes back to Offline at once
    assert rig.ctx.replica_state(replica(D1, 2)) is S.OFFLINE
    assert [
        (b, [(s.topic_partition, s.delete_partition) for s in r.partition_states])
        for b, r in rig.send.sent[sent:]
        if isinstance(r, m.StopReplicaRequest)
    ] == [(2, [(D1, False)])]
    assert rig.manager.ineligible_topics() == [DOOMED]
    rig.send.clear()
    rig.broker_starts(2, rsm)
    # restarted: Offline -> Started, only for what is left
    assert {b: [s.topic_partition for s in e] for b, e in rig.deletes_sent().items()} == {2: [D1]}
    assert rig.kinds(EventKind.TOPIC_DELETION_STARTED)[-1]["retry"] is True
    rig.answer(2)
    assert DOOMED not in rig.ctx.all_topics()


def test_a_dead_broker_holds_the_deletion_until_it_returns() -> None:
    rig, rsm = build_rig(live=(1, 2))
    rig.request(DOOMED)
    # the live replicas go ahead, the dead ones wait
    assert set(rig.deletes_sent()) == {1, 2}
    assert rig.ctx.replica_state(replica(D0, 3)) is S.DELETION_INELIGIBLE
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert halted["reason"] == REASON_OFFLINE_REPLICAS
    assert halted["replicas"] == [[0, 3], [1, 3]]
    assert rig.kinds(EventKind.TOPIC_DELETION_STARTED)[0]["offline_replicas"] == 2
    rig.answer(1)
    rig.answer(2)
    assert rig.dzk.writes("delete_topic") == []
    assert DOOMED in rig.dzk.topics
    assert DOOMED in rig.dzk.requests
    rig.send.clear()
    rig.broker_starts(3, rsm)
    assert set(rig.deletes_sent()) == {3}
    rig.answer(3)
    assert DOOMED not in rig.ctx.all_topics()
    assert DOOMED not in rig.dzk.requests


def test_a_replica_on_a_failed_log_dir_is_not_deleted_and_holds_the_topic() -> None:
    """Kafka's `isReplicaOnline(replica, partition)`: a replica a live broker answered
    KAFKA_STORAGE_ERROR for (its log directory failed) counts as offline, like one on a
    dead broker: no StopReplica, ReplicaDeletionIneligible, the topic halted until the
    broker starts again."""
    rig, rsm = build_rig()
    rig.ctx.mark_replicas_offline(2, [D1])  # as the storage error's handling leaves it
    rig.ctx.set_replica_state(replica(D1, 2), S.OFFLINE)
    rig.request(DOOMED)
    assert {b: [s.topic_partition for s in e] for b, e in rig.deletes_sent().items()} == {
        1: [D0, D1],
        2: [D0],
        3: [D0, D1],
    }
    assert rig.ctx.replica_state(replica(D1, 2)) is S.DELETION_INELIGIBLE
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert (halted["reason"], halted["replicas"]) == (REASON_OFFLINE_REPLICAS, [[1, 2]])
    assert rig.kinds(EventKind.TOPIC_DELETION_STARTED)[0]["offline_replicas"] == 1
    for broker in (1, 2, 3):
        rig.answer(broker)
    assert DOOMED in rig.ctx.all_topics()
    rig.send.clear()
    rig.ctx.remove_live_brokers([2])  # it registers again, its log directory back
    rig.broker_starts(2, rsm)
    assert {b: [s.topic_partition for s in e] for b, e in rig.deletes_sent().items()} == {2: [D1]}
    rig.answer(2)
    assert DOOMED not in rig.ctx.all_topics()


def test_failover_halts_a_topic_with_a_replica_on_a_failed_log_dir(rig: Rig) -> None:
    rig.ctx.mark_replicas_offline(3, [D0])
    rig.dzk.requests.add(DOOMED)
    rig.manager.init([DOOMED])
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert (halted["reason"], halted["replicas"]) == (REASON_OFFLINE_REPLICAS, [[0, 3]])


def test_a_broker_failing_mid_deletion_fails_only_what_it_had_not_deleted() -> None:
    rig, rsm = build_rig()
    rig.request(DOOMED)
    rig.answer(1)
    rig.broker_fails(1)  # its replicas were deleted already: nothing to halt
    assert rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE) == []
    rig.broker_fails(2)
    assert rig.ctx.replica_state(replica(D0, 2)) is S.DELETION_INELIGIBLE
    assert rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)[0]["reason"] == REASON_OFFLINE_REPLICAS
    rig.answer(3)
    assert DOOMED in rig.ctx.all_topics()
    rig.send.clear()
    rig.broker_starts(2, rsm)
    assert set(rig.deletes_sent()) == {2}
    assert rig.kinds(EventKind.TOPIC_DELETION_STARTED)[-1]["offline_replicas"] == 0
    assert len(rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)) == 1  # broker 1 is not waited for
    rig.answer(2)
    assert DOOMED not in rig.ctx.all_topics()


def test_an_answer_meant_for_a_bounced_brokers_previous_life_does_not_count() -> None:
    """The deletion's first round reaches broker 2 after it bounced, at the epoch of its
    previous life; the controller handles the bounce (replicas offline and back, a second
    round at the new epoch) before the first round's STALE_BROKER_EPOCH answer. That answer
    fails nothing: the second round's answer completes the deletion."""
    rig, rsm = build_rig()
    rig.request(DOOMED)
    (first,) = [
        r
        for b, r in rig.send.of_type(m.StopReplicaRequest)
        if b == 2 and any(s.delete_partition for s in r.partition_states)
    ]
    assert first.header.broker_epoch == 102
    rig.answer(1)
    rig.answer(3)
    rig.broker_fails(2)
    rig.send.clear()
    rig.broker_starts(2, rsm, epoch=202)
    assert {b: [s.topic_partition for s in e] for b, e in rig.deletes_sent().items()} == {
        2: [D0, D1]
    }
    stale = m.StopReplicaResponse(Errors.STALE_BROKER_EPOCH, ())
    rig.manager.on_stop_replica_response(2, stop_replica_result(first, stale))
    assert rig.states()[(0, 2)] is S.DELETION_STARTED
    assert rig.manager.ineligible_topics() == []
    (outdated,) = rig.kinds(EventKind.TOPIC_DELETION_ANSWER_OUTDATED)
    assert outdated["broker"] == 2
    assert (outdated["addressed_epoch"], outdated["broker_epoch"]) == (102, 202)
    assert (outdated["topics"], outdated["partitions"]) == ([DOOMED], 2)
    assert outdated["errors"] == ["STALE_BROKER_EPOCH"]
    rig.answer(2)
    assert DOOMED not in rig.ctx.all_topics()


def test_a_bounce_seen_after_its_stale_answer_resumes_the_deletion() -> None:
    """The other order: broker 2 bounced, but the controller has not seen it yet when the
    first round's STALE_BROKER_EPOCH answer arrives (addressed to the epoch it still
    knows), so the answer counts and halts the topic. The bounce, once seen, takes the
    replicas offline and back and resumes the deletion, whose second round completes it."""
    rig, rsm = build_rig()
    rig.request(DOOMED)
    rig.answer(1)
    rig.answer(3)
    rig.answer(2, Errors.STALE_BROKER_EPOCH)
    assert rig.manager.ineligible_topics() == [DOOMED]
    rig.broker_fails(2)
    rig.send.clear()
    rig.broker_starts(2, rsm, epoch=202)
    assert rig.manager.ineligible_topics() == []
    assert {b: [s.topic_partition for s in e] for b, e in rig.deletes_sent().items()} == {
        2: [D0, D1]
    }
    rig.answer(2)
    assert DOOMED not in rig.ctx.all_topics()


def test_an_answer_at_the_current_epoch_still_fails_its_replicas(rig: Rig) -> None:
    """Only an answer to an older broker epoch is set aside: a broker that refuses a
    request at the epoch the controller knows (bug switch `kafka-9839`) still halts the
    topic."""
    rig.request(DOOMED)
    rig.answer(2, Errors.STALE_BROKER_EPOCH)
    assert rig.manager.ineligible_topics() == [DOOMED]
    assert rig.kinds(EventKind.TOPIC_DELETION_ANSWER_OUTDATED) == []


def test_late_and_repeated_answers_change_nothing(rig: Rig) -> None:
    rig.request(DOOMED)
    rig.answer(1)
    before = len(rig.events.events)
    rig.answer(1)  # again
    rig.manager.on_stop_replica_response(
        1, StopReplicaResult(Errors.NONE, {K0: Errors.NONE})
    )  # not a topic being deleted
    assert len(rig.events.events) == before
    assert rig.ctx.replica_state(replica(D0, 1)) is S.DELETION_SUCCESSFUL


def test_a_topic_being_reassigned_is_not_deleted() -> None:
    rig, _ = build_rig(doomed_reassigning=True)
    rig.request(DOOMED)
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert halted["reason"] == REASON_REASSIGNMENT
    assert rig.send.sent == []
    rig.manager.resume_deletion_for_topics([DOOMED])  # e.g. a broker started
    assert rig.send.sent == []
    assert rig.ctx.partition_state(D0) is PartitionState.ONLINE


def test_a_request_for_an_unknown_topic_is_removed(rig: Rig) -> None:
    rig.request("ghost")
    (write,) = rig.dzk.writes("delete_topic_deletions")
    assert write.topics == ("ghost",)
    assert write.epoch_zk_version == EPOCH_ZK_VERSION
    assert rig.dzk.requests == set()
    (requested,) = rig.kinds(EventKind.TOPIC_DELETION_REQUESTED)
    assert requested["unknown"] == ["ghost"]
    assert requested["topics"] == []
    assert rig.send.sent == []


def test_with_deletion_disabled_requests_are_only_removed() -> None:
    rig, _ = build_rig(enabled=False)
    rig.request(DOOMED)
    assert rig.dzk.requests == set()
    assert not rig.ctx.is_topic_queued_for_deletion(DOOMED)
    assert rig.send.sent == []
    assert rig.kinds(EventKind.TOPIC_DELETION_REQUESTED)[0]["enabled"] is False
    assert DOOMED in rig.dzk.topics


def test_failover_halts_topics_with_offline_replicas_and_drops_unknown_requests() -> None:
    rig, _ = build_rig(live=(1, 2))
    rig.dzk.requests.update({DOOMED, "ghost"})
    rig.manager.init(sorted(rig.dzk.requests))
    assert rig.dzk.requests == {DOOMED}
    assert rig.ctx.is_topic_queued_for_deletion(DOOMED)
    (requested,) = rig.kinds(EventKind.TOPIC_DELETION_REQUESTED)
    assert requested["source"] == "failover"
    (halted,) = rig.kinds(EventKind.TOPIC_DELETION_INELIGIBLE)
    assert halted["reason"] == REASON_OFFLINE_REPLICAS
    rig.manager.try_topic_deletion()
    assert rig.send.sent == []


def test_failover_resumes_an_eligible_deletion(rig: Rig) -> None:
    rig.dzk.requests.add(DOOMED)
    rig.manager.init([DOOMED])
    assert rig.send.sent == []  # nothing before the state machines start
    rig.manager.try_topic_deletion()
    assert set(rig.deletes_sent()) == {1, 2, 3}


def test_a_failed_epoch_check_leaves_the_context_untouched(rig: Rig) -> None:
    rig.request(DOOMED)
    rig.answer(1)
    rig.answer(2)
    rig.dzk.epoch_zk_version = EPOCH_ZK_VERSION + 1  # another controller was elected
    with pytest.raises(ControllerMovedError):
        rig.answer(3)
    assert DOOMED in rig.ctx.all_topics()
    assert DOOMED in rig.dzk.topics
    assert rig.kinds(EventKind.TOPIC_DELETION_COMPLETED) == []


def test_a_znode_that_cannot_be_removed_keeps_the_topic_queued(rig: Rig) -> None:
    rig.request(DOOMED)
    rig.dzk.fail_next_removal(paths.topic(DOOMED), NotEmptyError())
    for broker in (1, 2, 3):
        rig.answer(broker)
    (failed,) = rig.kinds(EventKind.TOPIC_DELETION_FAILED)
    assert failed["failed"] == {paths.topic(DOOMED): "NotEmptyError"}
    assert rig.ctx.is_topic_queued_for_deletion(DOOMED)
    assert set(rig.states().values()) == {S.DELETION_SUCCESSFUL}
    rig.manager.resume_deletions()
    assert DOOMED not in rig.ctx.all_topics()
    assert DOOMED not in rig.dzk.topics
    assert len(rig.kinds(EventKind.TOPIC_DELETION_COMPLETED)) == 1


# -- the active controller's wiring -----------------------------------------------------------


@pytest.fixture
def active() -> Iterator[
    tuple[ActiveController, queue.Queue[tuple[str, ev.ControllerEvent]], FakeChannels]
]:
    enqueued: queue.Queue[tuple[str, ev.ControllerEvent]] = queue.Queue()
    ctx = ControllerContext()
    ctx.epoch = EPOCH
    ctx.set_live_brokers([make_broker(1)])
    ctx.add_topic(DOOMED, {0: ReplicaAssignment((1,)), 1: ReplicaAssignment((1,))})
    ctx.queue_topic_deletion([DOOMED])
    channels = FakeChannels()
    controller = ActiveController(
        CONTROLLER_ID,
        ctx,
        cast(KafkaZkClient, SimpleNamespace(kazoo=None)),  # never called by these tests
        RecordingEventLog(),
        Watchers(lambda e: enqueued.put((threading.current_thread().name, e))),
        ControllerConfig(),
        channels,
    )
    controller.channels.startup(ctx.live_brokers())
    yield controller, enqueued, channels
    controller.on_resignation()


def test_a_deleting_stop_replica_answer_only_enqueues_an_event_from_the_sender_thread(
    active: tuple[ActiveController, queue.Queue[tuple[str, ev.ControllerEvent]], FakeChannels],
) -> None:
    controller, enqueued, _ = active
    controller.ctx.queue_topic_deletion([DOOMED])
    controller.ctx.begin_topic_deletion([DOOMED])
    controller.batch.new_batch()
    controller.batch.add_stop_replica([1], D0, delete=True)
    controller.batch.add_stop_replica([1], D1, delete=False)
    controller.batch.send()
    thread, event = enqueued.get(timeout=5)
    assert thread == "controller-to-broker-1-send-thread"
    assert event == ev.TopicDeletionStopReplicaResponseReceived(
        1, StopReplicaResult(Errors.NONE, {D0: Errors.NONE}, controller.ctx.broker_epoch(1))
    )
    assert controller.ctx.replica_state(replica(D0, 1)) is S.NON_EXISTENT  # untouched


def test_a_stop_replica_without_delete_enqueues_nothing(
    active: tuple[ActiveController, queue.Queue[tuple[str, ev.ControllerEvent]], FakeChannels],
) -> None:
    controller, enqueued, channels = active
    controller.batch.new_batch()
    controller.batch.add_stop_replica([1], D0, delete=False)
    controller.batch.send()
    wait_until(lambda: channels.by_broker[1].requests(), 5, "StopReplica was not answered")
    controller.on_resignation()  # joins the sender: a callback would have run by now
    assert enqueued.empty()
