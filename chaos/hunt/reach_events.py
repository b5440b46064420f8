"""Reach at run time: which runs brought the moment a switch's bug acts in, read from the
event logs (docs/bugs.md, "Reach").

    python -m chaos.hunt.reach_events RUN_DIR [RUN_DIR ...]

A schedule's shape (`chaos.hunt.reach_shapes`) says a run gave a bug its chance; the
event logs say whether the moment came. Each `Moment` is something the cluster logs
whatever the build, at the point where the buggy code takes the other branch: on the
fixed build, the correct branch taken. A superseded controller's write stopped by the
epoch check is where `kafka-6082`'s any-version check lets it land; a request of an
older controller epoch refused is where `kafka-1188`'s broker obeys it. Read over the
fixed build's runs (a soak), the share of runs with a switch's moment is the chance a
fresh schedule gives that bug at all, however well its invariants would see it; a bug
whose moment never comes is out of the generator's reach, one whose moment comes often
and that the hunt misses is the invariants' to see. A moment is necessary, not
sufficient: the bug may still do no harm there (a leader's ISR write that meets a newer
version hurts under `kafka-2729` only when its own write had landed). Switches without a
moment here have none the events show plainly.

Each argument is a run directory (its `events/`, and its start in `config.json`: only
events from the run's start count, the logs of a kept cluster reaching back further) or
a directory of them (a soak's or a hunt's). A run directory that does not read is named
and skipped. Like the shapes, the moments know which switch is which: only the analysis
imports them (an import contract). Reads files; the caller's thread.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rundir.errors import RunDirError
from rundir.events import Event
from rundir.reader import load_events

__all__ = ["MOMENTS", "Moment", "main", "moments_of", "render", "run_dirs"]

Events = Sequence[Event]


@dataclass(frozen=True, slots=True)
class Moment:
    """When a switch's bug acts, in words, and whether a run's events (every node's,
    merged in time order, from the run's start) show it."""

    bugs: tuple[str, ...]
    words: str
    shown: Callable[[Events], bool]


def _any(kind: str, test: Callable[[Mapping[str, object]], bool]) -> Callable[[Events], bool]:
    return lambda events: any(e.kind == kind and test(e.fields) for e in events)


def _starts(field: str, *prefixes: str) -> Callable[[Mapping[str, object]], bool]:
    return lambda fields: str(fields.get(field, "")).startswith(prefixes)


def _then_in_one_process(
    first: Callable[[Event], bool], then: Callable[[Event], bool]
) -> Callable[[Events], bool]:
    """Whether some node logged `first`, then `then`, with no restart between."""

    def shown(events: Events) -> bool:
        seen: set[str] = set()
        for e in events:
            if e.kind == "node_started":
                seen.discard(e.node)
            elif first(e):
                seen.add(e.node)
            elif then(e) and e.node in seen:
                return True
        return False

    return shown


#: A broker process whose session was lost registered again, alive throughout.
_lost_and_registered = _then_in_one_process(
    lambda e: e.kind == "zk_session_state" and e.fields.get("state") == "lost",
    lambda e: e.kind == "broker_registered",
)
#: A controller whose session expired was elected again in the same process.
_elected_again = _then_in_one_process(
    lambda e: (
        e.kind == "controller_resigned" and _starts("reason", "its ZooKeeper session")(e.fields)
    ),
    lambda e: e.kind == "controller_elected",
)


def _reconnected_controller(events: Events) -> bool:
    """The active controller's connection was made again with its session kept."""
    active: set[str] = set()
    session: dict[str, object] = {}
    for e in events:
        if e.kind == "controller_elected":
            active.add(e.node)
        elif e.kind in ("controller_resigned", "node_started"):
            active.discard(e.node)
        elif e.kind == "zk_session_state" and e.fields.get("state") == "connected":
            kept = session.get(e.node) == e.fields.get("session_id")
            session[e.node] = e.fields.get("session_id")
            if kept and e.node in active:
                return True
    return False


def _elected_with_work_pending(events: Events) -> bool:
    """A controller elected while a topic deletion or a reassignment was unfinished."""
    deleting: set[str] = set()
    moving: set[tuple[object, object]] = set()
    for e in events:
        f = e.fields
        if e.kind == "topic_deletion_requested":
            deleting.update(str(t) for t in f.get("topics") or [])
        elif e.kind == "topic_deletion_completed":
            deleting.discard(str(f.get("topic")))
        elif e.kind == "reassignment_started":
            moving.add((f.get("topic"), f.get("partition")))
        elif e.kind == "reassignment_completed":
            moving.discard((f.get("topic"), f.get("partition")))
        elif e.kind == "controller_elected" and (deleting or moving):
            return True
    return False


_ZK_CONNECTION = ("ConnectionLoss", "OperationTimeoutError", "KazooTimeoutError")

#: Each switch's moment, as far as the events show one.
MOMENTS: tuple[Moment, ...] = (
    Moment(
        ("kafka-6082",),
        "a superseded controller's write stopped by the epoch check (it lands with the switch)",
        _any("controller_resigned", _starts("reason", "an epoch-fenced write failed")),
    ),
    Moment(
        ("kafka-1188",),
        "a broker refused a request of an older controller epoch (obeyed with the switch)",
        _any("request_rejected", lambda f: f.get("error") == "STALE_CONTROLLER_EPOCH"),
    ),
    Moment(
        ("kafka-2729",),
        "a leader's ISR write met a newer zkVersion (the leader keeps its cache with the "
        "switch; stuck when its own write had landed)",
        _any("isr_update_failed", lambda f: "BADVERSION" in str(f.get("reason", ""))),
    ),
    Moment(
        ("kafka-2300",),
        "a controller event failed on a lost ZooKeeper connection (mid state change, the "
        "switch keeps the round in the batch)",
        _any("event_failed", _starts("error", *_ZK_CONNECTION)),
    ),
    Moment(
        ("kip-380", "kafka-1120"),
        "a broker change found a broker registered again under a new epoch",
        _any("broker_change", lambda f: bool(f.get("bounced"))),
    ),
    Moment(
        ("kafka-5310",),
        "a controller resigned because its session expired, its process alive",
        _any("controller_resigned", _starts("reason", "its ZooKeeper session")),
    ),
    Moment(("kafka-4229",), "a controller whose session expired elected again", _elected_again),
    Moment(
        ("kafka-9839", "kafka-7165"),
        "a broker whose session was lost registered again, its process alive",
        _lost_and_registered,
    ),
    Moment(
        ("kafka-2437",),
        "the controller resigned on /controller naming another broker",
        _any("controller_resigned", _starts("reason", "/controller names broker")),
    ),
    Moment(
        ("kafka-13407",),
        "the active controller's connection made again, its session kept",
        _reconnected_controller,
    ),
    Moment(
        ("kafka-1681",),
        "a controller elected while a deletion or a reassignment was unfinished",
        _elected_with_work_pending,
    ),
    Moment(
        ("kafka-1367",),
        "the controller handled ISR change notifications",
        _any("isr_change_handled", lambda f: True),
    ),
)


def run_dirs(paths: Sequence[Path]) -> Iterator[Path]:
    """Each path that is a run directory (it has `events/`), else its subdirectories that
    are, in name order."""
    for path in paths:
        if (path / "events").is_dir():
            yield path
        elif path.is_dir():
            yield from sorted(p for p in path.iterdir() if (p / "events").is_dir())


def _since(run: Path) -> int:
    try:
        found = json.loads((run / "config.json").read_text()).get("started_ms", 0)
    except (OSError, ValueError, AttributeError):
        return 0
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def moments_of(run: Path) -> frozenset[str]:
    """The switches whose moment `run`'s events show (`RunDirError` when they do not
    read)."""
    since = _since(run)
    merged = sorted(
        (e for node in load_events(run).values() for e in node if e.ts >= since),
        key=lambda e: e.ts,
    )
    return frozenset(bug for m in MOMENTS if m.shown(merged) for bug in m.bugs)


def render(reached: Mapping[str, frozenset[str]]) -> str:
    """A Markdown table: per moment, the runs that showed it of all runs read."""
    total = len(reached)
    lines = ["| switch | runs with its moment | share | the moment |", "| --- | --- | --- | --- |"]
    for moment in MOMENTS:
        runs = sum(1 for found in reached.values() if moment.bugs[0] in found)
        share = f"{100 * runs / total:.0f}%" if total else "-"
        names = ", ".join(f"`{b}`" for b in moment.bugs)
        lines.append(f"| {names} | {runs}/{total} | {share} | {moment.words} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table for the runs found; 2 when none reads."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos.hunt.reach_events",
        description="which runs brought the moment each switch's bug acts in",
    )
    parser.add_argument("paths", type=Path, nargs="+", metavar="RUN_DIR")
    args = parser.parse_args(argv)
    reached: dict[str, frozenset[str]] = {}
    for run in run_dirs(args.paths):
        try:
            reached[str(run)] = moments_of(run)
        except (RunDirError, OSError) as exc:
            print(f"skipped {run}: {exc}", file=sys.stderr)
    if not reached:
        print("no run directory read", file=sys.stderr)
        return 2
    print(render(reached))
    return 0


if __name__ == "__main__":
    sys.exit(main())
