"""The scenario-specific invariants: no partition offline, a superseded controller resigns,
a resigned controller sends nothing of its epoch, a started reassignment completes; each
on logs that break it (naming the events) and logs that keep it, and only over the events
since the run started."""

from __future__ import annotations

import dataclasses

import pytest

from eventlog import (
    BrokerChange,
    ControllerElected,
    ControllerResigned,
    ControlRequestSent,
    ControlResponseReceived,
    IsrChanged,
    LeaderElectionFailed,
    NodeStarted,
    PartitionStateChange,
    ReassignmentCompleted,
    ReassignmentFailed,
    ReassignmentRejected,
    ReassignmentStarted,
    RequestAccepted,
    RequestRejected,
    TopicDeletionCompleted,
    TopicDeletionFailed,
    TopicDeletionRequested,
)
from eventlog import EventKind as K
from rundir.checker import QUEUE_CLASSES
from rundir.invariants import RunInputs, judge
from rundir.invariants.controller_handover import (
    DELIVERY_GRACE_MS,
    SUPERSEDED_GRACE_MS,
    controller_writes_fenced,
    paused_controller_resigns,
    resigned_controller_silent,
)
from rundir.invariants.names import (
    NO_OFFLINE_PARTITIONS,
    PAUSED_CONTROLLER_RESIGNS,
    REASSIGNMENT_COMPLETES,
    RESIGNED_CONTROLLER_SILENT,
)
from rundir.invariants.scenario_checks import (
    no_offline_partitions,
    reassignment_completes,
    topic_deletion_completes,
)
from rundir.invariants.testing import EventLogBuilder


def test_a_partition_moved_offline_breaks_no_offline_partitions() -> None:
    b = EventLogBuilder()
    b.emit(
        "broker1", PartitionStateChange(target="OnlinePartition", partitions=6, failed=0, topics=[])
    )
    offline = PartitionStateChange(target="OfflinePartition", partitions=2, failed=0, topics=[])
    bad = b.emit("broker1", offline)
    result = no_offline_partitions(b.logs(), 0)
    assert [v.events for v in result.violations] == [(bad,)]
    assert result.checked == 2


def test_offline_partitions_before_the_run_do_not_count() -> None:
    b = EventLogBuilder()
    b.emit(
        "broker1",
        PartitionStateChange(target="OfflinePartition", partitions=2, failed=0, topics=[]),
    )
    start = b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk")).ts + 1
    b.emit(
        "broker1", PartitionStateChange(target="OnlinePartition", partitions=2, failed=0, topics=[])
    )
    assert no_offline_partitions(b.logs(), start).ok


def test_a_failed_election_breaks_no_offline_partitions() -> None:
    b = EventLogBuilder()
    e = b.emit(
        "broker2",
        LeaderElectionFailed(
            topic="t", partition=3, reason="no eligible leader", controller_epoch=1
        ),
    )
    (violation,) = no_offline_partitions(b.logs(), 0).violations
    assert violation.subject == "t-3"
    assert violation.events == (e,)


def _elected(b: EventLogBuilder, broker: int, epoch: int) -> None:
    b.emit(
        f"broker{broker}",
        ControllerElected(
            controller_id=broker, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
        ),
    )


def test_a_superseded_controller_that_resigns_keeps_the_invariant() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 1)
    _elected(b, 2, 2)
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=1, reason="test"))
    result = paused_controller_resigns(b.logs(), 0)
    assert result.ok
    assert result.checked == 1


def test_a_superseded_controller_that_never_resigns_is_named() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 1)
    _elected(b, 2, 2)
    b.emit(
        "broker1", BrokerChange(live=[1, 2, 3], new=[], dead=[], bounced=[], epochs={})
    )  # alive, still acting
    (violation,) = paused_controller_resigns(b.logs(), 0).violations
    assert violation.subject == "controller epoch 1"
    assert "broker 1 was superseded by broker 2" in violation.explanation


def test_a_controller_whose_process_died_need_not_resign() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 1)
    _elected(b, 2, 2)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk"))
    assert paused_controller_resigns(b.logs(), 0).ok


