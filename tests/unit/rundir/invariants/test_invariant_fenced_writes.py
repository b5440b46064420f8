"""`controller_writes_fenced` over `controller_writes_committed`: any multi of a
controller's fenced writes (a topic's znodes deleted, an assignment rewritten, a
notification removed), not only its elections and ISR writes, must have committed before
a newer controller bumped the epoch."""

from __future__ import annotations

from eventlog import ControllerElected, ControllerWritesCommitted
from rundir.invariants.controller_handover import controller_writes_fenced
from rundir.invariants.testing import EventLogBuilder


def _won_at(b: EventLogBuilder, node: str, controller: int, epoch: int, zxid: int) -> None:
    b.emit(
        node,
        ControllerElected(
            controller_id=controller, controller_epoch=epoch, epoch_zk_version=0, epoch_zxid=zxid
        ),
    )


def _committed(b: EventLogBuilder, node: str, epoch: int, zxid: int, *paths: str) -> None:
    b.emit(
        node,
        ControllerWritesCommitted(
            controller_id=int(node[-1]),
            controller_epoch=epoch,
            epoch_zk_version=-1,
            zxid=zxid,
            writes=len(paths),
            paths=list(paths[:3]),
        ),
    )


def test_a_deletion_a_superseded_controller_committed_after_the_bump_is_named() -> None:
    """Broker 3 bumps the epoch to 5 at zxid 0x200; broker 1, still acting at epoch 4,
    deletes a topic's znodes at 0x205 (kafka-6082's any-version check lets it)."""
    b = EventLogBuilder()
    _won_at(b, "broker1", 1, 4, 0x100)
    _committed(b, "broker1", 4, 0x150, "/brokers/topics/t/partitions/0/state")
    _won_at(b, "broker3", 3, 5, 0x200)
    gone = [f"/brokers/topics/side/partitions/{p}" for p in range(4)]
    _committed(b, "broker1", 4, 0x205, *gone)
    _committed(b, "broker3", 5, 0x206, "/isr_change_notification/isr_change_0000000001")
    result = controller_writes_fenced(b.logs(), 0)
    (violation,) = result.violations
    assert result.checked == 3
    assert violation.subject == "broker1 controller epoch 4"
    assert violation.explanation.startswith(
        "4 write(s) (/brokers/topics/side/partitions/0, /brokers/topics/side/partitions/1, "
        "/brokers/topics/side/partitions/2, ...) written at controller epoch 4 committed "
        "at zxid 0x205, after broker 3 won epoch 5 at zxid 0x200"
    )


def test_writes_committed_before_the_bump_keep_the_invariant_however_late_logged() -> None:
    b = EventLogBuilder()
    _won_at(b, "broker1", 1, 4, 0x100)
    _won_at(b, "broker3", 3, 5, 0x200)
    b.advance(10_000)
    _committed(b, "broker1", 4, 0x1FF, "/admin/reassign_partitions")
    result = controller_writes_fenced(b.logs(), 0)
    assert result.ok
    assert result.note == "1 of 1 writes carry the zxid they committed at"
