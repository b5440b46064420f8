"""Test doubles for the broker's data plane, shipped beside what they replace (STYLE rule 13).

- `FakeIsrStore` is the `IsrChangeSink` (and so the `IsrStore`) a `Partition` or a
  `ReplicaManager` writes through: partition state znodes in a dict with their zkVersions,
  the answers `KafkaZkClient` gives (a conditional write returns the new zkVersion, or None
  on BADVERSION; a read returns what the znode really holds), every write recorded, and a
  way to fail the next ISR change notifications.

Threads: every method is safe from any thread (one lock): partitions write from gRPC
workers, fetcher threads and the ISR threads, while the test thread reads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkdata.model import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata.pipelined_reads import Reads

__all__ = ["FakeIsrStore", "IsrWrite"]


@dataclass(frozen=True, slots=True)
class IsrWrite:
    """One conditional write asked of a `FakeIsrStore`: the state sent, the zkVersion it was
    conditional on, and the new zkVersion (None when it was answered BADVERSION)."""

    tp: TopicPartition
    state: LeaderIsrAndControllerEpoch
    expected_version: int
    new_version: int | None


class FakeIsrStore:
    """State znodes and ISR change notifications in memory (see the module docstring).

    A state znode is kept as a value with its zkVersion; `state()` and
    `get_partition_states` report the zkVersion in `leader_and_isr.zk_version`, as
    `TopicPartitionStateZNode.decode` does. `update_partition_state` succeeds only when
    `expected_version` is the stored zkVersion (bumping it by one); otherwise it answers
    None (BADVERSION) and stores nothing. A missing znode raises `NoNodeError`, as kazoo's
    `set` does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._znodes: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        self._writes: list[IsrWrite] = []
        self._notifications: list[tuple[TopicPartition, ...]] = []
        self._notification_failures: list[Exception] = []

    # -- set-up and inspection by tests ------------------------------------------------------

    def put_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, zk_version: int
    ) -> None:
        """Store a state znode at `zk_version` (as the controller, or a concurrent writer,
        would have left it); the `zk_version` inside `state` is ignored."""
        with self._lock:
            self._znodes[tp] = (_with_version(state, zk_version), zk_version)

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """What the znode holds now (None when missing)."""
        with self._lock:
            znode = self._znodes.get(tp)
            return znode[0] if znode is not None else None

    @property
    def writes(self) -> list[IsrWrite]:
        """Every conditional write asked for, in order (a copy)."""
        with self._lock:
            return list(self._writes)

    @property
    def notifications(self) -> list[tuple[TopicPartition, ...]]:
        """The partitions of every ISR change notification created, in order (a copy)."""
        with self._lock:
            return list(self._notifications)

    def fail_next_notification(self, error: Exception) -> None:
        """Raise `error` from the next `create_isr_change_notification` (creating nothing).
        Calls queue: each failure is used once, in order."""
        with self._lock:
            self._notification_failures.append(error)

    # -- IsrChangeSink -----------------------------------------------------------------------

    def update_partition_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> int | None:
        """Conditional write: the new zkVersion, or None on BADVERSION or a missing znode
        (as `KafkaZkClient.update_partition_state` answers)."""
        with self._lock:
            znode = self._znodes.get(tp)
            if znode is None:
                self._writes.append(IsrWrite(tp, state, expected_version, None))
                return None
            if znode[1] != expected_version:
                self._writes.append(IsrWrite(tp, state, expected_version, None))
                return None
            version = znode[1] + 1
            self._znodes[tp] = (_with_version(state, version), version)
            self._writes.append(IsrWrite(tp, state, expected_version, version))
            return version

    def get_partition_states(
        self, partitions: Sequence[TopicPartition]
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """What the znodes hold; missing ones appear in neither map."""
        with self._lock:
            found = {tp: self._znodes[tp][0] for tp in partitions if tp in self._znodes}
        return Reads(found, {})

    def create_isr_change_notification(self, partitions: Iterable[TopicPartition]) -> str:
        """Record the partitions; returns a sequential node name (or raises the failure
        queued by `fail_next_notification`)."""
        with self._lock:
            if self._notification_failures:
                raise self._notification_failures.pop(0)
            self._notifications.append(tuple(partitions))
            return f"/isr_change_notification/isr_change_{len(self._notifications) - 1:010d}"


def _with_version(
    state: LeaderIsrAndControllerEpoch, zk_version: int
) -> LeaderIsrAndControllerEpoch:
    lai = state.leader_and_isr
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, zk_version), state.controller_epoch
    )
