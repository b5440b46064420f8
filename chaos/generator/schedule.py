"""Schedules: which faults start when, on which role, for how long; the admin actions run
between them; when everything is healed; and when the run ends. A schedule is data: it is
written to the run's `schedule.json` before the run and can be replayed from there.

    Schedule(seed, steps=(Step(at_s, duration_s, FaultSpec(kind, target, params)), ...),
             heal_at_s, end_s, actions=(Action(at_s, kind, params), ...),
             replication=Replication(factor, min_insync) or None for the scenario's)

Times are seconds from the start of the workload. A step's fault starts at `at_s` and is
stopped at `at_s + duration_s` (an instant fault such as `bounce` has duration 0). A step
with a `Trigger` starts instead on the first node event it names written from `at_s` on,
looked for until `at_s + within_s`, and lasts `duration_s` from then: a fault that must
land in a window a few hundred milliseconds wide (after the controller's elections, say)
is placed by the cluster's own events, not by a guess at how long the cluster takes. At
`heal_at_s` the runner stops whatever is still active; from then until `end_s` no fault
is active, and the cluster must converge within the scenario's bound. Actions
(`chaos.generator.action_kinds`: `reassign`) are performed at their time and have nothing to undo.

`chaos.generator.random_mix` draws a seeded schedule.

Errors are `chaos.errors.ScheduleError`s. Values are immutable; pure; any thread.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos.errors import BadTiming, ScheduleError, ScheduleFormatError
from chaos.faults.base import Fault
from chaos.faults.params import ParamItems, Scalar, normalize_params
from chaos.faults.registry import check_target, fault_type
from chaos.generator.action_kinds import action_kind
from chaos.generator.replication import Replication
from eventlog.kinds import EventKind

__all__ = [
    "SCHEDULE_FILE",
    "SCHEDULE_VERSION",
    "Action",
    "FaultSpec",
    "Schedule",
    "Step",
    "Trigger",
    "read_schedule",
    "seconds",
    "write_schedule",
]

#: The version of `schedule.json` this code writes and reads.
SCHEDULE_VERSION = 1
#: The schedule's file name in a run directory.
SCHEDULE_FILE = "schedule.json"


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """A fault as data: its kind (`chaos.faults.registry.FAULT_TYPES`), its target role
    (`chaos.cluster.roles`) and its params, stored as `(name, value)` items sorted by name with
    every default filled in, so the value is hashable (`FaultSpec.of` takes a mapping)."""

    kind: str
    target: str
    params: ParamItems = ()

    def __post_init__(self) -> None:
        kind = fault_type(self.kind)
        check_target(kind, self.target)
        object.__setattr__(self, "params", normalize_params(self.kind, kind.params, self.params))

    @classmethod
    def of(cls, kind: str, target: str, params: Mapping[str, Scalar] | None = None) -> FaultSpec:
        """A spec with params given as a mapping."""
        return cls(kind, target, tuple((params or {}).items()))

    def param(self, name: str) -> Scalar:
        """One param's value; `KeyError` if the kind has no such param."""
        return dict(self.params)[name]

    def fault(self, targets: tuple[str, ...]) -> Fault:
        """The fault this spec makes on `targets`, the services its role resolved to
        (`chaos.faults.registry.FaultType.build`); `FaultError` if they do not make one."""
        return fault_type(self.kind).build(targets, dict(self.params))

    def describe(self) -> str:
        """`kill controller` or `loss busiest-leader percent=20`."""
        extra = " ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.kind} {self.target}" + (f" {extra}" if extra else "")