def _reassignment_started(partition: int) -> ReassignmentStarted:
    return ReassignmentStarted(
        topic="t",
        partition=partition,
        target=[2, 3],
        origin=[],
        adding=[],
        removing=[],
        resumed=False,
        controller_epoch=1,
    )


def test_a_reassignment_that_completes_keeps_the_invariant() -> None:
    b = EventLogBuilder()
    b.emit(
        "broker1",
        _reassignment_started(0),
    )
    b.emit(
        "broker2",
        ReassignmentCompleted(
            topic="t", partition=0, replicas=[2, 3], removed=[], leader=1, controller_epoch=1
        ),
    )
    assert reassignment_completes(b.logs(), 0, {"t"}).ok


def test_a_reassignment_left_unfinished_or_never_run_is_a_violation() -> None:
    b = EventLogBuilder()
    started = b.emit(
        "broker1",
        _reassignment_started(1),
    )
    (violation,) = reassignment_completes(b.logs(), 0, {"t"}).violations
    assert violation.events == (started,)
    (none_ran,) = reassignment_completes(b.logs(), 0, {"other"}).violations
    assert "no reassignment" in none_ran.explanation


def _reassignment_failed(epoch: int) -> ReassignmentFailed:
    return ReassignmentFailed(
        topic="t",
        partition=0,
        target=[2, 3],
        reason="state znode written by another controller (epoch 2, this controller's is 1)",
        controller_epoch=epoch,
    )


@pytest.mark.parametrize("completed", [True, False])
def test_a_failure_of_a_superseded_controller_leaves_the_work_to_its_successor(
    completed: bool,
) -> None:
    """A soak's run: controller epoch 1, fenced by its successor mid-reassignment, failed
    the partition's epoch bump after epoch 2 had resumed the reassignment, which epoch 2
    completed. The failure was epoch 1's lost term, not the reassignment's; epoch 2 must
    still complete it."""
    b = EventLogBuilder()
    b.emit("broker1", _reassignment_started(0))
    b.emit("broker2", dataclasses.replace(_reassignment_started(0), controller_epoch=2))
    b.emit("broker1", _reassignment_failed(1))
    if completed:
        b.emit(
            "broker2",
            ReassignmentCompleted(
                topic="t", partition=0, replicas=[2, 3], removed=[], leader=2, controller_epoch=2
            ),
        )
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert result.ok is completed
    assert [v.explanation for v in result.violations] == (
        [] if completed else ["started and never completed"]
    )


def test_a_failure_no_newer_controller_took_over_is_a_violation() -> None:
    b = EventLogBuilder()
    b.emit("broker1", _reassignment_started(0))
    failed = b.emit("broker1", _reassignment_failed(1))
    b.emit(
        "broker1",
        ReassignmentCompleted(
            topic="t", partition=0, replicas=[2, 3], removed=[], leader=2, controller_epoch=1
        ),
    )
    (violation,) = reassignment_completes(b.logs(), 0, {"t"}).violations
    assert violation.events == (failed,)
    assert violation.explanation.startswith("reassignment failed: state znode written")


def test_a_reassignment_the_controller_refused_ran_its_course() -> None:
    # a blind hunt's run: slowed by latency, the controller handled the side topic's
    # deletion request before its reassignment, and refused the reassignment, as Kafka's does
    b = EventLogBuilder()
    for partition in range(3):
        b.emit(
            "broker2",
            ReassignmentRejected(
                topic="t-side",
                partition=partition,
                target=[1, 2],
                error="UNKNOWN_TOPIC_OR_PARTITION",
                reason="topic t-side is being deleted",
                controller_epoch=11,
            ),
        )
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert result.ok, result.violations
    assert result.checked == 3


