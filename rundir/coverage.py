"""The coverage of a run: which behaviours of the controller and the brokers its event logs
show, as a set of short names. The blind hunt (`python -m chaos hunt`, docs/bugs.md)
prefers schedules that reached behaviours few runs reached; anyone may compare two runs
by what they made the cluster do.

A behaviour is `<family>:<detail>`:

    kind:<event kind>                   every event kind written during the run
    partition:<from>-><to>              a partition state machine move, per topic
    replica:<from>-><to>                a replica state machine move, per broker
    refused:<machine>:<from>-><to>      a transition a state machine refused
    fenced:<api>:<error>                a broker fencing a control request (the whole
                                        request, or partitions of it by their error)
    response:<api>:<error>              a control request answered with an error
    error:<api>:<error>                 a request that failed or was refused as invalid
    election:<strategy>[:unclean]       a leader elected, by how
    election-failed:<reason>            a leader the controller could not elect
    resigned:<reason>                   a controller resigning, by why
    event-failed:<event>                a controller event whose handling raised
    isr:<reason>                        an ISR written: `shrink`, `expand`, `replica offline`
    isr-update-failed:<reason>          a leader's ISR write that failed
    session:<state>                     a broker's ZooKeeper session: `suspended`, `lost`, ...
    parked:<error>                      a follower fetcher parked on an error

The `from` of a state machine move is the topic's (or broker's) last target in the same
node's log since its controller was elected; `-` when there is none (the controller read
the state at its failover, without an event). Reasons keep their first clause with every
number replaced by `N`, so that epochs and ids do not make new behaviours.

Only events written from the run's start (`since_ms`) count; the logs before it are read
for the states the run's moves start from. `coverage_of` is pure; `run_coverage`,
`write_coverage` and `read_coverage` read and write a run directory's `coverage.json` on
the caller's thread (`read_coverage` computes it from the event logs of a run recorded
before there was one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from eventlog import EventKind
from rundir.errors import RunDirError
from rundir.events import Event, EventLogs
from rundir.layout import RunDir
from rundir.reader import load_events

__all__ = [
    "COVERAGE_VERSION",
    "coverage_json",
    "coverage_of",
    "read_coverage",
    "run_coverage",
    "write_coverage",
]

#: Bumped when a behaviour's name changes meaning; written into `coverage.json`.
COVERAGE_VERSION = 1
#: A state machine move whose starting state no event of the node's controller named.
UNKNOWN_STATE = "-"
_REASON_LENGTH = 60
_NUMBER = re.compile(r"\d+")


def _shape(text: object) -> str:
    """A reason's first clause, numbers as `N`: `an epoch-fenced write failed: ...` ->
    `an epoch-fenced write failed`."""
    words = str(text).split(":", 1)[0].split("(", 1)[0].strip()
    return _NUMBER.sub("N", words)[:_REASON_LENGTH] or "?"


class _Machines:
    """The last target of each topic's partitions and each broker's replicas in one node's
    log, forgotten when the node's controller is elected again."""

    def __init__(self) -> None:
        self.partitions: dict[str, str] = {}
        self.replicas: dict[object, str] = {}

    def reset(self) -> None:
        self.partitions.clear()
        self.replicas.clear()

    def partition_moves(self, event: Event) -> list[str]:
        target = str(event.fields.get("target"))
        topics = event.fields.get("topics")
        moves = []
        for topic in topics if isinstance(topics, list) else []:
            before = self.partitions.get(str(topic), UNKNOWN_STATE)
            self.partitions[str(topic)] = target
            moves.append(f"partition:{before}->{target}")
        return moves or [f"partition:{UNKNOWN_STATE}->{target}"]

    def replica_moves(self, event: Event) -> list[str]:
        target = str(event.fields.get("target"))
        broker = event.fields.get("broker_id")
        before = self.replicas.get(broker, UNKNOWN_STATE)
        self.replicas[broker] = target
        return [f"replica:{before}->{target}"]


#: The kinds one field names the behaviour of: kind -> (family, field, whether the
#: request's `api` comes between them, whether the field is a reason to shape).
_ONE_FIELD: dict[str, tuple[str, str, bool, bool]] = {
    EventKind.REQUEST_REJECTED: ("fenced", "error", True, False),
    EventKind.REQUEST_FAILED: ("error", "error", True, False),
    EventKind.REQUEST_INVALID: ("error", "error", True, False),
    EventKind.LEADER_ELECTION_FAILED: ("election-failed", "reason", False, True),
    EventKind.CONTROLLER_RESIGNED: ("resigned", "reason", False, True),
    EventKind.EVENT_FAILED: ("event-failed", "event", False, False),
    EventKind.ISR_CHANGED: ("isr", "reason", False, False),
    EventKind.ISR_UPDATE_FAILED: ("isr-update-failed", "reason", False, True),
    EventKind.ZK_SESSION_STATE: ("session", "state", False, False),
    EventKind.FETCHER_PARKED: ("parked", "error", False, False),
}


