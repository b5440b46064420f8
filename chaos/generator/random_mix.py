"""The random mix: `random_mix(seed, duration_s, ...)` draws a schedule from
`random.Random(seed)` and nothing else, so the same arguments give the same schedule.
Kinds rotate, faults do not overlap, and each kind draws its target and params from the
choices in `_DRAWS`. `MIX_KINDS` are the kinds it draws from unless told otherwise.

Errors are `chaos.errors.ScheduleError`s. Pure; any thread.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from chaos.errors import BadTiming
from chaos.faults.registry import FAULT_TYPES, fault_type
from chaos.generator.fault_draws import FAULT_DRAWS, kind_pool
from chaos.generator.schedule import FaultSpec, Schedule, Step, seconds

__all__ = ["MIX_KINDS", "random_mix"]

#: The kinds `random_mix` draws from unless told otherwise: each leaves the cluster able to
#: recover on its own, and one at a time none of them loses acknowledged writes. `zk-deaf`
#: and `zk-lost-reply` are left out too: a broker deaf for longer than its session loses
#: it, and both are there to aim at one write (`zk-deaf-leader`, `lost-isr-reply`), not
#: to draw. `request` takes effect only when the controller sends the broker a request,
#: which a mix of one fault at a time does not see to: it is drawn when asked for. The disk
#: kinds need a cluster started with the disk layers (`chaos.faults.disk`): drawn when
#: asked for too. `power-loss` is never drawn: it needs layers armed by a `disk-volatile`
#: lasting over it, and under Kafka's default flush policy it may lose acknowledged writes
#: (the `power-loss` scenario). `cert-rotation` is drawn when asked for: it restarts every
#: server three times over several minutes and replaces the repository's certificates.
MIX_KINDS: tuple[str, ...] = tuple(
    k
    for k in FAULT_TYPES
    if k not in ("partition", "zk-deaf", "zk-lost-reply", "request", "power-loss", "cert-rotation")
    and not k.startswith("disk-")
)


def _range(pair: tuple[float, float], what: str, positive: bool = False) -> tuple[float, float]:
    low, high = (seconds(x, what) for x in pair)
    if low > high or (positive and low <= 0):
        raise BadTiming(f"{what} must be (min, max) with {'0 < ' if positive else ''}min <= max")
    return low, high


def random_mix(
    seed: int,
    duration_s: float,
    kinds: Sequence[str] = MIX_KINDS,
    quiet_s: tuple[float, float] = (5.0, 10.0),
    fault_s: tuple[float, float] = (5.0, 15.0),
    heal_s: float = 20.0,
) -> Schedule:
    """A seeded mix of faults over `duration_s` seconds, drawn from `random.Random(seed)`
    only. Kinds rotate: each round shuffles `kinds` and uses each once, and no kind comes
    twice in a row when more than one is allowed. A quiet period drawn from `quiet_s`
    comes before each fault; faults do not overlap; each lasting fault lasts a time drawn
    from `fault_s`; the last `heal_s` seconds are the heal phase. Times are rounded to
    0.1 s. `ScheduleError` for bad arguments or a duration too short for one fault."""
    pool = kind_pool(seed, kinds, "random_mix")
    quiet, hold = _range(quiet_s, "quiet_s"), _range(fault_s, "fault_s", positive=True)
    heal_at = seconds(duration_s, "duration_s") - seconds(heal_s, "heal_s")
    if heal_at <= 0 or heal_s <= 0:
        raise BadTiming(f"heal_s ({heal_s}) must be above 0 and below duration_s ({duration_s})")
    rng = random.Random(seed)
    steps: list[Step] = []
    bag: list[str] = []
    previous: str | None = None
    t = round(rng.uniform(*quiet), 1)
    while True:
        if not bag:
            bag = list(pool)
            rng.shuffle(bag)
            if len(bag) > 1 and bag[-1] == previous:
                bag[0], bag[-1] = bag[-1], bag[0]
        kind = bag.pop()
        roles, choices = FAULT_DRAWS[kind]
        lasting = fault_type(kind).lasts is not False
        duration = round(rng.uniform(*hold), 1) if lasting else 0.0
        if t + duration > heal_at:
            break
        target = rng.choice(roles)
        params = {name: rng.choice(values) for name, values in sorted(choices.items())}
        steps.append(Step(t, duration, FaultSpec.of(kind, target, params)))
        previous = kind
        t = round(t + duration + rng.uniform(*quiet), 1)
    if not steps:
        raise BadTiming(f"duration_s {duration_s} leaves no room for a fault before the heal")
    return Schedule(seed, tuple(steps), heal_at, float(duration_s))
