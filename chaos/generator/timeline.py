"""The order in which a runner performs a schedule: every start, stop and action, then the
heal and the end, as one list sorted by time.

At the same time a stop comes before an action and an action before a start, so a fault
that ends when another begins is undone first; the heal and the end come last. A fault of
duration 0 (`bounce`, a `session-expire` that heals at once) has a start and no stop cue:
the runner starts it, waits for its took-effect check and stops it right away. A step with
a trigger has its start cue at `at_s`, where the runner begins to look for its event, and
no stop cue: when it starts is known only then, and the runner stops it `duration_s`
later. Among cues of one type at one time, lower step or action indices come first.

Pure; any thread.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from chaos.generator.schedule import Schedule

__all__ = ["Cue", "CueType", "timeline"]


class CueType(enum.Enum):
    """What happens at a cue, in the order cues at one time are performed."""

    STOP = "stop"
    ACTION = "action"
    START = "start"
    HEAL = "heal"
    END = "end"


_RANK = {t: i for i, t in enumerate(CueType)}


@dataclass(frozen=True, slots=True)
class Cue:
    """At `at_s`, do `type` to step (or action) `index`; `index` is None for the heal and
    the end."""

    at_s: float
    type: CueType
    index: int | None = None


def timeline(schedule: Schedule) -> tuple[Cue, ...]:
    """Every cue of `schedule`, in the order to perform them (see the module docstring)."""
    cues = [Cue(s.at_s, CueType.START, i) for i, s in enumerate(schedule.steps)]
    cues += [
        Cue(s.ends_s, CueType.STOP, i)
        for i, s in enumerate(schedule.steps)
        if s.duration_s and s.trigger is None
    ]
    cues += [Cue(a.at_s, CueType.ACTION, i) for i, a in enumerate(schedule.actions)]
    cues += [Cue(schedule.heal_at_s, CueType.HEAL), Cue(schedule.end_s, CueType.END)]
    return tuple(sorted(cues, key=lambda c: (c.at_s, _RANK[c.type], c.index or 0)))