def _behaviours(event: Event, machines: _Machines) -> list[str]:
    """The behaviours one event shows (besides its kind), moving `machines` on."""
    f = event.fields
    api = f.get("api", "?")
    if event.kind in _ONE_FIELD:
        family, name, with_api, shaped = _ONE_FIELD[event.kind]
        value = _shape(f.get(name)) if shaped else f.get(name)
        return [f"{family}:{api}:{value}" if with_api else f"{family}:{value}"]
    match event.kind:
        case EventKind.CONTROLLER_ELECTED | EventKind.NODE_STARTED:
            machines.reset()
            return []
        case EventKind.PARTITION_STATE_CHANGE:
            return machines.partition_moves(event)
        case EventKind.REPLICA_STATE_CHANGE:
            return machines.replica_moves(event)
        case EventKind.INVALID_STATE_TRANSITION:
            return [f"refused:{f.get('machine')}:{f.get('current')}->{f.get('target')}"]
        case EventKind.PARTITION_FENCED:
            errors = f.get("errors")
            return [f"fenced:{api}:{e}" for e in sorted(errors)] if isinstance(errors, dict) else []
        case EventKind.CONTROL_RESPONSE_RECEIVED if f.get("error") != "NONE":
            return [f"response:{api}:{f.get('error')}"]
        case EventKind.LEADER_ELECTED:
            unclean = ":unclean" if f.get("unclean") is True else ""
            return [f"election:{f.get('strategy')}{unclean}"]
    return []


def _node_coverage(events: Sequence[Event], since_ms: int) -> set[str]:
    machines = _Machines()
    reached: set[str] = set()
    for event in events:
        shown = _behaviours(event, machines)
        if event.ts >= since_ms:
            reached.add(f"kind:{event.kind}")
            reached.update(shown)
    return reached


def coverage_of(logs: EventLogs, since_ms: int = 0) -> frozenset[str]:
    """The behaviours (see the module docstring) that events written at or after
    `since_ms` show, over every node's log."""
    reached: set[str] = set()
    for node in sorted(logs):
        reached |= _node_coverage(logs[node], since_ms)
    return frozenset(reached)


def coverage_json(behaviours: Iterable[str], since_ms: int) -> dict[str, Any]:
    """The `coverage.json` object: version, the run's start, the behaviours sorted."""
    return {
        "coverage_version": COVERAGE_VERSION,
        "since_ms": since_ms,
        "behaviours": sorted(behaviours),
    }


def _started_ms(run_dir: Path) -> int:
    """The run's start from `config.json` (0 when it does not say: every event counts)."""
    try:
        found = RunDir(run_dir).read_json(RunDir(run_dir).config).get("started_ms")
    except (OSError, ValueError):
        return 0
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def run_coverage(run_dir: Path) -> frozenset[str]:
    """The coverage of a recorded run, from its event logs and the start in its config
    (`RunDirError` when it has no events/ or a line breaks the event envelope)."""
    return coverage_of(load_events(run_dir), _started_ms(run_dir))


def write_coverage(run_dir: Path, behaviours: Iterable[str], since_ms: int) -> Path:
    """Write `coverage.json` into `run_dir`; its path."""
    layout = RunDir(run_dir)
    layout.write_json(layout.coverage, coverage_json(behaviours, since_ms))
    return layout.coverage


def read_coverage(run_dir: Path) -> frozenset[str]:
    """The behaviours of `run_dir`'s `coverage.json`, computed from its event logs (and
    written) when it has none or one of another version; `RunDirError` when neither
    reads."""
    layout = RunDir(run_dir)
    try:
        found = layout.read_json(layout.coverage)
    except FileNotFoundError:
        found = {}
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{layout.coverage}: {exc}") from None
    listed = found.get("behaviours")
    if found.get("coverage_version") == COVERAGE_VERSION and isinstance(listed, list):
        return frozenset(str(b) for b in listed)
    behaviours = run_coverage(run_dir)
    write_coverage(run_dir, behaviours, _started_ms(run_dir))
    return behaviours


def _main(argv: Sequence[str]) -> int:
    """`python -m rundir.coverage RUN_DIR...`: print each run's behaviours as JSON."""
    for arg in argv:
        path = Path(arg)
        print(json.dumps({"run_dir": str(path), "behaviours": sorted(read_coverage(path))}))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
