"""Which of the generic mix's groups of faults a schedule holds: `groups_in(schedule)`,
by the names the blind hunt's grafts use (`chaos.hunt.corpus.GRAFTS`): the correlated
faults of `chaos.generator.correlated` (`double-outage`, `failover-after-restart`,
`flapping-controller`, `lost-replies-while-isrs-change`,
`restart-under-slow-controller`, `frozen-controller`, `backdrop`), the `cut-in-turn`,
the `lost-registration` of `chaos.generator.lost_registration`, the
`reset-mid-failover` of `chaos.generator.reset_mid_failover` and the `race` of
`chaos.generator.races`.

Each group is recognised by its shape, not by how the schedule came to hold it: the steps
and actions the draw makes, within the bounds the draw keeps (a mutation that shifted a
step out of them leaves a schedule without that group). A shape the timed faults happen
to form counts too (a `pause` of `controller` past the session is a frozen controller
whoever drew it). The blind hunt counts them to graft the groups its runs have held
least. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from chaos.generator.correlated import (
    CUT_LAG,
    FAILOVER_LAG,
    OUTAGE_KINDS,
    SLOW_RESTART_LAG,
)
from chaos.generator.overlap import takes_broker_away
from chaos.generator.reset_mid_failover import ELECTIONS, KILL_AFTER_S, RESET
from chaos.generator.schedule import FaultSpec, Schedule, Step
from chaos.generator.timings import BACKDROP_HOLD, OUTAGE_HOLD

__all__ = ["GROUPS", "groups_in"]

#: Slack on the draws' bounds for the 0.1 s rounding of their steps (s).
_SLACK = 0.15


def _within(value: float, low: float, high: float) -> bool:
    return low - _SLACK <= value <= high + _SLACK


def _on(step: Step, kind: str, target: str) -> bool:
    return step.fault.kind == kind and step.fault.target == target


def _overlap(a: Step, b: Step) -> bool:
    return a.at_s < b.ends_s and b.at_s < a.ends_s


def _double_outage(s: Schedule) -> bool:
    away = [
        x for x in s.steps if x.fault.target.startswith("broker:") and takes_broker_away(x.fault)
    ]
    return any(
        a.fault.target != b.fault.target and _overlap(a, b)
        for i, a in enumerate(away)
        for b in away[i + 1 :]
    )


def _bounces(s: Schedule) -> list[Step]:
    return [x for x in s.steps if _on(x, "bounce", "non-controller")]


def _failover_after_restart(s: Schedule) -> bool:
    taken = [x for x in s.steps if x.fault.target == "controller" and x.fault.kind in OUTAGE_KINDS]
    return any(_within(t.at_s - b.at_s, *FAILOVER_LAG) for b in _bounces(s) for t in taken)


def _flapping_controller(s: Schedule) -> bool:
    expiries = {
        x.at_s for x in s.steps if _on(x, "session-expire", "controller") and x.duration_s == 0
    }
    return len(expiries) >= 2


def _lost_replies(s: Schedule) -> bool:
    cuts = [
        x
        for x in s.steps
        if x.fault.kind == "broker-isolate" and x.fault.target.startswith("broker:")
    ]
    lost = [x for x in s.steps if _on(x, "zk-lost-reply", "non-controllers")]
    return any(c.at_s < x.at_s < c.ends_s for c in cuts for x in lost)


def _restart_under_slow_controller(s: Schedule) -> bool:
    slowed = [x for x in s.steps if _on(x, "latency", "controller")]
    return any(_within(x.at_s - b.at_s, *SLOW_RESTART_LAG) for b in _bounces(s) for x in slowed)


def _frozen_controller(s: Schedule) -> bool:
    return any(_on(x, "pause", "controller") and x.duration_s >= OUTAGE_HOLD.low for x in s.steps)


def _backdrop(s: Schedule) -> bool:
    return any(
        x.fault.kind == "latency" and x.trigger is None and x.duration_s >= BACKDROP_HOLD.low
        for x in s.steps
    )


def _cut_in_turn(s: Schedule) -> bool:
    first = [x for x in s.steps if x.fault == FaultSpec.of("broker-isolate", "controller")]
    second = [x for x in s.steps if x.fault == FaultSpec.of("zk-isolate", "controller")]
    return any(
        _within(z.at_s - c.at_s, *CUT_LAG) and c.at_s < z.at_s < c.ends_s < z.ends_s
        for c in first
        for z in second
    )


def _lost_registration(s: Schedule) -> bool:
    cuts = [x for x in s.steps if x.fault.kind == "zk-isolate"]
    lost = [
        x
        for x in s.steps
        if x.fault.kind == "zk-lost-reply" and dict(x.fault.params).get("writes_only") is True
    ]
    return any(
        c.fault.target == x.fault.target and c.at_s < x.at_s < c.ends_s for c in cuts for x in lost
    )


def _reset_mid_failover(s: Schedule) -> bool:
    slowed = [x for x in s.steps if _on(x, "latency", "controller")]
    kills = [x for x in s.steps if x.fault.kind == "kill" and x.fault.target != "controller"]
    resets = [x for x in s.steps if x.fault == RESET and x.trigger == ELECTIONS]
    return any(
        _within(k.at_s - x.at_s, *KILL_AFTER_S) and r.at_s == k.at_s and k.ends_s < x.ends_s
        for x in slowed
        for k in kills
        for r in resets
    )


def _race(s: Schedule) -> bool:
    slowed = [x for x in s.steps if _on(x, "latency", "controller")]
    moves = [a.at_s for a in s.actions if a.kind == "move-controller"]
    return any(x.at_s < at < x.ends_s for x in slowed for at in moves)


#: Each group's name and its recogniser, in the order of `chaos.hunt.corpus.GRAFTS`.
GROUPS: Mapping[str, Callable[[Schedule], bool]] = {
    "double-outage": _double_outage,
    "failover-after-restart": _failover_after_restart,
    "flapping-controller": _flapping_controller,
    "lost-replies-while-isrs-change": _lost_replies,
    "restart-under-slow-controller": _restart_under_slow_controller,
    "frozen-controller": _frozen_controller,
    "backdrop": _backdrop,
    "cut-in-turn": _cut_in_turn,
    "lost-registration": _lost_registration,
    "reset-mid-failover": _reset_mid_failover,
    "race": _race,
}


def groups_in(schedule: Schedule) -> frozenset[str]:
    """The names of the groups `schedule` holds (module docstring)."""
    return frozenset(name for name, holds in GROUPS.items() if holds(schedule))