def seconds(value: object, what: str) -> float:
    """`value` as seconds: a finite number, not negative; `BadTiming` names `what` else."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadTiming(f"{what} must be a number of seconds, got {value!r}")
    if value < 0:
        raise BadTiming(f"{what} must not be negative, got {value}")
    return float(value)


#: The longest a trigger may be looked for.
MAX_TRIGGER_WAIT_S = 120.0
#: How long a trigger is looked for unless it says.
TRIGGER_WAIT_S = 20.0


@dataclass(frozen=True, slots=True)
class Trigger:
    """What starts a step instead of its time: the first node event of `kind`
    (`eventlog.kinds.EventKind`, docs/events.md) whose fields equal every `match` item,
    written at or after the step's `at_s`; looked for until `at_s + within_s`, after which
    the step is not performed (the run reports it among its failed steps, unless the
    trigger is `optional`: a drawn chance the cluster may not offer). `match` is stored as
    `(field, value)` items sorted by field, like params."""

    kind: str
    match: ParamItems = ()
    within_s: float = TRIGGER_WAIT_S
    optional: bool = False

    def __post_init__(self) -> None:
        if self.kind not in {k.value for k in EventKind}:
            raise ScheduleError(f"a trigger's kind must be an event kind, got {self.kind!r}")
        items = dict(self.match)
        for name, value in items.items():
            if not isinstance(name, str) or not name or name in ("kind", "ts"):
                raise ScheduleError(f"a trigger matches event fields by name, got {name!r}")
            if value is not None and not isinstance(value, str | int | float | bool):
                raise ScheduleError(f"a trigger's {name} must be a JSON scalar, got {value!r}")
        object.__setattr__(self, "match", tuple(sorted(items.items())))
        within = seconds(self.within_s, "within_s")
        if not 0 < within <= MAX_TRIGGER_WAIT_S:
            raise BadTiming(f"within_s must be above 0 and at most {MAX_TRIGGER_WAIT_S:g}")
        object.__setattr__(self, "within_s", within)

    def matches(self, event: Mapping[str, Any]) -> bool:
        """`event` (a decoded event log line) is of this kind with every matched field."""
        if event.get("kind") != self.kind:
            return False
        return all(name in event and event[name] == value for name, value in self.match)

    def describe(self) -> str:
        """`on partition_state_change target=OnlinePartition within 20s` (`, if it comes`
        for an optional one)."""
        fields = "".join(f" {k}={v}" for k, v in self.match)
        maybe = ", if it comes" if self.optional else ""
        return f"on {self.kind}{fields} within {self.within_s:g}s{maybe}"

    def to_json(self) -> dict[str, Any]:
        """The step's `on_event` object (`optional` only when true)."""
        found = {"kind": self.kind, "match": dict(self.match), "within_s": self.within_s}
        return found | ({"optional": True} if self.optional else {})


@dataclass(frozen=True, slots=True)
class Step:
    """One fault of a schedule: started at `at_s` (or on its `trigger`, looked for from
    `at_s`) and stopped `duration_s` after it started."""

    at_s: float
    duration_s: float
    fault: FaultSpec
    trigger: Trigger | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "at_s", seconds(self.at_s, "at_s"))
        object.__setattr__(self, "duration_s", seconds(self.duration_s, "duration_s"))
        lasts = fault_type(self.fault.kind).lasts
        if lasts is False and self.duration_s != 0:
            raise BadTiming(f"{self.fault.kind} is instant: its duration must be 0")
        if lasts is True and self.duration_s == 0:
            raise BadTiming(f"{self.fault.kind} lasts: its duration must be above 0")

    @property
    def ends_s(self) -> float:
        """When the fault is stopped; for a triggered step the latest it can be (the
        trigger seen at the end of its wait)."""
        wait = self.trigger.within_s if self.trigger is not None else 0.0
        return self.at_s + wait + self.duration_s

    def describe(self) -> str:
        """`12.0s +15.0s kill controller`, with ` on <event> ...` for a triggered step."""
        text = f"{self.at_s:.1f}s +{self.duration_s:.1f}s {self.fault.describe()}"
        return text + (f" {self.trigger.describe()}" if self.trigger is not None else "")


@dataclass(frozen=True, slots=True)
class Action:
    """An admin operation the runner performs at `at_s`
    (`chaos.generator.action_kinds.ACTION_KINDS`)."""

    at_s: float
    kind: str
    params: ParamItems = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "at_s", seconds(self.at_s, "at_s"))
        rules = action_kind(self.kind).params
        object.__setattr__(self, "params", normalize_params(self.kind, rules, self.params))

    def param(self, name: str) -> Scalar:
        """One param's value; `KeyError` if the kind has no such param."""
        return dict(self.params)[name]


