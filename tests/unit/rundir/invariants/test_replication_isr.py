"""The specifications' ISR invariants (`rundir.invariants.spec_isr`): `leader_in_isr` and
`isr_join_after_epoch_start`, each broken by a hand-made log (the witness named), clean,
and with what they leave alone."""

from __future__ import annotations

from eventlog import IsrChanged, LeaderElected
from rundir.invariants.spec_isr import broker_of_node, isr_join_after_epoch_start, leader_in_isr
from rundir.invariants.testing import EventLogBuilder


def _controller_shrink(b: EventLogBuilder, leader: int, isr: list[int], epoch: int) -> None:
    b.emit(
        "broker3",
        IsrChanged(
            topic="t",
            partition=0,
            reason="replica offline",
            by="controller",
            replica=1,
            leader=leader,
            leader_epoch=epoch,
            isr=isr,
            zk_version=epoch,
            zxid=None,
            controller_epoch=1,
        ),
    )


def test_a_clean_log_keeps_every_leader_in_its_isr() -> None:
    b = EventLogBuilder()
    b.leader_elected("broker3", 0, 1, 1, 1)
    b.leader_isr_changed("broker1", 0, 1, 1, 2, isr=(1, 2))
    b.high_watermark_moved("broker1", 5, log_ends=(5, 5))
    result = leader_in_isr(b.logs())
    assert result.ok
    assert not result.violations
    assert result.checked == 3


def test_the_controller_removing_an_offline_leader_is_allowed() -> None:
    b = EventLogBuilder()
    _controller_shrink(b, -1, [2], 2)
    result = leader_in_isr(b.logs())
    assert result.ok
    assert result.checked == 0


def test_a_written_isr_without_its_leader_is_named() -> None:
    b = EventLogBuilder()
    _controller_shrink(b, 1, [2], 2)
    bad = b.logs()["broker3"][0]
    result = leader_in_isr(b.logs())
    assert not result.ok
    [violation] = result.violations
    assert violation.events == (bad,)
    assert violation.subject == "t-0 leader epoch 2"
    assert "leader 1 is not in its ISR [2]" in violation.explanation


def test_a_leader_observing_an_isr_without_itself_is_named() -> None:
    b = EventLogBuilder()
    bad = b.high_watermark_moved("broker1", 5, isr=(2, 3), log_ends=(5, 5))
    result = leader_in_isr(b.logs())
    assert [v.events for v in result.violations] == [(bad,)]
    assert broker_of_node("broker12") == 12
    assert broker_of_node("zk1") is None


def _expand(follower: int, start: int, hw: int) -> IsrChanged:
    return IsrChanged(
        topic="t",
        partition=0,
        reason="expand",
        leader=1,
        leader_epoch=3,
        old_isr=[1],
        isr=[1, 2],
        zk_version=4,
        high_watermark=hw,
        follower_log_end_offset=follower,
        epoch_start_offset=start,
    )


def test_a_follower_joining_at_the_epoch_start_is_clean() -> None:
    b = EventLogBuilder()
    b.emit("broker1", _expand(10, 10, 8))
    result = isr_join_after_epoch_start(b.logs())
    assert result.ok
    assert result.checked == 1


def test_a_follower_joining_below_the_epoch_start_is_named() -> None:
    b = EventLogBuilder()
    b.emit("broker1", _expand(10, 10, 8))
    bad = b.emit("broker1", _expand(9, 10, 8))
    result = isr_join_after_epoch_start(b.logs())
    [violation] = result.violations
    assert violation.events == (bad,)
    assert "log end 9, below the epoch start 10" in violation.explanation


def test_a_follower_joining_below_the_high_watermark_is_named() -> None:
    b = EventLogBuilder()
    bad = b.emit("broker1", _expand(6, 4, 8))
    result = isr_join_after_epoch_start(b.logs())
    assert [v.events for v in result.violations] == [(bad,)]


def test_an_expansion_without_the_follower_offset_is_counted_not_judged() -> None:
    b = EventLogBuilder()
    b.leader_isr_changed("broker1", 0, 1, 1, 2, isr=(1, 2))
    result = isr_join_after_epoch_start(b.logs())
    assert result.ok
    assert result.checked == 0
    assert "1 expansions without" in result.note


def test_an_election_naming_a_leader_outside_the_isr_is_named() -> None:
    b = EventLogBuilder()
    bad = b.emit(
        "broker3",
        LeaderElected(
            topic="t",
            partition=0,
            leader=2,
            leader_epoch=4,
            isr=[1],
            zk_version=4,
            zxid=None,
            controller_epoch=1,
            strategy="offline",
            unclean=False,
        ),
    )
    assert [v.events for v in leader_in_isr(b.logs()).violations] == [(bad,)]
