"""Kafka 2.x's deletion-reassignment deadlock recognised in a run's events: the stalled
reassignment and deletion it explains are allowed, anything else still fails."""

from __future__ import annotations

from controller.deletion_decisions import REASON_REASSIGNMENT as CONTROLLER_REASON
from eventlog import (
    BrokerChange,
    IsrChanged,
    LeaderElected,
    LeaderElectionFailed,
    ReassignmentCompleted,
    ReassignmentFailed,
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


def test_a_deletion_halted_only_for_another_reason_is_not_the_deadlock() -> None:
    b = EventLogBuilder()
    _started(b)
    _leader_removed(b)
    _queued(b)
    _halted(b, reason="offline replicas")
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()
    assert not topic_deletion_completes(b.logs(), 0, {"t"}).ok


def test_a_replica_offline_meanwhile_does_not_end_the_deadlock() -> None:
    """A soak's run: the deletion was last halted for a replica offline meanwhile; once it
    was back the reassignment blocked the deletion again, and nothing was logged."""
    b = _deadlock()
    _halted(b, reason="offline replicas")
    assert deadlocked(events_since(b.logs(), 0)) == {"t-side"}


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


def _elected(b: EventLogBuilder, leader: int, node: str = "broker2") -> None:
    b.emit(
        node,
        LeaderElected(
            topic="t-side",
            partition=0,
            leader=leader,
            leader_epoch=2,
            isr=[leader],
            zk_version=2,
            zxid=None,
            controller_epoch=4,
            strategy="offline",
            unclean=False,
        ),
    )


def _live(b: EventLogBuilder, *live: int) -> None:
    change = BrokerChange(new=[], dead=[], bounced=[], live=list(live), epochs={})
    b.emit("broker2", change)


def _reassigned_then_queued() -> EventLogBuilder:
    """Broker 1 leads the partition, its reassignment starts with every broker live, then
    its topic is queued for deletion and halted for the reassignment."""
    b = EventLogBuilder()
    _live(b, 1, 2, 3)
    _elected(b, leader=1)
    _started(b)
    _queued(b)
    _halted(b)
    return b


def test_a_reassignment_resumed_while_its_leader_was_away_is_the_deadlock() -> None:
    """A soak's run: the leader of a partition of the side topic went away as its topic
    was queued for deletion; the reassignment, resumed at another broker's return, told
    its new replicas to follow a leader they could not find, and when the leader came
    back no election told them again."""
    b = _reassigned_then_queued()
    _live(b, 2, 3)  # the leader's session expired
    _started(b)  # resumed at broker 3's return
    _live(b, 1, 2, 3)  # the leader is back, leading
    _halted(b)
    assert deadlocked(events_since(b.logs(), 0)) == {"t-side"}
    assert reassignment_completes(b.logs(), 0, {"t"}).status() == "allowed"


def test_a_reassignment_started_while_its_leader_was_live_is_not_the_deadlock() -> None:
    b = _reassigned_then_queued()
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()
    _live(b, 2, 3)
    _started(b)
    _elected(b, leader=2)  # an election tells the new replicas whom to follow
    assert deadlocked(events_since(b.logs(), 0)) == frozenset()


def _failed(b: EventLogBuilder, topic: str = "t-side", partition: int = 0) -> None:
    b.emit(
        "broker3",
        ReassignmentFailed(
            topic=topic,
            partition=partition,
            target=[2, 1],
            reason="the state znode is missing or does not decode",
            controller_epoch=5,
        ),
    )


def test_a_failed_try_of_a_partition_the_deadlock_holds_is_part_of_it() -> None:
    """A soak's run: a new partition whose replicas were all away got no state znode, its
    topic was queued for deletion before they came back, and each try of its reassignment
    failed on the missing znode, as Kafka's leaves it pending."""
    b = EventLogBuilder()
    b.emit(
        "broker3",
        LeaderElectionFailed(
            topic="t-side",
            partition=0,
            reason="no live replica to lead a new partition",
            controller_epoch=5,
        ),
    )
    _started(b)
    _failed(b)
    _queued(b)
    _halted(b)
    _failed(b)
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert result.status() == "allowed", result
    assert [v.explanation.split(":")[0] for v in result.violations] == [
        "failed (the state znode is missing or does not decode)",
        "failed (the state znode is missing or does not decode)",
        "never completed",
    ]


def test_a_failure_outside_the_deadlock_still_fails() -> None:
    b = _deadlock()
    _failed(b, topic="t-other", partition=2)
    result = reassignment_completes(b.logs(), 0, {"t"})
    assert not result.ok
    (violation,) = result.violations
    assert violation.explanation == (
        "reassignment failed: the state znode is missing or does not decode"
    )
