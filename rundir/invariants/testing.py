"""Test doubles for the invariants: `EventLogBuilder` writes hand-made event logs in memory,
one per node, with line numbers and a shared, strictly increasing clock. For tests only;
one thread."""

from __future__ import annotations

import eventlog
from eventlog import HighWatermarkMoved, IsrChanged, LeaderElected, event_record
from eventlog.event import ENVELOPE
from rundir.events import Event

__all__ = ["EventLogBuilder"]


class EventLogBuilder:
    """Builds `EventLogs`: each `emit` appends to a node's log at the next millisecond."""

    def __init__(self, start_ts: int = 1_700_000_000_000) -> None:
        self._ts = start_ts
        self._logs: dict[str, list[Event]] = {}

    def emit(self, node: str, written: eventlog.Event) -> Event:
        """Append one event to `node`'s log, with its fields as its writer writes them, and
        return it."""
        self._ts += 1
        log = self._logs.setdefault(node, [])
        record = event_record(written, self._ts, node)
        fields = {k: v for k, v in record.items() if k not in ENVELOPE}
        event = Event(node, len(log) + 1, self._ts, written.kind, fields)
        log.append(event)
        return event

    def emit_partial(self, node: str, kind: str, **fields: object) -> Event:
        """Append a line of `kind` holding only `fields`, as an older or broken writer
        wrote it (a field missing), to see what a check makes of it; return it."""
        self._ts += 1
        log = self._logs.setdefault(node, [])
        event = Event(node, len(log) + 1, self._ts, kind, dict(fields))
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
        transaction its write committed at (`null` otherwise, as for a new partition)."""
        return self.emit(
            node,
            LeaderElected(
                topic=topic,
                partition=partition,
                leader=leader,
                leader_epoch=leader_epoch,
                isr=[leader],
                zk_version=zk_version,
                zxid=zxid,
                controller_epoch=controller_epoch,
                strategy=strategy,
                unclean=False,
            ),
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
            IsrChanged(
                topic=topic,
                partition=partition,
                reason="expand",
                leader=leader,
                leader_epoch=leader_epoch,
                old_isr=[leader],
                isr=list(isr or (leader,)),
                zk_version=zk_version,
                high_watermark=0,
            ),
        )

    def high_watermark_moved(
        self,
        node: str,
        high_watermark: int,
        *,
        leader_epoch: int = 1,
        reason: str = "moved",
        epoch_start_offset: int = 0,
        isr: tuple[int, ...] = (1, 2),
        log_ends: tuple[int, ...] | None = None,
        topic: str = "t",
    ) -> Event:
        """A leader's `high_watermark_moved` for partition 0; every ISR member's known log
        end is `log_ends`, by default two past the high watermark."""
        ends = list(log_ends) if log_ends is not None else [high_watermark + 2] * len(isr)
        return self.emit(
            node,
            HighWatermarkMoved(
                topic=topic,
                partition=0,
                leader_epoch=leader_epoch,
                reason=reason,
                high_watermark=high_watermark,
                log_end_offset=max([high_watermark, epoch_start_offset, *ends]),
                epoch_start_offset=epoch_start_offset,
                isr=list(isr),
                isr_log_end_offsets=ends,
                skipped=0,
            ),
        )

    def logs(self) -> dict[str, tuple[Event, ...]]:
        """Every node's events so far."""
        return {node: tuple(events) for node, events in self._logs.items()}
