"""The errors of schedules: a step naming an unknown kind or role, bad params, bad times,
and a `schedule.json` that cannot be read.

ScheduleError (a ValueError)
├── UnknownKind          a fault or action kind that is not in `chaos.kinds`
├── UnknownRole          a target role outside the grammar of `chaos.roles`, or one the
│                        kind cannot act on (a ZooKeeper server for `bounce`)
├── BadParams            a param the kind does not take, or a value out of its range
├── BadTiming            a negative time, unsorted steps, a fault after the heal, ...
└── ScheduleFormatError  `schedule.json`: not JSON, a missing or unknown field, a wrong
                         type, or a version this code does not read

Every message names the step (by its index) or the field it is about. Any thread.
"""

from __future__ import annotations

__all__ = [
    "BadParams",
    "BadTiming",
    "ScheduleError",
    "ScheduleFormatError",
    "UnknownKind",
    "UnknownRole",
]


class ScheduleError(ValueError):
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
