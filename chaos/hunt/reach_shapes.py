"""The shape of fault schedule that exposes each historical bug switch (`bugs.CATALOG`),
as a predicate over a `Schedule`: what the switch's planned scenarios
(`chaos.hunt.plan`) do to the cluster, stated without their exact roles and times, so
that the reach analysis (`chaos.hunt.reach`) can ask how often the generic generator
draws such a schedule by itself.

A shape is necessary, not sufficient: a schedule of the shape gives the bug its chance,
the cluster's timing decides the rest. The predicates read steps as
`chaos.hunt.reach_steps` does (roles as the schedule names them).

Nothing but the analysis imports this module: the generator and the hunt must stay blind
to the bugs (an import contract in pyproject.toml). Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chaos.generator.groups import groups_in
from chaos.generator.scenarios.scenario import SESSION_TIMEOUT_S
from chaos.generator.schedule import Schedule, Step
from chaos.hunt.reach_steps import (
    INSTANT_S,
    PROCESS,
    SOON_S,
    actions,
    away,
    bounce,
    bounce_then_slowed,
    controller_gone,
    distinct,
    lasting,
    meets,
    off_controller,
    on_controller,
    outage,
    pin,
    reconnections,
    returns,
    session_lost,
)
from rundir.disturbances import PROCESS_ONLY_KINDS

__all__ = ["SHAPES", "Shape", "shape_for"]

#: How long after a broker's return its follower may still be catching up (seconds).
CATCH_UP_S = 30.0
#: How long after a controller's reconnection its election is looked at (seconds).
AFTER_RECONNECT_S = 30.0


@dataclass(frozen=True, slots=True)
class Shape:
    """The shape of schedule that exposes `bug`: `text` says it, `match` decides it."""

    bug: str
    text: str
    match: Callable[[Schedule], bool]


def _frozen(step: Step) -> bool:
    return on_controller(step) and step.fault.kind == "pause" and lasting(step)


def _unfenced_writes(s: Schedule) -> bool:
    moves = actions(s, ("move-controller",))
    for step in s.steps:
        slow = on_controller(step) and step.fault.kind in ("latency", "cpu-starve")
        if _frozen(step) or (slow and any(step.at_s <= t <= step.ends_s for t in moves)):
            return True
    return False


def _deposed(s: Schedule) -> bool:
    for step in s.steps:
        if _frozen(step):
            return True
        cut = on_controller(step) and step.fault.kind == "broker-isolate"
        for other in s.steps:
            lost = other is not step and on_controller(other) and session_lost(other)
            if cut and lost and meets(other, step.at_s, step.ends_s):
                return True
    return False


def _two_down(s: Schedule) -> bool:
    if s.replication is not None and s.replication.factor > 2:  # needs pairs: see text
        return False
    for a in s.steps:
        for b in s.steps:
            both = outage(a) and outage(b) and a.fault.kind in PROCESS
            if both and distinct(a, b) and a.at_s < b.at_s < a.ends_s < b.ends_s:
                return True
    return False


def _lost_isr_reply(s: Schedule) -> bool:
    for r in s.steps:
        if r.fault.kind != "zk-lost-reply":
            continue
        for a in s.steps:
            due = (a.at_s + SESSION_TIMEOUT_S, returns(a) + 15.0)
            if a is not r and away(a) and due[0] <= r.at_s <= due[1]:
                return True
    return False


def _reset_mid_change(s: Schedule) -> bool:
    causes = actions(s, ("elect-leaders", "reassign", "delete-topic"))
    causes += [a.at_s for a in s.steps if away(a) and not on_controller(a)]
    resets = [r for r in s.steps if r.fault.kind in ("zk-reset", "zk-lost-reply")]
    return any(on_controller(r) and meets(r, t, t + SOON_S) for r in resets for t in causes)


def _long_outage(s: Schedule) -> bool:
    return any(outage(step) for step in s.steps)


def _retired_then_lost(s: Schedule) -> bool:
    retired = actions(s, ("vacate",))
    if not retired:
        return False
    downs = [step for step in s.steps if outage(step) and step.at_s > min(retired)]
    return any(
        distinct(a, b) and meets(b, a.at_s, a.ends_s) and _undisturbed(s, a, b)
        for a in downs
        for b in downs
        if a.at_s <= b.at_s and a is not b
    )


def _undisturbed(s: Schedule, *dead: Step) -> bool:
    """No step but one on the dead brokers, or one killing, stopping or bouncing a broker,
    meets the handling of the last one's failure (a session timeout after it starts, and
    `SOON_S`, the invariant's bound, after that), each lengthened by the bound: where
    `dead_broker_forgotten` judges a failure."""
    handled = dead[-1].at_s + SESSION_TIMEOUT_S
    pins = {pin(d.fault.target) for d in dead} - {None, ("controller", "")}
    return not any(
        meets(step, handled - SOON_S, handled + SOON_S)
        for step in s.steps
        if step not in dead
        and pin(step.fault.target) not in pins
        and not (step.fault.kind in PROCESS_ONLY_KINDS and not step.fault.target.startswith("zk"))
    )


def _zombie(s: Schedule) -> bool:
    return any(on_controller(step) and session_lost(step) for step in s.steps)


def _isolated_election(s: Schedule) -> bool:
    moves = actions(s, ("elect-leaders", "move-controller"))
    for i in s.steps:
        cut = i.fault.kind in ("broker-isolate", "loss") and off_controller(i) and lasting(i)
        if not cut:
            continue
        if i.fault.target == "busiest-leader" or any(i.at_s <= t <= i.ends_s for t in moves):
            return True
        if any(controller_gone(c) and meets(c, i.at_s, i.ends_s) for c in s.steps):
            return True
        # another broker down past its session: its partitions get new leaders
        if any(outage(c) and distinct(c, i) and meets(c, i.at_s, i.ends_s) for c in s.steps):
            return True
    return False


def _failover_after(kinds: tuple[str, ...], watched: bool = False) -> Callable[[Schedule], bool]:
    def match(s: Schedule) -> bool:
        starts = actions(s, kinds, watched=watched)
        for c in s.steps:
            if controller_gone(c) and any(t <= c.at_s <= t + SOON_S for t in starts):
                return True
        moves = actions(s, ("move-controller",))
        return any(t <= m <= t + SOON_S for t in starts for m in moves)

    return match


def _own_znode(s: Schedule) -> bool:
    others = [a for a in s.steps if (away(a) or bounce(a)) and off_controller(a)]
    return any(meets(a, r, r + AFTER_RECONNECT_S) for r in reconnections(s) for a in others)


def _moved_while_reconnecting(s: Schedule) -> bool:
    moves = actions(s, ("move-controller",))
    return any(r <= m <= r + INSTANT_S for r in reconnections(s) for m in moves)


def _registers_without_controller(s: Schedule) -> bool:
    for b in s.steps:
        if not (bounce(b) and off_controller(b)):
            continue
        if any(controller_gone(c) and b.at_s <= c.at_s <= b.at_s + SOON_S for c in s.steps):
            return True
    return False


def _skipped_epoch(s: Schedule) -> bool:
    elections = actions(s, ("elect-leaders",))
    for r in s.steps:
        if r.fault.kind != "request" or r.fault.param("action") != "drop":
            continue
        kinds = str(r.fault.param("kinds"))
        if kinds != "all" and "LeaderAndIsr" not in kinds:
            continue
        before = any(away(a) and a.at_s < r.at_s for a in s.steps)
        during = any(r.at_s <= t <= r.ends_s for t in elections) or any(
            away(a) and r.at_s <= a.at_s <= r.ends_s for a in s.steps
        )
        if before and during:
            return True
    return False


def _moves_while_catching_up(s: Schedule) -> bool:
    moves = actions(s, ("elect-leaders", "move-controller"))
    for a in s.steps:
        if not (away(a) or bounce(a)):
            continue
        back = returns(a)
        later = moves + [b.at_s for b in s.steps if b is not a and (away(b) or bounce(b))]
        if any(back < t <= back + CATCH_UP_S for t in later):
            return True
    return False


def _any_away(s: Schedule) -> bool:
    return any(away(step) or bounce(step) for step in s.steps)


def _reregisters(s: Schedule) -> bool:
    return any(session_lost(step) and off_controller(step) for step in s.steps)


def _expired_twice(s: Schedule) -> bool:
    moves = actions(s, ("move-controller",))
    for a in s.steps:
        if not (on_controller(a) and session_lost(a)):
            continue
        back = a.ends_s
        if any(m > back for m in moves):
            return True
        if any(controller_gone(b) and b.at_s > back for b in s.steps):
            return True
    return False


_BOUNCE_SLOWED = (
    "a broker bounced (bounce, kill or stop under the session timeout) while the "
    "controller is slowed (latency, starved CPU, a short pause on it) within 10 s"
)
_OUTAGE_TEXT = (
    "a broker taken away longer than the session timeout (kill, stop, pause, isolation, "
    "loss) and brought back"
)
_REREGISTERS = (
    "a broker other than the controller loses its ZooKeeper session and lives on "
    "(zk-isolate or zk-deaf longer than the session timeout, session-expire)"
)

_LOST_REGISTRATION = (
    "a broker slowed and cut from ZooKeeper past its session, and spells catching a write "
    "of its new session (a lost registration reply: its create's answer lost)"
)

#: One shape per switch of the catalog, in the catalog's order.
SHAPES: tuple[Shape, ...] = (
    Shape(
        "kafka-6082",
        "the controller slowed (latency, starved CPU) when /controller moves, or paused "
        "longer than the session timeout",
        _unfenced_writes,
    ),
    Shape(
        "kafka-1188",
        "the controller deposed with requests it cannot deliver: paused longer than the "
        "session timeout, or cut off from the brokers while it loses its session",
        _deposed,
    ),
    Shape(
        "kip-380",
        "a broker bounced (bounce, kill or stop under the session timeout), then within "
        "10 s the controller slowed (latency, starved CPU, a short pause)",
        lambda s: bounce_then_slowed(s, starts_after=True),
    ),
    Shape(
        "kafka-5083",
        "two brokers known to differ down (kill, stop, pause) past the session at once, the "
        "first back first, on pairs (replication factor 2; a planned schedule says none)",
        _two_down,
    ),
    Shape("unclean-election", "as kafka-5083", _two_down),
    Shape(
        "kafka-2729",
        "a zk-lost-reply while ISR changes are due: from 6 s after a broker is taken away "
        "to 15 s after it is back",
        _lost_isr_reply,
    ),
    Shape(
        "kafka-2300",
        "a zk-reset or zk-lost-reply of the controller within 10 s after it starts "
        "changing partition states (another broker taken away, elect-leaders, reassign, "
        "delete-topic)",
        _reset_mid_change,
    ),
    Shape("kafka-3085", _BOUNCE_SLOWED, lambda s: bounce_then_slowed(s, starts_after=False)),
    Shape("kip-101", _OUTAGE_TEXT, _long_outage),
    Shape(
        "kafka-5310",
        "the controller loses its session and lives on (zk-isolate or zk-deaf longer "
        "than the session timeout, session-expire, a longer pause)",
        _zombie,
    ),
    Shape(
        "sender-drops",
        "a broker other than the controller cut off (broker-isolate, loss) longer than the "
        "session timeout while leaders move (it is the busiest leader, the controller is "
        "taken away or moved, another broker is down past its session, preferred leaders "
        "are elected)",
        _isolated_election,
    ),
    Shape(
        "kafka-1681",
        "the controller taken away or moved within 10 s after a reassignment or a topic "
        "deletion starts",
        _failover_after(("reassign", "delete-topic")),
    ),
    Shape(
        "kafka-13407",
        "the controller's ZooKeeper connection closed with its session kept (zk-reset, a "
        "latency starting or ending on it), and another broker away or bounced within 30 s",
        _own_znode,
    ),
    Shape(
        "kafka-2437",
        "/controller moved (move-controller) within 5 s after the controller's ZooKeeper "
        "connection was closed with its session kept",
        _moved_while_reconnecting,
    ),
    Shape(
        "kafka-13225",
        "a broker retired (vacate), then two brokers known to differ down past the session at "
        "once, and no fault but on them or killing brokers near the second's handling "
        "(where dead_broker_forgotten judges it)",
        _retired_then_lost,
    ),
    Shape(
        "kafka-4443",
        "a broker bounced, then within 10 s the controller taken away: the broker "
        "registers while no controller runs",
        _registers_without_controller,
    ),
    Shape(
        "kafka-6361",
        "LeaderAndIsr to a broker dropped (a request fault) after a broker was away, while "
        "leaders move again (elect-leaders, a broker taken away)",
        _skipped_epoch,
    ),
    Shape(
        "kafka-7128",
        "leaders move again within 30 s after a broker is back (another broker away or "
        "bounced, elect-leaders, move-controller): a follower still catching up",
        _moves_while_catching_up,
    ),
    Shape(
        "kafka-9212",
        "the controller taken away or moved within 10 s after a reassignment of the "
        "workload's topic starts (reassign, vacate: the side topic's state is not followed)",
        _failover_after(("reassign", "vacate"), watched=True),
    ),
    Shape("kafka-1367", "a broker taken away or bounced and back: ISRs shrink and grow", _any_away),
    Shape("kafka-1120", _BOUNCE_SLOWED, lambda s: bounce_then_slowed(s, starts_after=False)),
    Shape("kafka-9839", _REREGISTERS, _reregisters),
    Shape("kafka-7165", _LOST_REGISTRATION, lambda s: "lost-registration" in groups_in(s)),
    Shape(
        "kafka-4229",
        "the controller loses its session and lives on, and after it is back the "
        "controller is elected again (taken away, its session lost, move-controller)",
        _expired_twice,
    ),
)

_BY_BUG = {shape.bug: shape for shape in SHAPES}


def shape_for(bug: str) -> Shape:
    """The shape of switch `bug`; `KeyError` for an unknown one."""
    return _BY_BUG[bug]
