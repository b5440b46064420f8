"""When a change the controller made was applied everywhere, read back from event logs.

A controller change (failover, a broker's failure, a controlled shutdown, new topics) is
done when every live broker has accepted every control request it caused. Between
`start_ts` and `bound_ts` (a moment after the cluster went quiet and before anything else
was changed), `applied_window` finds the last `request_accepted` of the controller's epoch
on any broker, and counts what the controller wrote to ZooKeeper meanwhile (leaders
elected, ISRs shrunk by the controller): the number of state znodes a floor must write.
Pure parsing of finished files; main thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventlog import EventKind, read_events


@dataclass(frozen=True, slots=True)
class AppliedWindow:
    """What happened between `start_ts` and the last request accepted (ms since the epoch)."""

    start_ts: int
    last_accepted_ts: int | None
    requests_accepted: int
    leaders_elected: int
    isr_shrinks: int

    @property
    def seconds(self) -> float | None:
        """From the start until every broker had accepted its last request."""
        if self.last_accepted_ts is None:
            return None
        return max(0, self.last_accepted_ts - self.start_ts) / 1000

    @property
    def states_written(self) -> int:
        """State znodes the controller wrote (one write per election and per shrink)."""
        return self.leaders_elected + self.isr_shrinks


def _within(events: Iterable[dict[str, Any]], start_ts: int, bound_ts: int) -> list[dict[str, Any]]:
    return [e for e in events if start_ts <= int(e.get("ts", 0)) <= bound_ts]


def applied_window(
    logs: Mapping[int, Path],
    controller_id: int,
    controller_epoch: int | None,
    start_ts: int,
    bound_ts: int,
) -> AppliedWindow:
    """Summarize `[start_ts, bound_ts]` from every broker's event log (`logs`: broker id ->
    path; the controller's own is `logs[controller_id]`)."""
    accepted = [
        int(e["ts"])
        for path in logs.values()
        for e in _within(read_events(path), start_ts, bound_ts)
        if e.get("kind") == EventKind.REQUEST_ACCEPTED
        and controller_epoch in (None, e.get("controller_epoch"))
    ]
    own = _within(read_events(logs[controller_id]), start_ts, bound_ts)
    return AppliedWindow(
        start_ts=start_ts,
        last_accepted_ts=max(accepted) if accepted else None,
        requests_accepted=len(accepted),
        leaders_elected=sum(1 for e in own if e.get("kind") == EventKind.LEADER_ELECTED),
        isr_shrinks=sum(
            1 for e in own if e.get("kind") == EventKind.ISR_CHANGED and e.get("by") == "controller"
        ),
    )
