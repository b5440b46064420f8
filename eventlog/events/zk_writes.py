"""The controller's ZooKeeper writes (`controller-event-thread`).

Every write the active controller makes goes in a multi fenced by the controller epoch
(`zkdata.fenced_writes`); each multi that commits is logged here, whatever it wrote.

Pure values; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from eventlog.event import Event

__all__ = ["ControllerWritesCommitted"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerWritesCommitted(Event):
    """A multi of this controller's epoch-fenced ZooKeeper writes committed.

    `controller/controller.py`, told by `zkdata.fenced_writes` on the thread that wrote
    (the event thread); one per multi: state znodes, assignments, notifications and
    requests deleted, topics deleted, every write the controller fences. A multi whose
    `zxid` exceeds a newer epoch's `controller_elected` `epoch_zxid` committed after that
    controller bumped the epoch, which fencing forbids (`controller_writes_fenced`,
    docs/invariants.md), whatever kind of write it was.
    """

    kind: ClassVar[str] = "controller_writes_committed"

    controller_id: int
    """this broker's id"""
    controller_epoch: int
    """the epoch the controller acted in"""
    epoch_zk_version: int
    """the zkVersion of `/controller_epoch` the multi checked (-1 checks nothing)"""
    zxid: int
    """ZooKeeper transaction id the multi committed at"""
    writes: int
    """how many writes the multi held, its epoch check aside"""
    paths: list[str]
    """the paths of its first writes, at most three"""
