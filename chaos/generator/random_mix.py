"""The random mix: `random_mix(seed, duration_s, ...)` draws a schedule from
`random.Random(seed)` and nothing else, so the same arguments give the same schedule.
Kinds rotate, faults do not overlap, and each kind draws its target and params from the
choices in `_DRAWS`. `MIX_KINDS` are the kinds it draws from unless told otherwise.

Errors are `chaos.errors.ScheduleError`s. Pure; any thread.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from chaos.errors import BadTiming, ScheduleError
from chaos.faults.params import Scalar
from chaos.faults.registry import FAULT_TYPES, fault_type
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

_ONE_BROKER = ("controller", "non-controller", "busiest-leader", "random-broker")
#: For each kind: the roles `random_mix` picks from, and the choices for each param.
_DRAWS: Mapping[str, tuple[tuple[str, ...], Mapping[str, tuple[Scalar, ...]]]] = {
    "kill": (_ONE_BROKER, {}),
    "stop": (_ONE_BROKER, {}),
    "pause": (_ONE_BROKER, {}),
    "bounce": (_ONE_BROKER, {}),
    "zk-leader-kill": (("zk-leader",), {}),
    "zk-pause": (("zk-follower", "zk-leader"), {}),
    "partition": (("all",), {"grudge": ("isolate", "majorities-ring", "bridge")}),
    "zk-isolate": (_ONE_BROKER, {}),
    "zk-deaf": (_ONE_BROKER, {}),
    "zk-lost-reply": (_ONE_BROKER, {"hold_s": (1.5, 2.5), "window_s": (0, 6)}),
    "zk-reset": (_ONE_BROKER, {}),
    "broker-isolate": (_ONE_BROKER, {}),
    "session-expire": (_ONE_BROKER, {}),
    "loss": ((*_ONE_BROKER, "all-brokers"), {"percent": (10, 20, 30)}),
    "bandwidth": ((*_ONE_BROKER, "all-brokers"), {"rate_kbit": (128, 256, 512)}),
    "latency": ((*_ONE_BROKER, "all-brokers"), {"delay_ms": (50, 100, 200)}),
    "request": (
        ("non-controller", "random-broker"),
        {"action": ("drop", "delay", "duplicate", "reorder"), "count": (1, 3)},
    ),
    "cpu-starve": (_ONE_BROKER, {"percent": (2, 5, 10)}),
    "memory-squeeze": (_ONE_BROKER, {"limit_mb": (48, 64, 96)}),
    "clock": (
        (*_ONE_BROKER, "all-brokers", "zk-follower", "zk-leader"),
        {
            "action": ("bump", "strobe", "rate"),
            "offset_ms": (-3_600_000, -60_000, 60_000, 3_600_000),
            "period_ms": (1000, 2000),
            "factor": (0.5, 2.0),
        },
    ),
    # the brokers never fsync and mostly read from the page cache: writes are what they do
    "disk-eio": (_ONE_BROKER, {"op": ("write",), "probability": (0.1, 1.0)}),
    "disk-slow": (_ONE_BROKER, {"op": ("any", "write"), "delay_ms": (20, 100, 500)}),
    "disk-full": (_ONE_BROKER, {"budget_bytes": (0, 65536)}),
    "disk-volatile": (_ONE_BROKER, {}),
    # drawn when asked for: it fails to start unless a disk-volatile lasts over it
    "power-loss": (_ONE_BROKER, {}),
    "cert-rotation": (("all",), {}),
}


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
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScheduleError(f"seed must be an integer, got {seed!r}")
    pool = tuple(dict.fromkeys(kinds))
    if not pool:
        raise ScheduleError("random_mix needs at least one kind")
    for kind in pool:
        fault_type(kind)
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
        roles, choices = _DRAWS[kind]
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
