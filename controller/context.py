"""`ControllerContext`: what the active controller knows about the cluster.

Owned by the controller event thread: only that thread reads or mutates it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ControllerContext:
    """The controller epoch and the zkVersion of `/controller_epoch` that fences every write.

    Later sections (live brokers, assignments, leaderships, replica and partition states)
    are added by the controller core.
    """

    epoch: int = 0
    epoch_zk_version: int = 0

    def reset(self) -> None:
        """Forget everything (on resignation)."""
        self.epoch = 0
        self.epoch_zk_version = 0