def test_a_reassignment_of_a_topic_beside_the_runs_counts() -> None:
    started = dataclasses.replace(_reassignment_started(0), topic="t-side")
    done = ReassignmentCompleted(
        topic="t-side", partition=0, replicas=[2, 3], removed=[], leader=2, controller_epoch=1
    )
    unfinished = EventLogBuilder()
    unfinished.emit("broker1", started)
    (violation,) = reassignment_completes(unfinished.logs(), 0, {"t"}).violations
    assert violation.subject == "t-side-0"
    finished = EventLogBuilder()
    finished.emit("broker1", started)
    finished.emit("broker2", done)
    assert reassignment_completes(finished.logs(), 0, {"t"}).ok
    (none_ran,) = reassignment_completes(finished.logs(), 0, {"t-s"}).violations
    assert "no reassignment" in none_ran.explanation


def test_a_reassignment_whose_topic_was_deleted_after_it_ended_with_it() -> None:
    # a blind hunt's fixed-build run: the controller lost its session as it finished a
    # side topic's reassignment (its writes applied, its event never written); the next
    # controller found nothing in flight and deleted the topic
    started = dataclasses.replace(_reassignment_started(0), topic="t-side")
    gone = TopicDeletionCompleted(topic="t-side", partitions=3, duration_ms=10, controller_epoch=2)
    b = EventLogBuilder()
    b.emit("broker3", started)
    b.emit("broker2", gone)
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert result.ok, result.violations
    # a deletion before the reassignment started does not end it
    early = EventLogBuilder()
    early.emit("broker2", gone)
    early.emit("broker3", started)
    (violation,) = reassignment_completes(early.logs(), 0, {"t"}).violations
    assert violation.explanation == "started and never completed"
    # nor does the deletion of another topic
    other = EventLogBuilder()
    other.emit("broker3", started)
    other.emit("broker2", dataclasses.replace(gone, topic="t-other"))
    assert not reassignment_completes(other.logs(), 0, {"t"}).ok


def test_judge_runs_the_scenario_invariants_it_is_asked_for() -> None:
    b = EventLogBuilder()
    _elected(b, 1, 1)
    also = frozenset({NO_OFFLINE_PARTITIONS, PAUSED_CONTROLLER_RESIGNS, REASSIGNMENT_COMPLETES})
    verdict = judge(RunInputs(b.logs(), also=also, topics=("t",)))
    names = [r.name for r in verdict.results]
    assert names[-3 - len(QUEUE_CLASSES) : -len(QUEUE_CLASSES)] == sorted(also)
    assert not verdict.result(REASSIGNMENT_COMPLETES).ok  # nothing was reassigned
    with pytest.raises(ValueError, match="no such scenario invariant: nope"):
        judge(RunInputs(b.logs(), also=frozenset({"nope"})))


def test_a_controller_elected_before_the_run_and_superseded_during_it_is_checked() -> None:
    b = EventLogBuilder()
    _elected(b, 2, 3)
    start = (
        b.emit("broker1", BrokerChange(live=[1, 2, 3], new=[], dead=[], bounced=[], epochs={})).ts
        + 1
    )
    _elected(b, 3, 4)
    (violation,) = paused_controller_resigns(b.logs(), start).violations
    assert violation.subject == "controller epoch 3"
    b.emit("broker2", ControllerResigned(controller_id=2, controller_epoch=3, reason="test"))
    result = paused_controller_resigns(b.logs(), start)
    assert result.ok
    assert result.checked == 1


def test_offline_partitions_of_other_topics_do_not_count_when_topics_are_given() -> None:
    b = EventLogBuilder()
    offline = PartitionStateChange(target="OfflinePartition", partitions=1, failed=0, topics=[])
    b.emit("broker1", dataclasses.replace(offline, topics=["old-run"]))
    b.emit(
        "broker1",
        LeaderElectionFailed(topic="old-run", partition=1, reason="none", controller_epoch=1),
    )
    assert no_offline_partitions(b.logs(), 0, {"this-run"}).ok
    ours = b.emit("broker1", dataclasses.replace(offline, topics=["this-run"]))
    (violation,) = no_offline_partitions(b.logs(), 0, {"this-run"}).violations
    assert violation.events == (ours,)
    assert len(no_offline_partitions(b.logs(), 0).violations) == 3


def _sent(b: EventLogBuilder, node: str, epoch: int) -> None:
    b.emit(
        node,
        ControlRequestSent(
            api="UpdateMetadata", broker_id=2, controller_epoch=epoch, broker_epoch=10, partitions=1
        ),
    )


