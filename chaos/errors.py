"""The root of chaos's errors, and the errors shared across its subpackages: those of
schedules (a step naming an unknown kind or role, bad params, bad times, a `schedule.json`
that cannot be read) and those of faults (a foreign container, an unknown target, a
failed mechanism). The whole tree is drawn in `chaos`'s package docstring.

ChaosError
├── ScheduleError (a ValueError)
│   ├── UnknownKind          a fault or action kind that is not in `chaos.faults.registry`
│   │                        or `chaos.generator.action_kinds`
│   ├── UnknownRole          a target role outside the grammar of `chaos.cluster.roles`,
│   │                        or one the kind cannot act on (a ZooKeeper server for `bounce`)
│   ├── BadParams            a param the kind does not take, or a value out of its range
│   ├── BadTiming            a negative time, unsorted steps, a fault after the heal, ...
│   └── ScheduleFormatError  `schedule.json`: not JSON, a missing or unknown field, a wrong
│                            type, or a version this code does not read
└── FaultError
    ├── ForeignContainer     the target does not carry the run's compose project label
    ├── UnknownTarget        no container/role of that name in the project
    │   └── NoTargetNow      a role that names nobody now: the brokers it could name are
    │                        down, no controller or ZooKeeper leader is elected yet
    └── FaultFailed          the mechanism failed (docker API, nsenter, iptables, tc)

Every schedule message names the step (by its index) or the field it is about. Any thread.
"""

from __future__ import annotations

__all__ = [
    "BadParams",
    "BadTiming",
    "ChaosError",
    "FaultError",
    "FaultFailed",
    "ForeignContainer",
    "NoTargetNow",
    "ScheduleError",
    "ScheduleFormatError",
    "UnknownKind",
    "UnknownRole",
    "UnknownTarget",
]


class ChaosError(Exception):
    """The root of every error `chaos` raises."""


class ScheduleError(ChaosError, ValueError):
    """Base of the schedule errors."""


class UnknownKind(ScheduleError):
    """A fault or action kind that no module implements."""


class UnknownRole(ScheduleError):
    """A target role outside the grammar, or one the fault kind cannot act on."""


class BadParams(ScheduleError):
    """A param the kind does not take, or a value out of range."""


class BadTiming(ScheduleError):
    """Times that do not make a schedule: negative, unsorted, or past the heal or the end."""


class ScheduleFormatError(ScheduleError):
    """A `schedule.json` that cannot be read back into a schedule."""


class FaultError(ChaosError):
    """Base of the fault errors."""


class ForeignContainer(FaultError):
    """A container that does not belong to the run's compose project was addressed."""


class UnknownTarget(FaultError):
    """A service or role that the project does not have."""


class NoTargetNow(UnknownTarget):
    """A role that names nobody at this moment: what it could name is down or not elected
    (other faults took it away), not a role the project lacks."""


class FaultFailed(FaultError):
    """Applying or undoing a fault failed in its mechanism."""
