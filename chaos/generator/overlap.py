"""Which faults may be active at once: a pure table (`FOOTPRINTS`) of what each fault kind
takes from the cluster, and the rules the generic generator (`chaos.generator.generic`)
keeps when it lets faults overlap. The cluster is three brokers and a three-server
ZooKeeper ensemble; the workload's topic has replication factor 3 and min ISR 2.

A fault's footprint is the side it acts on (its target role's class: brokers, ZooKeeper,
or the whole cluster), the mechanism it acts through, and whether it takes a broker
away: stops it serving, or may cost it its ZooKeeper session or its place in every ISR.

| mechanism | kinds that take a broker away | kinds that do not |
| --- | --- | --- |
| `process` | `kill`, `stop`, `pause`, `bounce`, `zk-leader-kill`, `zk-pause`, | - |
| | `cert-rotation` (it restarts every server, one at a time) | |
| `firewall` | `partition`, `zk-isolate`, `zk-deaf`, `zk-lost-reply`, | `zk-reset` |
| | `broker-isolate`, `session-expire` | |
| `netem` | `loss` | `latency`, `bandwidth` |
| `cgroup` | `memory-squeeze` (it may end in the OOM killer) | `cpu-starve` |
| `clock` | - | `clock` |
| `proxy` | - | `request` |
| `disk` | `disk-eio`, `disk-full`, `power-loss` | `disk-slow`, `disk-volatile` |

Two faults may be active at the same time unless one of these rules forbids it
(`why_not_together`):

1. `partition` acts on the whole cluster (`all`): it overlaps nothing.
2. At most one fault on ZooKeeper servers at a time: the ensemble of three keeps a
   majority whatever that fault does (killed, paused, starved, clock moved). A
   `zk-lost-reply` counts as one, whatever brokers it names: its spells freeze the
   ensemble's leader, which a server killed or paused meanwhile may leave without one.
3. At most one fault that takes a broker away at a time (a group role such as
   `all-brokers` counts as one such fault): with replication factor 3 and min ISR 2, one
   broker away leaves every partition a leader and writes acknowledged by two replicas.
   A fault that slows a broker without taking it away (latency, a starved CPU, a moved
   clock, delayed requests) may overlap one that takes another away: a follower may
   fall out of the ISR and writes wait or fail, which costs availability, not safety.
   The one exception is a *double outage*: two faults on two brokers named by different
   ids (`broker:<id>`) may both take their broker away, never a third with them. Two
   of three brokers down leaves the partitions without the min ISR: writes fail and
   are not acknowledged, and a partition whose last ISR member went down waits for it
   (the availability a correlated failure costs, not safety). The second exception is
   a *failover after a restart*: a `bounce` of `non-controller` and a fault on
   `controller` that starts after it may both take their broker away. The bounced
   broker was not the controller when it went down and cannot win `/controller` before
   it registers again, so the two roles name two brokers; never a third with them.
   The third is a *flapping controller*: instant faults (duration 0) on `controller` at
   different times may overlap in their aftermath. Each is over when the next starts
   and names the controller of its time, the same broker again or another one.
   The fourth is *lost replies while ISRs change*: a `zk-lost-reply` of
   `non-controllers` that starts while a `broker-isolate` of a `broker:<id>` holds
   (rule 4 does not forbid them either). The cut broker keeps its session and only
   lags out of the ISRs; a lost reply costs a broker one reconnection within its
   session (the spells hold a write at most 2.5 s of the 6 s), not its session; so
   every broker stays registered and no partition loses more than the cut broker from
   its ISR. Never a third fault that takes a broker away with them.
   The fifth is a *controller cut in turn*: a `zk-isolate` of `controller` that starts
   while a `broker-isolate` of `controller` holds and outlasts it. The broker cut from
   its peers keeps its session and stays the controller, so both name one broker, the
   one broker away (a controller moved meanwhile, by another fault, makes it two: a
   double outage's cost, availability). Never a third fault that takes a broker away
   with them.
   The sixth is a *lost registration reply*: a `zk-lost-reply` of `broker:<id>` that
   catches only writes (`writes_only`) and starts, on a trigger, while a `zk-isolate`
   of the same broker holds (rule 4 does not forbid them either). Its spells act once
   the broker has learned that its session expired, after the cut: both take the one
   broker away. Never a third fault that takes a broker away with them.
4. At most one fault per mechanism per side: two faults through the same mechanism on
   brokers (two netem rules, two clock fakes, two cgroup limits) could land on the same
   broker, since roles resolve only when a fault starts, and their undo would clash.
   Two faults on brokers named by different ids cannot.
5. Never a `latency` and a `request` fault at once, whatever brokers they name: both
   redirect connections of a broker's network namespace to a proxy of their own (the
   request fault's proxy lives in the controller's, whichever broker it targets), so
   the request proxy's own connections bypass a latency on the controller, which then
   cannot prove itself and waits out its deadline.
6. Never a `clock` fault on brokers while a fault through the `process` mechanism holds
   a broker (killed, stopped, paused, bounced and registering again), unless the two
   name brokers by different ids: a clock is set and measured through `docker exec`,
   which a stopped or paused container refuses, and roles resolve only when a fault
   starts, so a clock on `controller` may land on the broker a pause of `controller`
   froze.

Time: a fault occupies its window (`window`) from its start (a triggered one from the
earliest its trigger may fire) to the latest it can end, plus `AFTERMATH_S` for an instant
fault (a bounce's restart and new registration), `RECOVERY_S` after a fault that takes
a broker away (its restart and its way back into the ISR) and `ZK_RECOVERY_S` after a
fault on a ZooKeeper server (its restart and its sync with the leader: a second server
lost before the first is back loses the quorum).

Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from chaos.cluster.roles import RoleClass, parse_role
from chaos.faults.registry import FAULT_TYPES
from chaos.generator.schedule import FaultSpec, Schedule, Step

__all__ = [
    "AFTERMATH_S",
    "FOOTPRINTS",
    "RECOVERY_S",
    "ZK_RECOVERY_S",
    "Footprint",
    "clashes",
    "footprint",
    "on_zookeeper",
    "overlap_violations",
    "takes_broker_away",
    "why_not_together",
    "window",
]

#: How long an instant fault (duration 0) is taken to act: a bounced broker restarts and
#: registers again once ZooKeeper expired its old session (the fast profile's 6 s).
AFTERMATH_S = 10.0
#: How long after a fault that took a broker away ends the broker is taken to need to be
#: back: started, registered, caught up, in the ISR again.
RECOVERY_S = 5.0
#: How long after a fault on a ZooKeeper server ends the server is taken to need to serve
#: in the quorum again.
ZK_RECOVERY_S = 10.0


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a fault kind takes from the cluster: its `mechanism`, and whether it takes a
    broker away (`away`) when it acts on brokers."""

    mechanism: str
    away: bool