@dataclass(frozen=True, slots=True)
class Schedule:
    """Steps sorted by start time, actions sorted by time, the heal time and the end (see
    the module docstring). Validated on construction; `seed` is the seed it was drawn
    from, if any."""

    seed: int | None
    steps: tuple[Step, ...]
    heal_at_s: float
    end_s: float
    actions: tuple[Action, ...] = field(default=())
    #: The workload topic's replication, when the schedule sets it (`None`: the scenario's).
    replication: Replication | None = None

    def __post_init__(self) -> None:
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ScheduleError(f"seed must be an integer or None, got {self.seed!r}")
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "actions", tuple(self.actions))
        if self.replication is not None and not isinstance(self.replication, Replication):
            raise ScheduleError(f"replication must be a Replication, got {self.replication!r}")
        heal = seconds(self.heal_at_s, "heal_at_s")
        end = seconds(self.end_s, "end_s")
        object.__setattr__(self, "heal_at_s", heal)
        object.__setattr__(self, "end_s", end)
        if heal >= end:
            raise BadTiming(f"heal_at_s ({heal}) must come before end_s ({end}): a heal phase")
        starts: tuple[tuple[str, list[float]], ...] = (
            ("step", [s.at_s for s in self.steps]),
            ("action", [a.at_s for a in self.actions]),
        )
        for what, times in starts:
            for i, (before, after) in enumerate(itertools.pairwise(times)):
                if after < before:
                    raise BadTiming(f"{what} {i + 1} starts before {what} {i}: sort by at_s")
        for i, step in enumerate(self.steps):
            if step.ends_s > heal:
                raise BadTiming(f"step {i} ({step.describe()}) ends after heal_at_s ({heal})")
        for i, action in enumerate(self.actions):
            if action.at_s > heal:
                raise BadTiming(f"action {i} ({action.kind}) comes after heal_at_s ({heal})")

    @property
    def last_fault_end_s(self) -> float:
        """When the last fault stops (0 without steps)."""
        return max((step.ends_s for step in self.steps), default=0.0)

    def active_at(self, t: float) -> tuple[Step, ...]:
        """The steps whose fault is active at time `t` (started, not yet stopped); a
        triggered step counts from `at_s` to the latest it can end."""
        return tuple(s for s in self.steps if s.at_s <= t < s.ends_s)

    def describe(self) -> str:
        """One line per step and action in time order, then the heal and the end."""
        lines = [(s.at_s, s.describe()) for s in self.steps]
        for a in self.actions:
            params = " ".join(f"{k}={v}" for k, v in a.params)
            lines.append((a.at_s, f"{a.at_s:.1f}s action {a.kind} {params}".rstrip()))
        lines.sort(key=lambda line: line[0])
        if self.replication is not None:
            lines.insert(0, (0.0, f"workload at {self.replication.describe()}"))
        ends = [f"{self.heal_at_s:.1f}s heal", f"{self.end_s:.1f}s end"]
        return "\n".join([text for _, text in lines] + ends)

    def to_json(self) -> dict[str, Any]:
        """The `schedule.json` object (version `SCHEDULE_VERSION`)."""
        return {
            "version": SCHEDULE_VERSION,
            "seed": self.seed,
            "heal_at_s": self.heal_at_s,
            "end_s": self.end_s,
            "steps": [_step_json(s) for s in self.steps],
            "actions": [
                {"at_s": a.at_s, "kind": a.kind, "params": dict(a.params)} for a in self.actions
            ],
        } | ({"replication": self.replication.to_json()} if self.replication else {})

    @classmethod
    def from_json(cls, data: object) -> Schedule:
        """The schedule a `to_json` object describes. `ScheduleFormatError` for a missing or
        unknown field, a wrong type or another version; other `ScheduleError`s for values
        that do not make a schedule (each message names the step)."""
        required = {"version", "seed", "heal_at_s", "end_s", "steps"}
        top = _object(data, "schedule", required, {"actions", "replication"})
        version = top["version"]
        if version != SCHEDULE_VERSION:
            raise ScheduleFormatError(
                f"schedule version {version!r} is not readable here (this code reads "
                f"version {SCHEDULE_VERSION})"
            )
        steps = []
        for i, raw in enumerate(_array(top["steps"], "steps")):
            where = f"step {i}"
            s = _object(
                raw, where, {"at_s", "duration_s", "kind", "target"}, {"params", "on_event"}
            )
            try:
                fault = FaultSpec(s["kind"], s["target"], _param_object(s.get("params"), where))
                trigger = _trigger(s.get("on_event"), where)
                steps.append(Step(s["at_s"], s["duration_s"], fault, trigger))
            except ScheduleError as exc:
                raise type(exc)(f"{where}: {exc}") from None
        actions = []
        for i, raw in enumerate(_array(top.get("actions", []), "actions")):
            where = f"action {i}"
            a = _object(raw, where, {"at_s", "kind"}, {"params"})
            try:
                actions.append(Action(a["at_s"], a["kind"], _param_object(a.get("params"), where)))
            except ScheduleError as exc:
                raise type(exc)(f"{where}: {exc}") from None
        raw_replication = top.get("replication")
        replication = None if raw_replication is None else Replication.from_json(raw_replication)
        return cls(
            top["seed"], tuple(steps), top["heal_at_s"], top["end_s"], tuple(actions), replication
        )


