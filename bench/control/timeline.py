"""Where a failover's time went, read back from the event logs after the fact.

The new controller writes `controller_elected` just before `on_failover` starts and
`controller_failover_done` when it returns; in between, its event log shows each step:
the end of each of `on_failover`'s steps, requests sent, replica and partition state
changes, leaders elected. `failover_timeline`
turns those into milestones (offsets from the election, consecutive events of one kind
collapsed into one line), and counts the per-partition events the brokers wrote while the
failover ran (`partition_fenced`: LeaderAndIsr entries a broker ignored as not newer).
The controller's broker runs in the same process, so its per-partition work competes
with the controller for the GIL. Pure parsing of finished files; main thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.shared.fleet import FailoverDone
from eventlog import EventKind, read_events

#: Controller-side kinds that become milestones (the broker-side ones of the same
#: process, and response events written on sender threads, are left out).
_MILESTONE_KINDS = frozenset(
    {
        EventKind.CONTROLLER_FAILOVER_STEP,
        EventKind.CONTROL_REQUEST_SENT,
        EventKind.REPLICA_STATE_CHANGE,
        EventKind.PARTITION_STATE_CHANGE,
        EventKind.LEADER_ELECTED,
        EventKind.LEADER_ELECTION_FAILED,
        EventKind.CONTROLLER_FAILOVER_DONE,
    }
)


@dataclass(frozen=True, slots=True)
class Milestone:
    """A step of the failover, `offset_s` after `controller_elected`."""

    offset_s: float
    what: str


@dataclass(frozen=True, slots=True)
class FailoverTimeline:
    """One failover as its event logs tell it (`elected_ts`: ms since the epoch)."""

    controller_epoch: int
    elected_ts: int | None
    live_brokers: int
    partitions: int
    offline_partitions: int
    leaders_elected: int
    load_s: float | None
    fenced_on_brokers: dict[int, int]
    requests_sent: dict[str, int]
    milestones: list[Milestone]

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "controller_epoch": self.controller_epoch,
            "live_brokers": self.live_brokers,
            "partitions": self.partitions,
            "offline_partitions_after": self.offline_partitions,
            "leaders_elected": self.leaders_elected,
            "load_s": self.load_s,
            "partition_fenced_events_on_brokers": {
                str(b): n for b, n in sorted(self.fenced_on_brokers.items())
            },
            "requests_sent": self.requests_sent,
            "milestones": [{"offset_s": m.offset_s, "what": m.what} for m in self.milestones],
        }


def failover_timeline(logs: Mapping[int, Path], done: FailoverDone) -> FailoverTimeline:
    """Summarize the failover that ended with `done`, from every broker's event log
    (`logs`: broker id -> path; the controller's is `logs[done.broker_id]`)."""
    events = read_events(logs[done.broker_id])
    elected_ts = _elected_ts(events, done)
    start = elected_ts if elected_ts is not None else done.ts_ms - int(done.duration_ms)
    window = [
        e
        for e in events
        if start <= int(e.get("ts", 0)) <= done.ts_ms and e.get("kind") in _MILESTONE_KINDS
    ]
    milestones = _milestones(window, start)
    sends = [e for e in window if e["kind"] == EventKind.CONTROL_REQUEST_SENT]
    requests: dict[str, int] = {}
    for e in sends:
        requests[str(e["api"])] = requests.get(str(e["api"]), 0) + 1
    fenced = {
        broker_id: sum(
            1
            for e in (events if broker_id == done.broker_id else read_events(path))
            if e.get("kind") == EventKind.PARTITION_FENCED
            and e.get("controller_epoch") == done.controller_epoch
            and start <= int(e.get("ts", 0)) <= done.ts_ms
        )
        for broker_id, path in sorted(logs.items())
    }

    def reported(name: str) -> int:
        return int(done.event.get(name, -1))

    return FailoverTimeline(
        controller_epoch=done.controller_epoch,
        elected_ts=elected_ts,
        live_brokers=reported("brokers"),
        partitions=reported("partitions"),
        offline_partitions=reported("offline_partitions"),
        leaders_elected=sum(1 for e in window if e["kind"] == EventKind.LEADER_ELECTED),
        load_s=(int(sends[0]["ts"]) - start) / 1000 if sends and elected_ts else None,
        fenced_on_brokers={b: n for b, n in fenced.items() if n},
        requests_sent=requests,
        milestones=milestones,
    )


def _elected_ts(events: list[dict[str, Any]], done: FailoverDone) -> int | None:
    found = [
        int(e["ts"])
        for e in events
        if e.get("kind") == EventKind.CONTROLLER_ELECTED
        and e.get("controller_epoch") == done.controller_epoch
        and int(e["ts"]) <= done.ts_ms
    ]
    return max(found) if found else None


def _group_key(event: dict[str, Any]) -> tuple[str, ...] | None:
    """Consecutive events with the same key share a milestone; None: never grouped."""
    kind = event["kind"]
    if kind == EventKind.CONTROL_REQUEST_SENT:
        return (kind, str(event.get("api")))
    if kind in (EventKind.LEADER_ELECTED, EventKind.LEADER_ELECTION_FAILED):
        return (kind,)
    return None


def _milestones(window: list[dict[str, Any]], start: int) -> list[Milestone]:
    groups: list[list[dict[str, Any]]] = []
    for event in window:
        key = _group_key(event)
        if groups and key is not None and _group_key(groups[-1][0]) == key:
            groups[-1].append(event)
        else:
            groups.append([event])
    return [Milestone((int(g[0]["ts"]) - start) / 1000, _describe(g)) for g in groups]


def _describe(group: list[dict[str, Any]]) -> str:
    first = group[0]
    kind = first["kind"]
    if kind == EventKind.CONTROLLER_FAILOVER_STEP:
        return f"failover step done: {first.get('step')}"
    if kind == EventKind.CONTROL_REQUEST_SENT:
        most = max(int(e.get("partitions", 0)) for e in group)
        return f"sent {first.get('api')} to {len(group)} brokers ({most:,} partitions)"
    if kind == EventKind.REPLICA_STATE_CHANGE:
        return (
            f"replicas on broker {first.get('broker_id')} -> {first.get('target')} "
            f"({int(first.get('replicas', 0)):,}, {first.get('failed')} failed)"
        )
    if kind == EventKind.PARTITION_STATE_CHANGE:
        return (
            f"partitions -> {first.get('target')} "
            f"({int(first.get('partitions', 0)):,}, {first.get('failed')} failed)"
        )
    if kind == EventKind.LEADER_ELECTED:
        return f"{len(group):,} leader_elected events begin"
    if kind == EventKind.LEADER_ELECTION_FAILED:
        return f"{len(group):,} leader_election_failed events begin"
    if kind == EventKind.CONTROLLER_FAILOVER_DONE:
        return "controller_failover_done"
    return str(kind)