def test_a_resigned_controller_that_goes_on_sending_is_named() -> None:
    b = EventLogBuilder()
    _sent(b, "broker1", 3)
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    _sent(b, "broker1", 3)
    result = resigned_controller_silent(b.logs(), 0)
    (violation,) = result.violations
    assert result.checked == 2
    assert violation.subject == "broker1 controller epoch 3"
    assert "after the controller resigned epoch 3" in violation.explanation
    assert [e.kind for e in violation.events] == ["controller_resigned", "control_request_sent"]


def test_sends_of_a_later_epoch_or_a_new_process_keep_the_controller_silent() -> None:
    b = EventLogBuilder()
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    _sent(b, "broker1", 5)  # elected again, later epoch
    b.emit("broker2", ControllerResigned(controller_id=2, controller_epoch=4, reason="test"))
    b.emit("broker2", NodeStarted(broker_id=2, zk_connect="zk"))
    _sent(b, "broker2", 4)  # a new process: its own history
    result = resigned_controller_silent(b.logs(), 0)
    assert result.ok
    assert result.checked == 2


def test_sends_before_the_run_do_not_count_for_the_silent_controller() -> None:
    b = EventLogBuilder()
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    late = b.emit(
        "broker1",
        ControlRequestSent(
            api="LeaderAndIsr", controller_epoch=3, broker_id=1, broker_epoch=0, partitions=0
        ),
    )
    assert not resigned_controller_silent(b.logs(), 0).ok
    assert resigned_controller_silent(b.logs(), late.ts + 1).ok
    inputs = RunInputs(b.logs(), also=frozenset({RESIGNED_CONTROLLER_SILENT}))
    assert not judge(inputs).result(RESIGNED_CONTROLLER_SILENT).ok


def _arrived(b: EventLogBuilder, broker: str, kind: K, controller: int, epoch: int) -> None:
    api = "UpdateMetadata"
    if kind == K.REQUEST_ACCEPTED:
        b.emit(
            broker,
            RequestAccepted(
                api=api,
                controller_id=controller,
                controller_epoch=epoch,
                request_broker_epoch=-1,
                broker_epoch=0,
                partitions=0,
                partition_errors=0,
            ),
        )
    else:
        b.emit(
            broker,
            RequestRejected(
                api=api,
                controller_id=controller,
                controller_epoch=epoch,
                error="STALE_CONTROLLER_EPOCH",
                error_code=11,
                request_broker_epoch=-1,
                broker_epoch=0,
                highest_controller_epoch=epoch + 1,
            ),
        )


def test_a_request_of_a_resigned_epoch_reaching_a_broker_late_is_named() -> None:
    b = EventLogBuilder()
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    _arrived(b, "broker2", K.REQUEST_ACCEPTED, 1, 3)  # still being handled: within the grace
    b.advance(DELIVERY_GRACE_MS)
    _arrived(b, "broker2", K.REQUEST_REJECTED, 1, 2)  # queued before, delivered later
    _arrived(b, "broker3", K.REQUEST_ACCEPTED, 2, 3)  # another controller's
    b.emit(  # and the resigned controller still hears back: it kept its channel
        "broker1",
        ControlResponseReceived(
            api="UpdateMetadata",
            broker_id=2,
            controller_epoch=2,
            error="STALE_CONTROLLER_EPOCH",
            partition_errors=0,
        ),
    )
    result = resigned_controller_silent(b.logs(), 0)
    (violation,) = result.violations
    assert result.checked == 3
    assert violation.subject == "broker1 controller epoch 2"
    assert "reached broker2 (refused)" in violation.explanation
    assert "after the controller resigned epoch 3" in violation.explanation
    assert "it kept a channel" in violation.explanation
    assert [e.kind for e in violation.events] == [
        "controller_resigned",
        "request_rejected",
        "control_response_received",
    ]