#: Each fault kind's footprint (see the module docstring's table).
FOOTPRINTS: Mapping[str, Footprint] = {
    **{k: Footprint("process", True) for k in ("kill", "stop", "pause", "bounce")},
    **{k: Footprint("process", True) for k in ("zk-leader-kill", "zk-pause")},
    **{
        k: Footprint("firewall", True)
        for k in (
            "partition",
            "zk-isolate",
            "zk-deaf",
            "zk-lost-reply",
            "broker-isolate",
            "session-expire",
        )
    },
    # it closes the connections, and the broker makes a new one with the same session
    "zk-reset": Footprint("firewall", False),
    "loss": Footprint("netem", True),
    "bandwidth": Footprint("netem", False),
    "latency": Footprint("netem", False),
    "request": Footprint("proxy", False),
    "cpu-starve": Footprint("cgroup", False),
    "memory-squeeze": Footprint("cgroup", True),
    "clock": Footprint("clock", False),
    "disk-eio": Footprint("disk", True),
    "disk-slow": Footprint("disk", False),
    "disk-full": Footprint("disk", True),
    "disk-volatile": Footprint("disk", False),
    "power-loss": Footprint("disk", True),
    "cert-rotation": Footprint("process", True),
}
assert FOOTPRINTS.keys() == FAULT_TYPES.keys(), "every fault kind needs a footprint"


def footprint(kind: str) -> Footprint:
    """The footprint of fault kind `kind`; `KeyError` for an unknown kind."""
    return FOOTPRINTS[kind]


def _side(spec: FaultSpec) -> RoleClass:
    return parse_role(spec.target).role_class


def on_zookeeper(spec: FaultSpec) -> bool:
    """The fault acts on ZooKeeper servers: it names them, or it freezes their leader."""
    return _side(spec) is RoleClass.ZOOKEEPER or spec.kind == "zk-lost-reply"


def takes_broker_away(spec: FaultSpec) -> bool:
    """The fault may take a broker away: it acts on brokers (or everything) and its kind
    does (`Footprint.away`)."""
    return _side(spec) is not RoleClass.ZOOKEEPER and FOOTPRINTS[spec.kind].away


def _apart(a: FaultSpec, b: FaultSpec) -> bool:
    """The two faults name two different brokers by id (`broker:<id>`)."""
    prefix = "broker:"
    pinned = a.target.startswith(prefix) and b.target.startswith(prefix)
    return pinned and a.target != b.target


#: The two kinds that redirect a broker's connections to a proxy of their own (rule 5).
_PROXIES = frozenset(("latency", "request"))


