"""Correlated faults the generic generator (`chaos.generator.generic`) may open a dense
schedule with, each drawn from the schedule's generator and placed only where the
overlap rules (`chaos.generator.overlap`) let it:

- a double outage, with probability `DOUBLE_SHARE`: two brokers named by id
  (`broker:<id>`, overlap rule 3) taken away by `kill`, `stop`, `pause` or cut from the
  other brokers (`broker-isolate`: it keeps its ZooKeeper session, and the controller's
  requests to it fail) for longer than the session timeout (`OUTAGE_HOLD`), the second
  going down while the first is down and coming back after it: a rack, a shared host or
  a network segment lost in turn;
- a failover after a restart, with probability `FAILOVER_SHARE`: a broker other than the
  controller bounced, and the controller taken away (`kill`, `stop` or `pause`, past
  the session timeout) `FAILOVER_LAG` later, while the bounced broker waits for its old
  session to expire before it registers again (overlap rule 3's second exception): a
  broker comes back to a cluster that is changing controllers;
- a flapping controller, with probability `FLAP_SHARE`: the controller's ZooKeeper
  session expired (`session-expire`, instant) two or three times, `FLAP_GAP` apart, each
  time on whichever broker is the controller then (overlap rule 3's third exception): a
  controller whose sessions keep expiring, as under long GC pauses;
- lost replies while ISRs change, with probability `LOST_REPLIES_SHARE`: a broker
  named by id cut from the other brokers (`broker-isolate`, it keeps its session) long
  enough for its followers, and it, to lag out of the ISRs, and ZooKeeper replies lost
  to the brokers other than the controller (`zk-lost-reply non-controllers`, spells over
  `LOST_REPLIES_WINDOW`) from `LOST_REPLIES_AFTER` into the cut, when the leaders' ISR
  shrinks come due (overlap rule 3's fourth exception): a network fault that troubles
  the brokers' paths to each other and to ZooKeeper at once;
- a restart under a slow controller, with probability `SLOW_RESTART_SHARE`: a broker
  other than the controller bounced, and the controller's links slowed
  (`latency`, `SLOW_RESTART_DELAYS`) from `SLOW_RESTART_LAG` around the bounce for
  `SLOW_RESTART_HOLD`: a broker restarted (a rolling upgrade) while the controller is
  in a gray failure, so that it handles the broker's departure and return late;
- a frozen controller, with probability `FROZEN_SHARE`: the controller paused past the
  session timeout (`pause`, `OUTAGE_HOLD`), as by a long GC pause: it wakes up deposed,
  with requests of its term still to send;
- a backdrop, with probability `BACKDROP_SHARE`: one broker (the controller one time in
  two) slowed by network latency from early on for `BACKDROP_HOLD`, the gray failure
  the other faults then land on.

They are drawn in this order (`CORRELATED`), each only where it fits beside those drawn
before it, so an earlier one keeps its share and a later one loses some. After them
comes one drawn from a generator of its own seeded by the schedule's seed
(`cut_in_turn(seed, heal_at)`, so that drawing it moved none of the draws above), again
only where it fits:

- a controller cut in turn, with probability `CUT_SHARE`: the controller cut from the
  other brokers (`broker-isolate controller`, it keeps its session) and, `CUT_LAG`
  later, once its followers lagged out of the ISRs and the metadata it sends about
  that waits in its senders, from ZooKeeper too (`zk-isolate controller`). Its session
  expires and another broker takes over; `CUT_OVERLAP` into the second cut the first
  ends, so the deposed controller reaches the brokers again while it still cannot learn
  that it was deposed, its queued requests of the old epoch with it; the second cut
  ends `CUT_TAIL` later (overlap rule 3's fifth exception): a network failing the
  controller one path after another and healing in the other order. Both cuts name
  `controller`, resolved as each starts: a forced controller election
  (`move-controller`) between them would land the second on another broker, so
  `outside_cut(steps, actions)` takes out of `actions` those from `CUT_CALM_S` before
  the first cut to the start of the second (the generic generator and the blind hunt's
  grafts apply it), and likewise from `CUT_CALM_S` before a reset mid-failover's
  slowed controller to the latest its reset may start
  (`chaos.generator.reset_mid_failover`).

Each draw of `CORRELATED` takes `always` (and `cut_in_turn_from` is the cut's): drawn
whatever its probability says, from the caller's generator, as the blind hunt's grafts
(`chaos.hunt.corpus`) draw one into a schedule that has none.

Pure: the same generator state (or seed) gives the same steps; the caller's thread.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Protocol

from chaos.faults.params import Scalar
from chaos.generator.fault_draws import ONE_BROKER
from chaos.generator.reset_mid_failover import ELECTIONS, RESET
from chaos.generator.schedule import Action, FaultSpec, Step
from chaos.generator.timings import BACKDROP_HOLD, OUTAGE_HOLD
from domain.profiles import FAST, setting

__all__ = [
    "BACKDROP_KINDS",
    "BACKDROP_SHARE",
    "CORRELATED",
    "CUT_SHARE",
    "DOUBLE_KINDS",
    "DOUBLE_SHARE",
    "FAILOVER_LAG",
    "FAILOVER_SHARE",
    "FLAP_GAP",
    "FLAP_SHARE",
    "OUTAGE_KINDS",
    "GroupDraw",
    "backdrop",
    "cut_in_turn",
    "cut_in_turn_from",
    "double_outage",
    "failover_after_restart",
    "flapping_controller",
    "outside_cut",
]

#: The compose cluster's broker ids.
_BROKER_IDS = (1, 2, 3)
#: No correlated fault starts before this (`chaos.generator.generic.START_S`).
_START_S = 5.0
#: The chance that a dense schedule holds a double outage.
DOUBLE_SHARE = 0.3
#: How long an instant session expiry may take to act: the fast profile's session.
_FLAP_TAKES_S = int(setting("--zk-session-timeout-ms").value(FAST) or 0) / 1000
#: The process kinds a double outage takes its brokers away with.
OUTAGE_KINDS = ("kill", "stop", "pause")
#: The kinds a double outage takes its brokers away with: a process kind, or a cut from
#: the other brokers.
DOUBLE_KINDS = (*OUTAGE_KINDS, "broker-isolate")
#: The chance that a dense schedule holds a failover after a restart.
FAILOVER_SHARE = 0.25
#: How long after the bounce the controller is taken away (s): within the fast
#: profile's 6 s session, so the bounced broker registers while no controller runs.
FAILOVER_LAG = (1.0, 5.0)
#: The chance that a dense schedule holds a flapping controller.
FLAP_SHARE = 0.2
#: The time between two expiries of a flapping controller (s): past the 6 s the expiry
#: itself may take, so each is over before the next.
FLAP_GAP = (7.0, 12.0)
#: The chance that a dense schedule holds a restart under a slow controller.
SLOW_RESTART_SHARE = 0.2
#: When the controller's links are slowed, in seconds after the bounce (negative:
#: before it), and for how long.
SLOW_RESTART_LAG = (-2.0, 3.0)
SLOW_RESTART_HOLD = (6.0, 15.0)
#: The delays a slow controller's links get (ms).
SLOW_RESTART_DELAYS = (300, 800)
#: The chance that a dense schedule holds a frozen controller.
FROZEN_SHARE = 0.15
#: The chance that a dense schedule holds lost replies while ISRs change.
LOST_REPLIES_SHARE = 0.2
#: When the lost-reply spells begin, seconds into the cut: close to the 10 s a follower
#: may lag (`replica.lag.time.max.ms`), so that the leaders' ISR rounds, every 5 s, come
#: due while the spells go on.
LOST_REPLIES_AFTER = (8.5, 10.5)
#: How long the spells go on (s), and the most each may hold a write (s).
LOST_REPLIES_WINDOW = 8.0
LOST_REPLIES_HOLD = 2.5
#: How long the cut lasts (s): past the spells, and short of the heal.
LOST_REPLIES_CUT = (18.0, 26.0)
#: The chance that a dense schedule holds a controller cut in turn.
CUT_SHARE = 0.5
#: When the controller is cut from ZooKeeper too, seconds into its cut from the brokers:
#: past the 10 s a follower may lag (`replica.lag.time.max.ms`), the ISR shrinks and the
#: notifications of them, so that the metadata about them waits in its senders.
CUT_LAG = (11.0, 13.0)
#: How long after the cut from ZooKeeper the cut from the brokers ends (s): past the
#: session's 6 s and the election of a successor, which tells the brokers first.
CUT_OVERLAP = (7.5, 9.0)
#: How long the cut from ZooKeeper outlasts the other (s).
CUT_TAIL = (1.5, 3.0)
#: Mixed into its seed.
_CUT_SALT = "cut"
#: How long before a controller cut in turn no forced controller election may come (s):
#: the election it starts is over, and its winner named, before the cut resolves
#: `controller`.
CUT_CALM_S = 2.0
#: The chance that a dense schedule has a slowed broker as its backdrop.
BACKDROP_SHARE = 0.4
#: The kinds that slow a broker for a backdrop, and their params.
#: Not `cpu-starve`: a starved broker beside one taken away turns off the judging of
#: `registration_served` (`chaos.generator.scenarios.judged`), which a slow controller
#: handling a returning broker is there to put to the test.
BACKDROP_KINDS: Mapping[str, Mapping[str, tuple[Scalar, ...]]] = {
    "latency": {"delay_ms": (50, 100, 300, 800)},
}


#: A controller cut in turn's two cuts.
_CUT_FIRST = FaultSpec.of("broker-isolate", "controller")
_CUT_SECOND = FaultSpec.of("zk-isolate", "controller")


def _room(heal_at: float, at: float) -> float:
    """How long a fault starting at `at` may last: a tenth of a second short of the heal."""
    return math.floor((heal_at - at) * 10) / 10 - 0.1


def double_outage(rng: random.Random, heal_at: float, always: bool = False) -> tuple[Step, ...]:
    """A double outage (module docstring) before `heal_at`, with probability
    `DOUBLE_SHARE`; () when not drawn or there is no room for it."""
    if not always and rng.random() >= DOUBLE_SHARE:
        return ()
    first, second = rng.sample(_BROKER_IDS, 2)
    hold = OUTAGE_HOLD.draw(rng)
    lag = round(rng.uniform(2.0, hold - 2.0), 1)
    hold2 = round(max(OUTAGE_HOLD.draw(rng), hold - lag + 2.0), 1)
    latest = _room(heal_at, lag + hold2)
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, min(latest, heal_at / 2)), 1)
    kinds = rng.choice(DOUBLE_KINDS), rng.choice(DOUBLE_KINDS)
    return (
        Step(at, hold, FaultSpec.of(kinds[0], f"broker:{first}")),
        Step(round(at + lag, 1), hold2, FaultSpec.of(kinds[1], f"broker:{second}")),
    )


def failover_after_restart(
    rng: random.Random, heal_at: float, always: bool = False
) -> tuple[Step, ...]:
    """A failover after a restart (module docstring) before `heal_at`, with probability
    `FAILOVER_SHARE`; () when not drawn or there is no room for it."""
    if not always and rng.random() >= FAILOVER_SHARE:
        return ()
    lag = round(rng.uniform(*FAILOVER_LAG), 1)
    hold = OUTAGE_HOLD.draw(rng)
    latest = _room(heal_at, lag + hold)
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, min(latest, heal_at / 2)), 1)
    return (
        Step(at, 0.0, FaultSpec.of("bounce", "non-controller")),
        Step(round(at + lag, 1), hold, FaultSpec.of(rng.choice(OUTAGE_KINDS), "controller")),
    )


def flapping_controller(
    rng: random.Random, heal_at: float, always: bool = False
) -> tuple[Step, ...]:
    """A flapping controller (module docstring) before `heal_at`, with probability
    `FLAP_SHARE`; the expiries that fit before it, () when not drawn or fewer than two
    fit."""
    if not always and rng.random() >= FLAP_SHARE:
        return ()
    times = [round(rng.uniform(_START_S, _START_S + 8.0), 1)]
    for _ in range(rng.choice((1, 1, 2))):
        times.append(round(times[-1] + rng.uniform(*FLAP_GAP), 1))
    # an expiry may take up to a session to take effect: none starts in the last one
    fitting = [t for t in times if t <= _room(heal_at, _FLAP_TAKES_S)]
    if len(fitting) < 2:
        return ()
    return tuple(Step(t, 0.0, FaultSpec.of("session-expire", "controller")) for t in fitting)


def restart_under_slow_controller(
    rng: random.Random, heal_at: float, always: bool = False
) -> tuple[Step, ...]:
    """A restart under a slow controller (module docstring) before `heal_at`, with
    probability `SLOW_RESTART_SHARE`; () when not drawn or there is no room for it."""
    if not always and rng.random() >= SLOW_RESTART_SHARE:
        return ()
    lag = round(rng.uniform(*SLOW_RESTART_LAG), 1)
    hold = round(rng.uniform(*SLOW_RESTART_HOLD), 1)
    first = _START_S + max(0.0, -lag)
    latest = _room(heal_at, max(lag + hold, 0.0))
    if latest < first:
        return ()
    at = round(rng.uniform(first, min(latest, heal_at / 2)), 1)
    delay = {"delay_ms": rng.choice(SLOW_RESTART_DELAYS)}
    return (
        Step(at, 0.0, FaultSpec.of("bounce", "non-controller")),
        Step(round(at + lag, 1), hold, FaultSpec.of("latency", "controller", delay)),
    )


def frozen_controller(rng: random.Random, heal_at: float, always: bool = False) -> tuple[Step, ...]:
    """A frozen controller (module docstring) before `heal_at`, with probability
    `FROZEN_SHARE`; () when not drawn or there is no room for it."""
    if not always and rng.random() >= FROZEN_SHARE:
        return ()
    hold = OUTAGE_HOLD.draw(rng)
    latest = _room(heal_at, hold)
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, latest), 1)
    return (Step(at, hold, FaultSpec.of("pause", "controller")),)


def lost_replies_while_isrs_change(
    rng: random.Random, heal_at: float, always: bool = False
) -> tuple[Step, ...]:
    """Lost replies while ISRs change (module docstring) before `heal_at`, with
    probability `LOST_REPLIES_SHARE`; () when not drawn or there is no room for it."""
    if not always and rng.random() >= LOST_REPLIES_SHARE:
        return ()
    after = round(rng.uniform(*LOST_REPLIES_AFTER), 1)
    # the last spell holds its write at most LOST_REPLIES_HOLD past the window
    latest = _room(heal_at, after + LOST_REPLIES_WINDOW + LOST_REPLIES_HOLD)
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, latest), 1)
    cut = round(min(rng.uniform(*LOST_REPLIES_CUT), _room(heal_at, at)), 1)
    if cut < after + LOST_REPLIES_WINDOW:
        return ()
    spells = {"hold_s": LOST_REPLIES_HOLD, "window_s": LOST_REPLIES_WINDOW}
    return (
        Step(at, cut, FaultSpec.of("broker-isolate", f"broker:{rng.choice(_BROKER_IDS)}")),
        Step(round(at + after, 1), 0.0, FaultSpec.of("zk-lost-reply", "non-controllers", spells)),
    )


def backdrop(rng: random.Random, heal_at: float, always: bool = False) -> tuple[Step, ...]:
    """A backdrop (module docstring) before `heal_at`, with probability `BACKDROP_SHARE`;
    () when not drawn or there is no room for it."""
    if not always and rng.random() >= BACKDROP_SHARE:
        return ()
    kind = rng.choice(sorted(BACKDROP_KINDS))
    role = "controller" if rng.random() < 0.5 else rng.choice(ONE_BROKER)
    params = {k: rng.choice(v) for k, v in sorted(BACKDROP_KINDS[kind].items())}
    at = round(rng.uniform(_START_S, _START_S + 5.0), 1)
    hold = min(BACKDROP_HOLD.draw(rng), _room(heal_at, at))
    return (Step(at, hold, FaultSpec.of(kind, role, params)),) if hold >= 1.0 else ()


def cut_in_turn(seed: int, heal_at: float) -> tuple[Step, ...]:
    """A controller cut in turn (module docstring) before `heal_at`, drawn from a
    generator of its own seeded by `seed`, with probability `CUT_SHARE`; () when not
    drawn or there is no room for it."""
    rng = random.Random(f"{_CUT_SALT}:{seed}")
    return cut_in_turn_from(rng, heal_at) if rng.random() < CUT_SHARE else ()


def cut_in_turn_from(rng: random.Random, heal_at: float) -> tuple[Step, ...]:
    """A controller cut in turn drawn from `rng` before `heal_at` (whatever `CUT_SHARE`
    says); () when there is no room for it."""
    lag, overlap, tail = (round(rng.uniform(*pair), 1) for pair in (CUT_LAG, CUT_OVERLAP, CUT_TAIL))
    latest = _room(heal_at, lag + overlap + tail)
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, latest), 1)
    return (
        Step(at, round(lag + overlap, 1), _CUT_FIRST),
        Step(round(at + lag, 1), round(overlap + tail, 1), _CUT_SECOND),
    )


def outside_cut(steps: Sequence[Step], actions: Sequence[Action]) -> list[Action]:
    """`actions` without the forced controller elections (`move-controller`) that would
    move the controller within a group of `steps` that names `controller` twice: between
    the two cuts of a controller cut in turn (module docstring), from `CUT_CALM_S` before
    the first cut to the second's start, and in a reset mid-failover
    (`chaos.generator.reset_mid_failover`), from `CUT_CALM_S` before the controller's
    links are slowed to the latest its reset may start."""
    cuts = [s for s in steps if s.fault == _CUT_FIRST]
    zk_cuts = [s for s in steps if s.fault == _CUT_SECOND]
    windows = [
        (cut.at_s - CUT_CALM_S, then.at_s)
        for cut in cuts
        for then in zk_cuts
        if cut.at_s < then.at_s < cut.ends_s
    ]
    slowed = [s for s in steps if s.fault.kind == "latency" and s.fault.target == "controller"]
    windows += [
        (slow.at_s - CUT_CALM_S, reset.at_s + ELECTIONS.within_s)
        for reset in steps
        if reset.fault == RESET and reset.trigger == ELECTIONS
        for slow in slowed
        if slow.at_s < reset.at_s < slow.ends_s
    ]
    return [
        a
        for a in actions
        if a.kind != "move-controller" or not any(lo <= a.at_s <= hi for lo, hi in windows)
    ]


class GroupDraw(Protocol):
    """A correlated fault's draw: its steps before `heal_at` from `rng` (with its
    probability unless `always`), () when not drawn or there is no room."""

    __name__: str

    def __call__(
        self, rng: random.Random, heal_at: float, always: bool = False
    ) -> tuple[Step, ...]: ...


#: Each correlated fault's draw, in the order a dense schedule draws them.
CORRELATED: tuple[GroupDraw, ...] = (
    double_outage,
    failover_after_restart,
    flapping_controller,
    lost_replies_while_isrs_change,
    restart_under_slow_controller,
    frozen_controller,
    backdrop,
)
