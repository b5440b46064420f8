"""When a run's faults did more than take broker processes away, and to whom: what an
invariant that assumes the controller can reach every live broker leaves alone.

A run's `faults.jsonl` holds, per fault (`fault`, e.g. `step-3`), its start, the check
that it took effect, its stop and its verified undo, each with the host's `ts` in ms and
the containers it acted on (`targets`, e.g. `broker2`, `zk1`: the names of the event
logs). A fault *disturbs* unless it only takes brokers away by their processes (`kill`,
`stop`, `bounce` whose targets are all brokers): a cut link, a delay, a lost reply, a
paused or starved process, an expired session, a clock, a disk can keep the controller's
requests from a broker, and any fault on a ZooKeeper server can hold up the writes that
come before them. A disturbance's span runs from its fault's first record to its last
(the verified undo, or the stop; every record when a step fired more than once under one
name). It reaches the brokers it targets, and every broker when it targets a ZooKeeper
server; a record that does not read counts as a disturbance of everything, all run long.

Pure but for `disturbances_of`, which reads the file; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventlog.jsonlines import numbered_json_lines
from rundir.layout import RunDir

__all__ = ["PROCESS_ONLY_KINDS", "Disturbance", "disturbances", "disturbances_of"]

#: The fault kinds that take brokers away by their processes and do nothing else.
PROCESS_ONLY_KINDS = frozenset({"kill", "stop", "bounce"})

#: What a disturbance that reaches everything names among its targets.
EVERYTHING = "*"


@dataclass(frozen=True, slots=True)
class Disturbance:
    """A fault that did more than take broker processes away: from `start_ms` to
    `end_ms` (host time, both included), on the containers in `targets`."""

    start_ms: int
    end_ms: int
    targets: frozenset[str]

    def meets(self, first_ms: int, last_ms: int, tail_ms: int = 0) -> bool:
        """Its span, lengthened by `tail_ms` after its end, meets [`first_ms`, `last_ms`]."""
        return self.start_ms <= last_ms and first_ms <= self.end_ms + tail_ms

    def reaches(self, nodes: Iterable[str]) -> bool:
        """It may stand between the controller and the brokers named in `nodes`: it
        targets one of them, a ZooKeeper server, or everything."""
        targets = self.targets
        if EVERYTHING in targets or any(t.startswith("zk") for t in targets):
            return True
        return any(node in targets for node in nodes)


_EVER = Disturbance(0, 2**63 - 1, frozenset({EVERYTHING}))


def _targets(record: Mapping[str, Any]) -> frozenset[str]:
    targets = record.get("targets")
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        return frozenset({EVERYTHING})
    return frozenset(targets)


def disturbances(records: Iterable[object]) -> tuple[Disturbance, ...]:
    """Every disturbance among `records` (the values of `faults.jsonl`'s lines), in order
    of start."""
    found: dict[str, Disturbance] = {}
    for record in records:
        if not isinstance(record, Mapping):
            return (_EVER,)
        ts, name = record.get("ts"), record.get("fault")
        if isinstance(ts, bool) or not isinstance(ts, int) or not isinstance(name, str):
            return (_EVER,)
        targets = _targets(record)
        brokers_only = all(t.startswith("broker") for t in targets)
        if record.get("kind") in PROCESS_ONLY_KINDS and brokers_only:
            continue
        seen = found.get(name)
        if seen is not None:
            ts_low, ts_high = min(seen.start_ms, ts), max(seen.end_ms, ts)
            found[name] = Disturbance(ts_low, ts_high, seen.targets | targets)
        else:
            found[name] = Disturbance(ts, ts, targets)
    return tuple(sorted(found.values(), key=lambda d: (d.start_ms, d.end_ms)))


def disturbances_of(run_dir: Path) -> tuple[Disturbance, ...] | None:
    """The disturbances of the run in `run_dir`; None when it recorded no `faults.jsonl`
    (its faults are unknown)."""
    path = RunDir(run_dir).faults
    if not path.exists():
        return None
    return disturbances(value for _, _, value in numbered_json_lines(path))