def test_a_late_arrival_the_resigned_controller_never_hears_of_is_the_network_s() -> None:
    """A request written before the resignation to a connection a cut had silenced: TCP
    delivers it when the cut heals, after the controller closed the channel, so no answer
    comes back to it."""
    b = EventLogBuilder()
    b.emit("broker3", ControllerResigned(controller_id=3, controller_epoch=39, reason="test"))
    b.advance(42_500)
    _arrived(b, "broker2", K.REQUEST_REJECTED, 3, 39)
    result = resigned_controller_silent(b.logs(), 0)
    assert result.ok
    assert result.checked == 1


def test_late_requests_of_a_newer_epoch_or_a_restarted_controller_are_fine() -> None:
    b = EventLogBuilder()
    b.emit("broker1", ControllerResigned(controller_id=1, controller_epoch=3, reason="test"))
    b.emit("broker2", ControllerResigned(controller_id=2, controller_epoch=4, reason="test"))
    b.emit("broker2", NodeStarted(broker_id=2, zk_connect="zk"))
    b.advance(DELIVERY_GRACE_MS)
    _arrived(b, "broker3", K.REQUEST_ACCEPTED, 1, 5)  # broker 1 elected again later
    _arrived(b, "broker3", K.REQUEST_ACCEPTED, 2, 4)  # broker 2's new process
    assert resigned_controller_silent(b.logs(), 0).ok


def _deletion_requested(b: EventLogBuilder, node: str, *topics: str) -> None:
    b.emit(
        node,
        TopicDeletionRequested(
            topics=list(topics),
            removed=[],
            source="watch",
            unknown=[],
            enabled=True,
            controller_epoch=1,
        ),
    )


def test_a_deletion_completed_by_the_next_controller_keeps_the_invariant() -> None:
    b = EventLogBuilder()
    _deletion_requested(b, "broker1", "run-t-doomed", "someone-elses")
    b.emit(
        "broker2",
        TopicDeletionCompleted(
            topic="run-t-doomed", partitions=3, duration_ms=None, controller_epoch=1
        ),
    )
    result = topic_deletion_completes(b.logs(), 0, ("run-t",))
    assert result.ok
    assert result.checked == 1


def test_a_deletion_left_pending_or_half_done_is_named() -> None:
    b = EventLogBuilder()
    _deletion_requested(b, "broker1", "run-t-a", "run-t-b")
    failed = b.emit(
        "broker2",
        TopicDeletionFailed(
            topic="run-t-b", failed={"/brokers/topics/run-t-b": "NotEmptyError"}, controller_epoch=1
        ),
    )
    result = topic_deletion_completes(b.logs(), 0, ("run-t",))
    pending, half = result.violations
    assert (pending.subject, pending.explanation) == (
        "run-t-a",
        "deletion requested and never completed",
    )
    assert half.subject == "run-t-b"
    assert half.explanation == "left half-deleted: /brokers/topics/run-t-b not removed"
    assert half.events[-1] == failed


def test_no_deletion_requested_during_the_run_is_a_violation() -> None:
    b = EventLogBuilder()
    _deletion_requested(b, "broker1", "run-t-doomed")
    start = b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk")).ts
    (violation,) = topic_deletion_completes(b.logs(), start, ("run-t",)).violations
    assert violation.explanation == "the run asked for their deletion and no controller took it up"


def _won(b: EventLogBuilder, node: str, controller: int, epoch: int) -> None:
    b.emit(
        node,
        ControllerElected(
            controller_id=controller, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=None
        ),
    )


def _superseded_then_past_the_grace() -> EventLogBuilder:
    """Broker 1 controller at epoch 4, broker 3 elected with 5, a write of broker 1 just
    after (within the grace), then the grace over."""
    b = EventLogBuilder()
    _won(b, "broker1", 1, 4)
    _won(b, "broker3", 3, 5)
    b.leader_elected("broker1", 0, leader=2, leader_epoch=3, zk_version=3, controller_epoch=4)
    b.advance(SUPERSEDED_GRACE_MS)
    return b


