"""Test doubles for the invariants: `EventLogBuilder` writes hand-made event logs in memory,
one per node, with line numbers and a shared, strictly increasing clock. For tests only;
one thread."""

from __future__ import annotations

from typing import Any

from eventlog import EventKind
from rundir.events import Event

__all__ = ["EventLogBuilder"]


class EventLogBuilder:
    """Builds `EventLogs`: each `emit` appends to a node's log at the next millisecond."""

    def __init__(self, start_ts: int = 1_700_000_000_000) -> None:
        self._ts = start_ts
        self._logs: dict[str, list[Event]] = {}

    def emit(self, node: str, kind: EventKind, **fields: Any) -> Event:
        """Append one event to `node`'s log and return it."""
        self._ts += 1
        log = self._logs.setdefault(node, [])
        event = Event(node, len(log) + 1, self._ts, str(kind), fields)
        log.append(event)
        return event

    def advance(self, ms: int) -> None:
        """Move the clock on by `ms` milliseconds (time passing between two events)."""
        self._ts += ms

    def leader_elected(
        self,
        node: str,
        partition: int,
        leader: int,
        leader_epoch: int,
        zk_version: int,
        *,
        strategy: str = "offline",
        controller_epoch: int = 1,
        topic: str = "t",
        zxid: int | None = None,
    ) -> Event:
        """A controller's `leader_elected` with the ISR `[leader]`; with `zxid`, the
        transaction its write committed at (older logs have none)."""
        committed = {} if zxid is None else {"zxid": zxid}
        return self.emit(
            node,
            EventKind.LEADER_ELECTED,
            topic=topic,
            partition=partition,
            leader=leader,
            leader_epoch=leader_epoch,
            isr=[leader],
            zk_version=zk_version,
            controller_epoch=controller_epoch,
            strategy=strategy,
            unclean=False,
            **committed,
        )

    def leader_isr_changed(
        self,
        node: str,
        partition: int,
        leader: int,
        leader_epoch: int,
        zk_version: int,
        *,
        isr: tuple[int, ...] = (),
        topic: str = "t",
    ) -> Event:
        """A partition leader's `isr_changed` (an expand to `isr`, by default `[leader]`)."""
        return self.emit(
            node,
            EventKind.ISR_CHANGED,
            topic=topic,
            partition=partition,
            reason="expand",
            leader=leader,
            leader_epoch=leader_epoch,
            old_isr=[leader],
            isr=list(isr or (leader,)),
            zk_version=zk_version,
            high_watermark=0,
        )

    def logs(self) -> dict[str, tuple[Event, ...]]:
        """Every node's events so far."""
        return {node: tuple(events) for node, events in self._logs.items()}
