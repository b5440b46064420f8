"""A lost registration reply the generic generator (`chaos.generator.generic`) may add to a
dense schedule after its controller cut in turn: `lost_registration(seed, heal_at)`,
drawn from a generator of its own seeded by the schedule's seed (so that drawing it moved
none of the schedule's other draws), with probability `LOST_REGISTRATION_SHARE`, placed
only where its steps fit.

A broker named by id (`broker:<id>`) is slowed (`latency`, `DELAY_MS`: each of its
ZooKeeper requests reaches the ensemble that much later) and cut from ZooKeeper past its
session (`zk-isolate`, `CUT_S`); when it learns that its session expired (its own
`zk_session_state` `lost`, looked for from `ARMED_AFTER_S` into the cut for
`LOOKED_FOR_S`), lost-reply spells on it catch a write of its new session
(`zk-lost-reply`, `writes_only`, over `SPELLS_S`): its registration's create is applied
and its answer lost, and the create its client sends again meets the node the first
attempt made (overlap rule 3's sixth exception). A network failing a broker's path to
the ensemble as it comes back, as in the `lost-registration-reply` scenario.

`lost_registration_from(rng, heal_at)` draws one from the caller's generator whatever the
share, as the blind hunt's grafts (`chaos.hunt.corpus`) do. Pure; any thread.
"""

from __future__ import annotations

import math
import random

from chaos.generator.schedule import FaultSpec, Step, Trigger

__all__ = [
    "CUT_S",
    "DELAY_MS",
    "LOST_REGISTRATION_SHARE",
    "lost_registration",
    "lost_registration_from",
]

#: The chance that a dense schedule holds a lost registration reply.
LOST_REGISTRATION_SHARE = 0.3
#: The broker's added delay (ms): its create is on its way that long, so that a spell's
#: freeze of the ensemble's leader usually holds it there.
DELAY_MS = 1000
#: How long the cut from ZooKeeper lasts (s): past the fast profile's 6 s session.
CUT_S = (7.0, 9.0)
#: When the spells are armed, seconds into the cut (past the session), and how long
#: the broker's `lost` is looked for: its reconnection through the delay.
ARMED_AFTER_S = 6.0
LOOKED_FOR_S = 8.0
#: How long the spells may go on, and the most each holds a write (s).
SPELLS_S = 6.0
HOLD_S = 2.5
#: How long the broker stays slowed after the cut ends (s): its new session and its
#: create, a second each, and the create sent again.
SLOWED_AFTER_S = 10.0
#: No fault starts before this (`chaos.generator.generic.START_S`).
_START_S = 5.0
#: The compose cluster's broker ids.
_BROKER_IDS = (1, 2, 3)
#: Mixed into its seed.
_SALT = "lost-registration"


def lost_registration(seed: int, heal_at: float) -> tuple[Step, ...]:
    """The lost registration reply of `seed` (module docstring) before `heal_at`, with
    probability `LOST_REGISTRATION_SHARE`; () when not drawn or there is no room."""
    rng = random.Random(f"{_SALT}:{seed}")
    if rng.random() >= LOST_REGISTRATION_SHARE:
        return ()
    return lost_registration_from(rng, heal_at)


def lost_registration_from(rng: random.Random, heal_at: float) -> tuple[Step, ...]:
    """A lost registration reply drawn from `rng` before `heal_at` (whatever the share
    says); () when there is no room for it."""
    broker = rng.choice(_BROKER_IDS)
    cut = round(rng.uniform(*CUT_S), 1)
    lead = round(rng.uniform(0.5, 2.0), 1)  # the delay is in place before the cut
    # the spells may begin as late as their trigger may fire, and end a hold past that
    spells_end = ARMED_AFTER_S + LOOKED_FOR_S + SPELLS_S + HOLD_S
    span = lead + max(cut + SLOWED_AFTER_S, spells_end)
    latest = math.floor((heal_at - span) * 10) / 10 - 0.1
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, latest), 1)
    target = f"broker:{broker}"
    spells = {"hold_s": HOLD_S, "window_s": SPELLS_S, "writes_only": True}
    lost = Trigger(
        "zk_session_state", (("node", f"broker{broker}"), ("state", "lost")), LOOKED_FOR_S, True
    )
    return (
        Step(at, round(lead + cut + SLOWED_AFTER_S, 1), _latency(target)),
        Step(round(at + lead, 1), cut, FaultSpec.of("zk-isolate", target)),
        Step(
            round(at + lead + ARMED_AFTER_S, 1),
            0.0,
            FaultSpec.of("zk-lost-reply", target, spells),
            lost,
        ),
    )


def _latency(target: str) -> FaultSpec:
    return FaultSpec.of("latency", target, {"delay_ms": DELAY_MS})
