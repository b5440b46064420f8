"""Invariant 4 over hand-made event logs: the writes of a partition's state znode, ordered
by zkVersion, name one leader per leader epoch and never lower the epoch."""

from __future__ import annotations

from eventlog import IsrChanged
from rundir.invariants import one_leader_per_leader_epoch
from rundir.invariants.testing import EventLogBuilder


def _elected(
    b: EventLogBuilder,
    node: str,
    leader: int,
    epoch: int,
    version: int,
    strategy: str = "offline",
    partition: int = 0,
) -> None:
    b.leader_elected(node, partition, leader, epoch, version, strategy=strategy)


def _isr_changed(b: EventLogBuilder, node: str, leader: int, epoch: int, version: int) -> None:
    b.leader_isr_changed(node, 0, leader, epoch, version, isr=(leader, 2))


def test_a_partition_s_life_across_failovers_holds() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 0, 0, "initial")
    _isr_changed(b, "broker1", 1, 0, 1)
    _elected(b, "broker2", 2, 1, 2)
    b.emit(
        "broker2",
        IsrChanged(
            topic="t",
            partition=0,
            reason="replica offline",
            by="controller",
            replica=2,
            leader=-1,
            leader_epoch=2,
            isr=[],
            zk_version=3,
            controller_epoch=2,
        ),
    )
    _elected(b, "broker3", 1, 4, 5)  # epoch 3 / zkVersion 4: a reassignment bump, not logged
    result = one_leader_per_leader_epoch(b.logs())
    assert result.ok, result.violations
    assert result.checked == 5


def test_two_leaders_at_one_epoch_are_both_named() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 3, 4)
    _isr_changed(b, "broker2", 2, 3, 5)
    result = one_leader_per_leader_epoch(b.logs())
    (violation,) = [v for v in result.violations if v.subject == "t-0 leader epoch 3"]
    assert "leaders 1, 2" in violation.explanation
    assert [(e.node, e.kind) for e in violation.events] == [
        ("broker1", "leader_elected"),
        ("broker2", "isr_changed"),
    ]


def test_an_epoch_going_back_along_zk_versions_is_named() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 5, 7)
    _isr_changed(b, "broker1", 1, 4, 8)
    violations = one_leader_per_leader_epoch(b.logs()).violations
    went_back = [v for v in violations if "went back" in v.explanation]
    assert len(went_back) == 1
    assert [e.fields["zk_version"] for e in went_back[0].events] == [7, 8]


def test_an_election_that_does_not_raise_the_epoch_is_named() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 5, 7)
    _elected(b, "broker2", 1, 5, 9)  # same leader, same epoch, later write
    (violation,) = one_leader_per_leader_epoch(b.logs()).violations
    assert "already written at zkVersion 7" in violation.explanation
    assert [e.node for e in violation.events] == ["broker1", "broker2"]


def test_two_writes_claiming_one_zk_version_are_named() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 5, 7)
    _elected(b, "broker2", 1, 6, 7)
    (violation,) = one_leader_per_leader_epoch(b.logs()).violations
    assert violation.subject == "t-0 zkVersion 7"


def test_a_recreated_partition_starts_its_epochs_again() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 0, 0, "initial")
    _elected(b, "broker1", 2, 1, 1)
    _elected(b, "broker1", 3, 0, 0, "initial")  # the topic was deleted and created again
    _elected(b, "broker1", 1, 1, 1)
    assert one_leader_per_leader_epoch(b.logs()).ok


def test_partitions_are_judged_apart() -> None:
    b = EventLogBuilder()
    _elected(b, "broker1", 1, 3, 4)
    _elected(b, "broker1", 2, 3, 4, partition=1)
    result = one_leader_per_leader_epoch(b.logs())
    assert result.ok
    assert result.checked == 2


def test_events_missing_a_field_are_counted_not_judged() -> None:
    b = EventLogBuilder()
    b.emit_partial("broker1", "leader_elected", topic="t", partition=0, leader=1)
    result = one_leader_per_leader_epoch(b.logs())
    assert result.ok
    assert result.note.startswith("1 events without")
