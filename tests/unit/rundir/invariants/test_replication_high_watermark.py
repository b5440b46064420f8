"""The specifications' high-watermark invariants (`rundir.invariants.spec_high_watermark`):
`valid_high_watermark` and `leader_completeness`, each broken by a hand-made log (the
witness named), clean, and allowed under unclean leader election."""

from __future__ import annotations

from eventlog import LeaderElected, NodeStarted, ReplicasDeleted
from rundir.invariants.spec_high_watermark import leader_completeness, valid_high_watermark
from rundir.invariants.testing import EventLogBuilder


def test_a_rising_high_watermark_below_every_isr_member_is_clean() -> None:
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 0, reason="leader", log_ends=(0, -1))
    b.high_watermark_moved("broker1", 5)
    b.high_watermark_moved("broker1", 9)
    result = valid_high_watermark(b.logs())
    assert result.ok
    assert result.checked == 3


def test_a_high_watermark_above_an_isr_members_log_end_is_named() -> None:
    b = EventLogBuilder()
    bad = b.high_watermark_moved("broker1", 7, log_ends=(9, 6))
    [violation] = valid_high_watermark(b.logs()).violations
    assert violation.events == (bad,)
    assert "above ISR member 2's log end 6" in violation.explanation


def test_a_high_watermark_moving_back_within_an_epoch_is_named() -> None:
    b = EventLogBuilder()
    high = b.high_watermark_moved("broker1", 9)
    low = b.high_watermark_moved("broker1", 4)
    [violation] = valid_high_watermark(b.logs()).violations
    assert violation.events == (high, low)
    assert "moved back from 9 to 4" in violation.explanation


def test_a_new_epoch_or_a_new_process_starts_the_high_watermark_over() -> None:
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 9)
    b.high_watermark_moved("broker1", 4, leader_epoch=2)
    b.high_watermark_moved("broker2", 3)
    b.emit("broker1", NodeStarted(broker_id=1, zk_connect="zk1:2181"))
    b.high_watermark_moved("broker1", 2, leader_epoch=2)
    assert valid_high_watermark(b.logs()).ok


def test_a_replica_deleted_and_created_again_starts_its_high_watermark_over() -> None:
    """A late LeaderAndIsr re-creates a replica a StopReplica deleted, at its old epoch."""
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 228)
    b.emit("broker1", ReplicasDeleted(topics=["other", "t"], partitions=[0, 0]))
    b.high_watermark_moved("broker1", 0, reason="leader", log_ends=(0, -1))
    assert valid_high_watermark(b.logs()).ok


def test_deleting_another_replica_does_not_start_it_over() -> None:
    b = EventLogBuilder()
    high = b.high_watermark_moved("broker1", 228)
    b.emit("broker1", ReplicasDeleted(topics=["t", "other"], partitions=[1, 0]))
    b.emit("broker2", ReplicasDeleted(topics=["t"], partitions=[0]))
    low = b.high_watermark_moved("broker1", 0, reason="leader", log_ends=(0, -1))
    [violation] = valid_high_watermark(b.logs()).violations
    assert violation.events == (high, low)


def _elected(b: EventLogBuilder, epoch: int, *, unclean: bool, strategy: str = "offline") -> None:
    b.emit(
        "broker3",
        LeaderElected(
            topic="t",
            partition=0,
            leader=2,
            leader_epoch=epoch,
            isr=[2],
            zk_version=epoch,
            zxid=None,
            controller_epoch=1,
            strategy=strategy,
            unclean=unclean,
        ),
    )


def test_a_new_leader_holding_the_committed_records_is_clean() -> None:
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 9, leader_epoch=1)
    b.high_watermark_moved("broker2", 9, leader_epoch=2, reason="leader", epoch_start_offset=11)
    result = leader_completeness(b.logs(), unclean_leader_election=False)
    assert result.ok
    assert not result.violations
    assert result.checked == 1


def test_a_new_leader_missing_committed_records_is_named() -> None:
    b = EventLogBuilder()
    committed = b.high_watermark_moved("broker1", 9, leader_epoch=1)
    b.high_watermark_moved("broker1", 4, leader_epoch=1)
    became = b.high_watermark_moved(
        "broker2", 6, leader_epoch=2, reason="leader", epoch_start_offset=6
    )
    result = leader_completeness(b.logs(), unclean_leader_election=False)
    assert result.status() == "VIOLATED"
    [violation] = result.violations
    assert violation.events == (committed, became)
    assert "at log end 6, below the high watermark 9 of leader epoch 1" in violation.explanation


def test_an_unclean_election_losing_committed_records_is_allowed() -> None:
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 9, leader_epoch=1)
    _elected(b, 2, unclean=True)
    b.high_watermark_moved("broker2", 6, leader_epoch=2, reason="leader", epoch_start_offset=6)
    logged = leader_completeness(b.logs(), unclean_leader_election=False)
    assert logged.status() == "allowed"
    assert len(logged.violations) == 1
    configured_log = EventLogBuilder()
    configured_log.high_watermark_moved("broker1", 9, leader_epoch=1)
    configured_log.high_watermark_moved(
        "broker2", 6, leader_epoch=2, reason="leader", epoch_start_offset=6
    )
    configured = leader_completeness(configured_log.logs(), unclean_leader_election=True)
    assert configured.status() == "allowed"


def test_a_partition_created_again_starts_its_committed_offsets_over() -> None:
    b = EventLogBuilder()
    b.high_watermark_moved("broker1", 9, leader_epoch=1)
    _elected(b, 0, unclean=False, strategy="initial")
    b.high_watermark_moved("broker2", 0, leader_epoch=1, reason="leader", epoch_start_offset=0)
    assert leader_completeness(b.logs(), unclean_leader_election=False).ok