def _step_json(step: Step) -> dict[str, Any]:
    line: dict[str, Any] = {
        "at_s": step.at_s,
        "duration_s": step.duration_s,
        "kind": step.fault.kind,
        "target": step.fault.target,
        "params": dict(step.fault.params),
    }
    if step.trigger is not None:
        line["on_event"] = step.trigger.to_json()
    return line


def _trigger(data: object, where: str) -> Trigger | None:
    if data is None:
        return None
    t = _object(data, f"{where}: on_event", {"kind"}, {"match", "within_s", "optional"})
    match = t.get("match", {})
    if not isinstance(match, dict):
        raise ScheduleFormatError(f"{where}: on_event's match must be a JSON object")
    optional = t.get("optional", False)
    if not isinstance(optional, bool):
        raise ScheduleFormatError(f"{where}: on_event's optional must be true or false")
    return Trigger(t["kind"], tuple(match.items()), t.get("within_s", TRIGGER_WAIT_S), optional)


def _object(
    data: object, where: str, required: set[str], optional: frozenset[str] | set[str] = frozenset()
) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ScheduleFormatError(f"{where} must be a JSON object, got {type(data).__name__}")
    missing = sorted(required - data.keys())
    if missing:
        raise ScheduleFormatError(f"{where} lacks {', '.join(missing)}")
    allowed = required | set(optional)
    unknown = sorted(str(k) for k in data.keys() - allowed)
    if unknown:
        raise ScheduleFormatError(f"{where} has unknown fields {', '.join(unknown)}")
    return data


def _array(data: object, where: str) -> list[Any]:
    if not isinstance(data, list):
        raise ScheduleFormatError(f"{where} must be a JSON array, got {type(data).__name__}")
    return data


def _param_object(data: object, where: str) -> ParamItems:
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise ScheduleFormatError(f"{where}: params must be a JSON object")
    return tuple(data.items())


def write_schedule(path: Path, schedule: Schedule) -> None:
    """Write `schedule` as JSON to `path` (the caller's thread)."""
    path.write_text(json.dumps(schedule.to_json(), indent=2) + "\n", encoding="utf-8")


def read_schedule(path: Path) -> Schedule:
    """Read a schedule written by `write_schedule`; `ScheduleFormatError` (naming the file)
    when it is not JSON, other `ScheduleError`s when its content does not make a schedule."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ScheduleFormatError(f"{path}: not JSON: {exc}") from None
    try:
        return Schedule.from_json(data)
    except ScheduleError as exc:
        raise type(exc)(f"{path}: {exc}") from None
