"""Kafka 2.x's deletion-reassignment deadlock recognised in a run's events: the stalled
reassignment and deletion it explains are allowed, anything else still fails."""

from __future__ import annotations

from controller.deletion_decisions import REASON_REASSIGNMENT as CONTROLLER_REASON
from eventlog import (
    IsrChanged,
    LeaderElected,
    ReassignmentCompleted,
    ReassignmentStarted,
    TopicDeletionIneligible,
    TopicDeletionRequested,
)
from rundir.events import events_since
from rundir.invariants.deletion_deadlock import REASON_REASSIGNMENT, deadlocked
from rundir.invariants.scenario_checks import reassignment_completes, topic_deletion_completes
from rundir.invariants.testing import EventLogBuilder


def _started(b: EventLogBuilder, topic: str = "t-side", partition: int = 0) -> None:
    b.emit(
        "broker2",
        ReassignmentStarted(
            topic=topic,
            partition=partition,
            origin=[2, 3],
            target=[1, 2],
            adding=[1],
            removing=[3],
            resumed=False,
            controller_epoch=4,
        ),
    )


def _leader_removed(b: EventLogBuilder, topic: str = "t-side", partition: int = 0) -> None:
    b.emit(
        "broker2",
        IsrChanged(
            topic=topic,
            partition=partition,
            reason="replica offline",
            by="controller",
            replica=1,
            leader=-1,
            leader_epoch=7,
            isr=[1],
            zk_version=9,
            zxid=None,
            controller_epoch=4,
        ),
    )


def _queued(b: EventLogBuilder, topic: str = "t-side") -> None:
    b.emit(
        "broker3",
        TopicDeletionRequested(
            topics=[topic],
            removed=[],
            unknown=[],
            enabled=True,
            source="watch",
            controller_epoch=5,
        ),
    )


def _halted(b: EventLogBuilder, reason: str = REASON_REASSIGNMENT, topic: str = "t-side") -> None:
    b.emit(
        "broker3",
        TopicDeletionIneligible(
            topic=topic, reason=reason, replicas=[], errors=[], controller_epoch=5
        ),
    )


def _deadlock() -> EventLogBuilder:
    b = EventLogBuilder()
    _started(b)
    _leader_removed(b)
    _queued(b)
    _halted(b)
    return b


def test_the_reason_is_the_controllers_own() -> None:
    assert REASON_REASSIGNMENT == CONTROLLER_REASON


def test_a_leaderless_reassigned_partition_of_a_halted_deletion_is_the_deadlock() -> None:
    b = _deadlock()
    assert deadlocked(events_since(b.logs(), 0)) == {"t-side"}
    for check in (reassignment_completes, topic_deletion_completes):
        result = check(b.logs(), 0, {"t"})
        assert result.status() == "allowed", result
        assert "deadlock" in result.violations[0].explanation


def test_a_partition_with_a_leader_is_not_the_deadlock() -> None:
    b = _deadlock()
    b.emit(
        "broker3",
        LeaderElected(
            topic="t-side",
            partition=0,
            leader=2,
            leader_epoch=8,
            isr=[2],
            zk_version=10,
            zxid=None,
            controller_epoch=5,
            strategy="offline",
            unclean=False,
        ),
    )
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert not result.ok
    assert result.violations[0].explanation == "started and never completed"


def test_a_deletion_halted_for_another_reason_is_not_the_deadlock() -> None:
    b = EventLogBuilder()
    _started(b)
    _leader_removed(b)
    _queued(b)
    _halted(b)
    _halted(b, reason="offline replicas")
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()
    assert not topic_deletion_completes(b.logs(), 0, {"t"}).ok


def test_a_completed_reassignment_or_deletion_ends_it() -> None:
    b = _deadlock()
    b.emit(
        "broker3",
        ReassignmentCompleted(
            topic="t-side", partition=0, replicas=[1, 2], removed=[3], leader=1, controller_epoch=5
        ),
    )
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()


def test_other_stalls_still_fail_and_the_note_counts_the_explained() -> None:
    b = _deadlock()
    _started(b, topic="t-other", partition=3)
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert not result.ok
    (violation,) = result.violations
    assert violation.subject == "t-other-3"
    assert "1 more explained" in result.note