def test_a_write_of_a_superseded_controller_landing_late_is_named() -> None:
    b = _superseded_then_past_the_grace()
    late = b.emit(
        "broker1",
        IsrChanged(
            topic="t",
            partition=1,
            reason="replica offline",
            by="controller",
            leader=3,
            leader_epoch=2,
            isr=[3],
            zk_version=4,
            controller_epoch=4,
        ),
    )
    b.leader_elected("broker3", 2, leader=3, leader_epoch=4, zk_version=5, controller_epoch=5)
    result = controller_writes_fenced(b.logs(), 0)
    (violation,) = result.violations
    assert result.checked == 3
    assert violation.subject == "broker1 controller epoch 4"
    assert "was elected with epoch 5" in violation.explanation
    assert violation.events[-1] == late


def test_writes_within_the_grace_or_of_a_leader_keep_controller_writes_fenced() -> None:
    b = _superseded_then_past_the_grace()
    b.leader_isr_changed("broker2", 1, leader=2, leader_epoch=1, zk_version=2)  # a leader's
    b.leader_elected("broker3", 2, leader=3, leader_epoch=4, zk_version=5, controller_epoch=5)
    result = controller_writes_fenced(b.logs(), 0)
    assert result.ok
    assert result.checked == 2


def _won_at(b: EventLogBuilder, node: str, controller: int, epoch: int, zxid: int) -> None:
    b.emit(
        node,
        ControllerElected(
            controller_id=controller, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=zxid
        ),
    )


def test_a_write_committed_after_the_epoch_bump_is_named_however_soon_it_is_logged() -> None:
    """Broker 3 bumps the epoch to 5 at zxid 0x200; broker 1's write at epoch 4 committed
    at 0x201, logged 1 ms later: the clock's grace would pass it, ZooKeeper's order does
    not."""
    b = EventLogBuilder()
    _won_at(b, "broker1", 1, 4, 0x100)
    b.leader_elected("broker1", 0, 2, 3, 3, controller_epoch=4, zxid=0x1FF)  # before the bump
    _won_at(b, "broker3", 3, 5, 0x200)
    late = b.leader_elected("broker1", 1, 2, 4, 4, controller_epoch=4, zxid=0x201)
    b.leader_elected("broker3", 2, 3, 4, 5, controller_epoch=5, zxid=0x202)
    result = controller_writes_fenced(b.logs(), 0)
    (violation,) = result.violations
    assert result.checked == 3
    assert violation.subject == "broker1 controller epoch 4"
    assert "committed at zxid 0x201, after broker 3 won epoch 5 at zxid 0x200" in (
        violation.explanation
    )
    assert violation.events[-1] == late
    assert result.note == "3 of 3 writes carry the zxid they committed at"


def test_a_write_committed_before_the_bump_keeps_controller_writes_fenced_if_logged_late() -> None:
    """ZooKeeper's order overrides the clock: a write that committed before the epoch bump
    was fenced correctly even when its event is logged well past the grace."""
    b = EventLogBuilder()
    _won_at(b, "broker1", 1, 4, 0x100)
    _won_at(b, "broker3", 3, 5, 0x200)
    b.advance(SUPERSEDED_GRACE_MS * 3)
    b.leader_elected("broker1", 0, 2, 3, 3, controller_epoch=4, zxid=0x1FF)
    result = controller_writes_fenced(b.logs(), 0)
    assert result.ok
    assert result.checked == 1


def test_without_an_epoch_zxid_the_clock_still_judges_controller_writes_fenced() -> None:
    """An election logged without `epoch_zxid` (an older log) falls back to the grace: a
    write within it passes, one past it is named, whatever its own zxid."""
    b = EventLogBuilder()
    _won(b, "broker1", 1, 4)
    _won(b, "broker3", 3, 5)
    b.leader_elected("broker1", 0, 2, 3, 3, controller_epoch=4, zxid=0x1FF)
    b.advance(SUPERSEDED_GRACE_MS)
    late = b.leader_elected("broker1", 1, 2, 4, 4, controller_epoch=4, zxid=0x180)
    result = controller_writes_fenced(b.logs(), 0)
    (violation,) = result.violations
    assert violation.events[-1] == late
    assert "was elected with epoch 5" in violation.explanation
    assert result.checked == 2