def why_not_together(a: FaultSpec, b: FaultSpec) -> str | None:
    """Which rule of the module docstring forbids `a` and `b` to be active at once, in
    words; None when they may be."""
    if a.kind == "partition" or b.kind == "partition":
        return "a partition of the whole cluster overlaps nothing"
    side_a, side_b = _side(a), _side(b)
    if on_zookeeper(a) and on_zookeeper(b):
        return "at most one fault on ZooKeeper servers at a time"
    if {a.kind, b.kind} == _PROXIES and side_a is side_b is RoleClass.BROKERS:
        return "a latency and a request fault both redirect a broker's connections to a proxy"
    if _apart(a, b):
        return None
    if takes_broker_away(a) and takes_broker_away(b):
        return "at most one fault that takes a broker away at a time"
    if _clock_beside_process(a, b) or _clock_beside_process(b, a):
        return "a clock is set through docker exec, which a stopped or paused broker refuses"
    if FOOTPRINTS[a.kind].mechanism == FOOTPRINTS[b.kind].mechanism and side_a is side_b:
        return f"at most one {FOOTPRINTS[a.kind].mechanism} fault on {side_a.value} at a time"
    return None


def _clock_beside_process(clock: FaultSpec, other: FaultSpec) -> bool:
    return (
        clock.kind == "clock"
        and FOOTPRINTS[other.kind].mechanism == "process"
        and _side(clock) is _side(other) is RoleClass.BROKERS
    )


def _excepted(a: Step, b: Step) -> bool:
    """The steps are one of rule 3's pairs by role: a failover after a restart (a bounce
    of `non-controller`, then, later, a fault on `controller`), a flapping controller
    (instant faults on `controller` at different times), lost replies while ISRs
    change (a `zk-lost-reply` of `non-controllers` starting during a `broker-isolate` of
    one broker by id), a controller cut in turn (a `zk-isolate` of `controller`
    starting during a `broker-isolate` of it and outlasting it), or a lost registration
    reply (a triggered `zk-lost-reply` of a broker by id, catching only writes, starting
    during a `zk-isolate` of it)."""
    first, then = (a, b) if a.at_s <= b.at_s else (b, a)
    if any(pair(first, then) for pair in (_lost_replies_in_cut, _cut_in_turn, _lost_reg)):
        return True
    if then.fault.target != "controller" or then.at_s == first.at_s:
        return False
    if first.fault.kind == "bounce" and first.fault.target == "non-controller":
        return True
    return first.fault.target == "controller" and first.duration_s == then.duration_s == 0


def _lost_replies_in_cut(cut: Step, lost: Step) -> bool:
    return (
        cut.fault.kind == "broker-isolate"
        and cut.fault.target.startswith("broker:")
        and lost.fault.kind == "zk-lost-reply"
        and lost.fault.target == "non-controllers"
        and cut.at_s < lost.at_s < cut.ends_s
    )


def _lost_reg(cut: Step, lost: Step) -> bool:
    return (
        cut.fault.kind == "zk-isolate"
        and cut.fault.target.startswith("broker:")
        and lost.fault.kind == "zk-lost-reply"
        and lost.fault.target == cut.fault.target
        and dict(lost.fault.params).get("writes_only") is True
        and lost.trigger is not None
        and cut.at_s < lost.at_s < cut.ends_s
    )


def _cut_in_turn(cut: Step, then: Step) -> bool:
    return (
        cut.fault == FaultSpec.of("broker-isolate", "controller")
        and then.fault == FaultSpec.of("zk-isolate", "controller")
        and cut.at_s < then.at_s < cut.ends_s < then.ends_s
    )


def window(step: Step) -> tuple[float, float]:
    """The time the step's fault occupies (see the module docstring): from its start to
    the latest it can end, plus the aftermath of an instant fault and the recovery of a
    broker taken away."""
    end = step.ends_s + (AFTERMATH_S if step.duration_s == 0 else 0.0)
    if takes_broker_away(step.fault):
        end += RECOVERY_S
    elif _side(step.fault) is RoleClass.ZOOKEEPER:
        end += ZK_RECOVERY_S
    return step.at_s, end


def _overlapping(a: Step, b: Step) -> bool:
    (start_a, end_a), (start_b, end_b) = window(a), window(b)
    return start_a < end_b and start_b < end_a


def clashes(step: Step, others: tuple[Step, ...] | list[Step]) -> Iterator[tuple[Step, str]]:
    """Each of `others` whose window overlaps `step`'s and that may not be active with it,
    with the rule's words; and with a double outage (rule 3), a second fault that takes a
    broker away beside it."""
    away = []
    for other in others:
        if _overlapping(step, other):
            why = None if _excepted(step, other) else why_not_together(step.fault, other.fault)
            if why is not None:
                yield other, why
            elif takes_broker_away(step.fault) and takes_broker_away(other.fault):
                away.append(other)
    for i, other in enumerate(away):
        # three windows that overlap pairwise share an instant
        if any(_overlapping(other, earlier) for earlier in away[:i]):
            yield other, "at most two brokers away at a time"


def overlap_violations(schedule: Schedule) -> list[str]:
    """Every pair of the schedule's steps that break a rule, described; [] when none."""
    found = []
    steps = schedule.steps
    for i, step in enumerate(steps):
        for other, why in clashes(step, steps[i + 1 :]):
            found.append(f"{step.describe()} / {other.describe()}: {why}")
    return found
