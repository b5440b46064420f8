"""What a state machine's round did to each of its partitions, collected as columns and
written as one event per kind (`eventlog.events.rounds`): a failover of 100,000 partitions
writes a few events, not one per partition. A round is one pipelined ZooKeeper write and
the decisions before it; its events are written when the round's outcomes are recorded,
where the single events of each partition used to be. Event thread only.
"""

from __future__ import annotations

from typing import Any

from domain import LeaderAndIsr, TopicPartition
from eventlog import (
    EventLog,
    IsrShrinksFailed,
    IsrsShrunk,
    LeaderElectionsFailed,
    LeadersElected,
    RoundEvent,
)

__all__ = ["ElectionRound", "ShrinkRound"]


class _Columns:
    """Lists that are a round event's columns, each slot named as the event's field."""

    __slots__: tuple[str, ...] = ()

    def columns(self) -> dict[str, Any]:
        """The columns by their fields' names in the round's event."""
        return {name: getattr(self, name) for name in self.__slots__}


class _Failures(_Columns):
    """The partitions of a round that failed, and why."""

    __slots__ = ("partitions", "reasons", "topics")

    def __init__(self) -> None:
        self.topics: list[str] = []
        self.partitions: list[int] = []
        self.reasons: list[str] = []

    def add(self, tp: TopicPartition, reason: str) -> str:
        self.topics.append(tp.topic)
        self.partitions.append(tp.partition)
        self.reasons.append(reason)
        return reason


class _Written(_Columns):
    """The leaderships a round wrote, column by column."""

    __slots__ = ("isrs", "leader_epochs", "leaders", "partitions", "topics", "zk_versions", "zxids")

    def __init__(self) -> None:
        self.topics: list[str] = []
        self.partitions: list[int] = []
        self.leaders: list[int] = []
        self.leader_epochs: list[int] = []
        self.isrs: list[list[int]] = []
        self.zk_versions: list[int] = []
        self.zxids: list[int | None] = []

    def add(self, tp: TopicPartition, lai: LeaderAndIsr, zxid: int | None) -> None:
        self.topics.append(tp.topic)
        self.partitions.append(tp.partition)
        self.leaders.append(lai.leader)
        self.leader_epochs.append(lai.leader_epoch)
        self.isrs.append(list(lai.isr))
        self.zk_versions.append(lai.zk_version)
        self.zxids.append(zxid)


class _Round:
    """A round's failures and writes; `emit` writes them (failures first, each kind only
    when it has partitions) and starts over."""

    __slots__ = ("_epoch", "_events", "_failed", "_written")

    def __init__(self, events: EventLog, controller_epoch: int) -> None:
        self._events = events
        self._epoch = controller_epoch
        self._failed = _Failures()
        self._written = _Written()

    def failed(self, tp: TopicPartition, reason: str) -> str:
        """No change for `tp`, because of `reason` (returned)."""
        return self._failed.add(tp, reason)

    def emit(self) -> None:
        """Write the round's events, and start a new round."""
        if self._failed.topics:
            self._events.emit(self._failures(self._failed))
        if self._written.topics:
            self._events.emit(self._writes(self._written))
        self._failed, self._written = _Failures(), _Written()

    def _failures(self, failed: _Failures) -> RoundEvent:
        raise NotImplementedError

    def _writes(self, written: _Written) -> RoundEvent:
        raise NotImplementedError


class ElectionRound(_Round):
    """The leaders a round elected and the partitions it could not elect for, by one
    controller (`controller_epoch`) with one `strategy`: one `leader_elections_failed` and
    one `leaders_elected`."""

    __slots__ = ("_strategy", "_uncleans")

    def __init__(self, events: EventLog, controller_epoch: int, strategy: str) -> None:
        super().__init__(events, controller_epoch)
        self._strategy = strategy
        self._uncleans: list[bool] = []

    def elected(
        self, tp: TopicPartition, lai: LeaderAndIsr, unclean: bool, zxid: int | None = None
    ) -> None:
        """`lai` is now in ZooKeeper, written by the transaction `zxid` (None for a created
        state znode: a multi's create answers no Stat)."""
        self._written.add(tp, lai, zxid)
        self._uncleans.append(unclean)

    def _failures(self, failed: _Failures) -> RoundEvent:
        return LeaderElectionsFailed(controller_epoch=self._epoch, **failed.columns())

    def _writes(self, written: _Written) -> RoundEvent:
        uncleans, self._uncleans = self._uncleans, []
        return LeadersElected(
            controller_epoch=self._epoch,
            strategy=self._strategy,
            uncleans=uncleans,
            **written.columns(),
        )


class ShrinkRound(_Round):
    """The ISRs a round of OfflineReplica wrote without `replica`, and the partitions whose
    ISR it could not shrink: one `isr_shrinks_failed` and one `isrs_shrunk`."""

    __slots__ = ("_replica",)

    def __init__(self, events: EventLog, controller_epoch: int, replica: int) -> None:
        super().__init__(events, controller_epoch)
        self._replica = replica

    def shrunk(self, tp: TopicPartition, lai: LeaderAndIsr, zxid: int | None) -> None:
        """`lai`, without the replica, is now in ZooKeeper, written by the transaction
        `zxid`."""
        self._written.add(tp, lai, zxid)

    def _failures(self, failed: _Failures) -> RoundEvent:
        return IsrShrinksFailed(
            replica=self._replica, controller_epoch=self._epoch, **failed.columns()
        )

    def _writes(self, written: _Written) -> RoundEvent:
        return IsrsShrunk(
            reason="replica offline",
            by="controller",
            replica=self._replica,
            controller_epoch=self._epoch,
            **written.columns(),
        )
