"""Invariant 4: at most one leader per partition per leader epoch, and a partition's leader
epochs only grow. Pure function of the event logs; any thread.

Judged from the writes of each partition's state znode, which every writer logs after
the write succeeded, with the znode's new zkVersion:

- `leader_elected` (any controller): the new leader, leader epoch and zkVersion;
- `isr_changed` by a controller (`by: "controller"`, an offline replica removed): the
  leader after the write (-1 when the leader was removed) and the bumped epoch;
- `isr_changed` by a partition leader (no `by`): itself as leader at its unchanged epoch.

The brokers' accepted LeaderAndIsr requests cannot be used: `request_accepted` counts the
partitions but does not name them, and `partition_fenced` names only a sample.
`partition_state_change` carries counts only.

Every conditional write of a znode gets the next zkVersion, so the writes of one
partition are totally ordered by it, whichever controller or leader made them. A
partition deleted and created again starts over at zkVersion 0: its writes are cut into
incarnations at each `leader_elected` with strategy `"initial"` (by wall-clock `ts`; the
nodes share the host's clock). Within an incarnation:

1. all writes at one leader epoch name the same leader;
2. along zkVersion the leader epoch never decreases, and a `leader_elected` has an epoch
   above every epoch written before it;
3. no two writes claim the same zkVersion with a different leadership.

Writes that are not logged (the leader epoch bump at the start of a reassignment) leave
gaps; gaps break nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from eventlog import EventKind, IsrChanged, LeaderElected
from rundir.events import Event, EventLogs, events_of_kind
from rundir.invariants.names import ONE_LEADER_PER_LEADER_EPOCH
from rundir.results import InvariantResult, Violation

__all__ = ["ONE_LEADER_PER_LEADER_EPOCH", "one_leader_per_leader_epoch"]


@dataclass(frozen=True, slots=True)
class _Write:
    """One logged write of a partition's state znode."""

    event: Event
    written: LeaderElected | IsrChanged
    leader: int
    leader_epoch: int
    zk_version: int
    isr: tuple[int, ...]

    @property
    def is_election(self) -> bool:
        return isinstance(self.written, LeaderElected)

    @property
    def creates(self) -> bool:
        return isinstance(self.written, LeaderElected) and self.written.strategy == "initial"


def one_leader_per_leader_epoch(logs: EventLogs) -> InvariantResult:
    """Invariant 4 over `leader_elected` and `isr_changed` of every log (see the module
    docstring for why these events and what is judged)."""
    writes: dict[str, list[_Write]] = defaultdict(list)
    missing = 0
    for event in events_of_kind(logs, EventKind.LEADER_ELECTED, EventKind.ISR_CHANGED):
        write = _write(event)
        if write is None:
            missing += 1
            continue
        writes[f"{write.written.topic}-{write.written.partition}"].append(write)
    violations: list[Violation] = []
    for tp in sorted(writes):
        for incarnation in _incarnations(writes[tp]):
            violations.extend(_one_leader_per_epoch(tp, incarnation))
            violations.extend(_epochs_grow(tp, incarnation))
    checked = sum(len(w) for w in writes.values())
    note = f"{missing} events without all their fields, or with one of another type"
    return InvariantResult(
        ONE_LEADER_PER_LEADER_EPOCH, tuple(violations), checked, note if missing else ""
    )


def _write(event: Event) -> _Write | None:
    """The write `event` logged; None when it is not a complete election or ISR change."""
    written = event.decoded()
    if not isinstance(written, (LeaderElected, IsrChanged)):
        return None
    w = written
    return _Write(event, w, w.leader, w.leader_epoch, w.zk_version, tuple(w.isr))


def _incarnations(writes: Sequence[_Write]) -> list[list[_Write]]:
    """The writes cut at each creation of the partition, in wall-clock order."""
    ordered = sorted(writes, key=lambda w: (w.event.ts, w.event.node, w.event.line))
    out: list[list[_Write]] = [[]]
    for w in ordered:
        if w.creates and out[-1]:
            out.append([])
        out[-1].append(w)
    return [i for i in out if i]


def _one_leader_per_epoch(tp: str, writes: Sequence[_Write]) -> list[Violation]:
    by_epoch: dict[int, dict[int, _Write]] = defaultdict(dict)
    for w in writes:
        by_epoch[w.leader_epoch].setdefault(w.leader, w)
    out = []
    for epoch, leaders in sorted(by_epoch.items()):
        if len(leaders) > 1:
            named = ", ".join(str(leader) for leader in sorted(leaders))
            out.append(
                Violation(
                    f"{tp} leader epoch {epoch}",
                    f"leader epoch {epoch} was written with leaders {named}",
                    tuple(leaders[leader].event for leader in sorted(leaders)),
                )
            )
    return out


def _epochs_grow(tp: str, writes: Sequence[_Write]) -> list[Violation]:
    out: list[Violation] = []
    by_version: dict[int, _Write] = {}
    for w in writes:
        seen = by_version.setdefault(w.zk_version, w)
        if seen is not w and (seen.leader, seen.leader_epoch, seen.isr) != (
            w.leader,
            w.leader_epoch,
            w.isr,
        ):
            out.append(
                Violation(
                    f"{tp} zkVersion {w.zk_version}",
                    f"two writes claim zkVersion {w.zk_version}: leader {seen.leader} epoch "
                    f"{seen.leader_epoch} and leader {w.leader} epoch {w.leader_epoch}",
                    (seen.event, w.event),
                )
            )
    highest: _Write | None = None
    for version in sorted(by_version):
        w = by_version[version]
        if highest is not None:
            if w.leader_epoch < highest.leader_epoch:
                out.append(
                    Violation(
                        f"{tp} leader epoch {w.leader_epoch}",
                        f"leader epoch went back to {w.leader_epoch} at zkVersion {version} "
                        f"after {highest.leader_epoch} at zkVersion {highest.zk_version}",
                        (highest.event, w.event),
                    )
                )
            elif w.is_election and w.leader_epoch == highest.leader_epoch:
                out.append(
                    Violation(
                        f"{tp} leader epoch {w.leader_epoch}",
                        f"leader {w.leader} elected at epoch {w.leader_epoch} (zkVersion "
                        f"{version}), already written at zkVersion {highest.zk_version}",
                        (highest.event, w.event),
                    )
                )
        if highest is None or w.leader_epoch >= highest.leader_epoch:
            highest = w
    return out
