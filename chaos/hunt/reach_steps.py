"""What a schedule's steps do to the cluster, read from their kinds, roles and times: the
vocabulary the bug shapes (`chaos.hunt.reach_shapes`) are written in.

Roles are read as a schedule names them (they resolve only when a fault starts):
`controller` is the controller, `non-controller[:n]` a broker that is not, and two targets
are known to differ only when their names say so (`controller` and a non-controller,
`non-controller:1` and `non-controller:2`, `broker:1` and `broker:2`). A triggered step
counts as active from the earliest to the latest it may be. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from chaos.cluster.roles import RoleClass, parse_role
from chaos.generator.admin_draws import is_side_topic
from chaos.generator.overlap import takes_broker_away
from chaos.generator.scenarios.scenario import SESSION_TIMEOUT_S
from chaos.generator.schedule import Schedule, Step

__all__ = [
    "INSTANT_S",
    "OUTAGE",
    "PROCESS",
    "SOON_S",
    "actions",
    "away",
    "bounce",
    "bounce_then_slowed",
    "controller_gone",
    "distinct",
    "lasting",
    "meets",
    "off_controller",
    "on_controller",
    "outage",
    "pin",
    "reconnections",
    "returns",
    "session_lost",
    "single_broker",
    "slowed",
    "span",
]

#: How long an instant fault (a bounce) takes to act: restart and register again.
INSTANT_S = 5.0
#: How soon after a cause a consequence counts as its (seconds): a controller's handling
#: of a failure, a broker's restart and registration.
SOON_S = 10.0
#: The process kinds that hold a broker down for their duration.
PROCESS = ("kill", "stop", "pause")
#: The kinds that take a broker away for their duration.
OUTAGE = (*PROCESS, "broker-isolate", "zk-isolate", "zk-deaf", "memory-squeeze", "loss")


def span(step: Step) -> tuple[float, float]:
    """From the earliest the step may start to the latest it may act."""
    end = step.ends_s if step.duration_s > 0 else step.ends_s + INSTANT_S
    return step.at_s, end


def meets(step: Step, low: float, high: float) -> bool:
    """The step's span meets the time from `low` to `high`."""
    start, end = span(step)
    return start <= high and low <= end


def single_broker(step: Step) -> bool:
    """The step acts on one broker."""
    role = parse_role(step.fault.target)
    return role.role_class is RoleClass.BROKERS and not role.group


def on_controller(step: Step) -> bool:
    """The step acts on the controller."""
    return step.fault.target == "controller"


def off_controller(step: Step) -> bool:
    """A single broker that is not named as the controller."""
    return single_broker(step) and not on_controller(step)


def pin(target: str) -> tuple[str, str] | None:
    """What a target pins down: the controller, the n-th non-controller, broker n."""
    if target == "controller":
        return "controller", ""
    for prefix in ("non-controller:", "broker:"):
        if target.startswith(prefix):
            return prefix, target[len(prefix) :]
    return None


def distinct(a: Step, b: Step) -> bool:
    """The two steps' targets are known to be different brokers."""
    x, y = pin(a.fault.target), pin(b.fault.target)
    if x is None or y is None:
        return False
    if {x[0], y[0]} == {"controller", "non-controller:"}:
        return True
    return x[0] == y[0] != "controller" and x[1] != y[1]


def away(step: Step) -> bool:
    """Takes a single broker away."""
    return single_broker(step) and takes_broker_away(step.fault)


def lasting(step: Step) -> bool:
    """The step lasts longer than the brokers' ZooKeeper session timeout."""
    return step.duration_s > SESSION_TIMEOUT_S


def outage(step: Step) -> bool:
    """Takes a single broker away for longer than the session timeout."""
    return away(step) and step.fault.kind in OUTAGE and lasting(step)


def bounce(step: Step) -> bool:
    """A restart quicker than the session timeout: the new process registers while the
    old session may still hold the broker's node."""
    if not single_broker(step):
        return False
    short = step.fault.kind in ("kill", "stop") and step.duration_s < SESSION_TIMEOUT_S
    return step.fault.kind == "bounce" or short


def session_lost(step: Step) -> bool:
    """The broker's process lives on and its ZooKeeper session is lost."""
    kind = step.fault.kind
    cut = kind in ("zk-isolate", "zk-deaf", "pause") and lasting(step)
    return single_broker(step) and (kind == "session-expire" or cut)


def slowed(step: Step) -> bool:
    """Slowed without being taken away: network delay, starved CPU, a short pause."""
    short_pause = step.fault.kind == "pause" and not lasting(step)
    return step.fault.kind in ("latency", "cpu-starve") or short_pause


def controller_gone(step: Step) -> bool:
    """The controller taken away: its process ended or paused, or its session lost."""
    gone = step.fault.kind in ("kill", "stop", "bounce") or session_lost(step)
    return on_controller(step) and gone


def reconnections(schedule: Schedule) -> list[float]:
    """When the controller's ZooKeeper connection is closed and made again with its session
    kept: a `zk-reset` of it, the start and the end of a `latency` on it."""
    found = []
    for s in schedule.steps:
        if on_controller(s) and s.fault.kind == "zk-reset":
            found.append(s.at_s)
        elif on_controller(s) and s.fault.kind == "latency":
            found += [s.at_s, s.ends_s]
    return found


def actions(schedule: Schedule, kinds: Iterable[str], *, watched: bool = False) -> list[float]:
    """When the schedule's actions of `kinds` come; with `watched`, only those that may
    act on the workload's topic, the one the run's snapshots follow (not on the side
    topic, `is_side_topic`, deleted before the heal)."""
    wanted = set(kinds)
    return [
        a.at_s
        for a in schedule.actions
        if a.kind in wanted and not (watched and is_side_topic(str(dict(a.params).get("topic"))))
    ]


def returns(step: Step) -> float:
    """When a broker taken away is back."""
    return step.ends_s if step.duration_s > 0 else step.at_s + INSTANT_S


def bounce_then_slowed(s: Schedule, starts_after: bool) -> bool:
    """A broker other than the controller bounced and the controller slowed within
    `SOON_S`: the slowing starting after the bounce (`starts_after`), or holding at some
    time of that span."""
    for b in s.steps:
        if not (bounce(b) and off_controller(b)):
            continue
        for c in s.steps:
            if not (on_controller(c) and slowed(c)):
                continue
            if starts_after and b.at_s <= c.at_s <= b.at_s + SOON_S:
                return True
            if not starts_after and meets(c, b.at_s, b.at_s + SOON_S):
                return True
    return False
