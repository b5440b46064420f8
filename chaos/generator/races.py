"""Races the generic generator (`chaos.generator.generic`) may add to a dense schedule: a
forced controller election (`move-controller`) chasing the controller while it is in
the middle of something, its links slowed (`latency controller`) so that the something
lasts long enough to be caught in:

- an *admin race*: one of the schedule's admin operations that sets the controller
  writing partition state (`elect-leaders`, `reassign`, `vacate`, `delete-topic`),
  chased by `move-controller` `CHASE_LAG` after it. The controller has decided and its
  ZooKeeper writes are on their way, slowed, when another broker wins `/controller`
  and bumps the controller epoch: an operator forcing an election while an admin
  command runs, or a controller deposed by its own slowness;
- a *reconnect race*: the controller's ZooKeeper connection re-made with its session
  kept (`zk-reset controller`), chased by `move-controller` `CHASE_LAG` later. Through
  the slowed links the reconnection takes seconds, during which the controller watches
  nothing: `/controller` moves while it cannot see it.

`draw_race(seed, actions, heal_at)` draws one from a generator of its own, seeded by
the seed (as `chaos.generator.replication` does), with probability `RACE_SHARE`; the
generic generator places it after the correlated faults and before the timed ones, only
where the overlap rules (`chaos.generator.overlap`) let its steps be beside the
correlated faults. A seed whose race is placed draws its timed and triggered faults
around it: those differ from what the seed drew before races existed (about one dense
seed in seven); every other seed names the schedule it named. `race_from(rng, actions,
heal_at)` draws one from the caller's generator whatever the share, as the blind hunt's
grafts (`chaos.hunt.corpus`) do. Pure; any thread.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from chaos.generator.schedule import Action, FaultSpec, Step

__all__ = [
    "CHASED",
    "CHASE_LAG",
    "RACE_DELAYS",
    "RACE_SHARE",
    "Race",
    "draw_race",
    "race_from",
]

#: The chance that a dense schedule draws a race.
RACE_SHARE = 0.35
#: The chance that a race drawn is an admin race, when the schedule has an operation to
#: chase.
ADMIN_RACE_SHARE = 0.7
#: The admin operations that set the controller writing partition state.
CHASED = ("elect-leaders", "reassign", "vacate", "delete-topic")
#: How long after the operation or the reset `/controller` is deleted (s): within the
#: first slowed round trip of the controller's writes or of its reconnection.
CHASE_LAG = (0.2, 1.2)
#: The delays the controller's links get (ms): each of its ZooKeeper requests takes at
#: least that long.
RACE_DELAYS = (300, 800, 1500)
#: How long before the chased operation or reset the links are slowed (s).
SLOWED_BEFORE = (1.0, 5.0)
#: How long after the move the links stay slowed (s).
SLOWED_AFTER = (4.0, 10.0)
#: No race starts before this (`chaos.generator.generic.START_S`).
_START_S = 5.0
#: A forced election comes at least this long before the heal, as every admin operation
#: does (`chaos.generator.admin_draws`).
_BEFORE_HEAL_S = 10.0
#: Mixed into the race's seed.
_SALT = "race"


@dataclass(frozen=True, slots=True)
class Race:
    """A race's steps (the slowed links, maybe the reset) and its forced election."""

    steps: tuple[Step, ...]
    actions: tuple[Action, ...]


def draw_race(seed: int, actions: Sequence[Action], heal_at: float) -> Race | None:
    """The race of `seed` (module docstring) for a schedule with `actions` whose heal
    comes at `heal_at`, or None when none is drawn or it has no room."""
    rng = random.Random(f"{_SALT}:{seed}")
    return race_from(rng, actions, heal_at) if rng.random() < RACE_SHARE else None


def race_from(rng: random.Random, actions: Sequence[Action], heal_at: float) -> Race | None:
    """A race drawn from `rng` (whatever `RACE_SHARE` says) for a schedule with `actions`
    whose heal comes at `heal_at`, or None when it has no room."""
    latest = heal_at - _BEFORE_HEAL_S
    chased = [a for a in actions if a.kind in CHASED and _START_S + 1.0 <= a.at_s <= latest]
    if chased and rng.random() < ADMIN_RACE_SHARE:
        at, reset = rng.choice(chased).at_s, None
    else:
        if latest < _START_S + SLOWED_BEFORE[1]:
            return None
        at = round(rng.uniform(_START_S + SLOWED_BEFORE[1], latest), 1)
        reset = Step(at, 0.0, FaultSpec.of("zk-reset", "controller"))
    move = round(at + rng.uniform(*CHASE_LAG), 1)
    start = round(max(_START_S, at - rng.uniform(*SLOWED_BEFORE)), 1)
    end = min(move + rng.uniform(*SLOWED_AFTER), math.floor(heal_at * 10) / 10 - 0.1)
    if move > latest or start >= at or end <= move:
        return None
    delay = {"delay_ms": rng.choice(RACE_DELAYS)}
    slowed = Step(start, round(end - start, 1), FaultSpec.of("latency", "controller", delay))
    steps = (slowed,) if reset is None else (slowed, reset)
    return Race(steps, (Action(move, "move-controller"),))
