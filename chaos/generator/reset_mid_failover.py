"""A reset mid-failover the generic generator (`chaos.generator.generic`) may add to a
dense schedule after its lost registration reply: `reset_mid_failover(seed, heal_at)`,
drawn from a generator of its own seeded by the schedule's seed (so that drawing it moved
none of the schedule's other draws), with probability `RESET_MID_FAILOVER_SHARE`, placed
only where its steps fit.

The controller's links are slowed (`latency controller`, `DELAY_MS`: each of its
ZooKeeper requests reaches the ensemble that much later). The delay begins by closing the
controller's connection, so it first re-arms its watches through it (about 5 s);
`KILL_AFTER_S` later a broker other than the controller is killed past its session
(`KILL_S`), and the controller handles the failure in slow motion: it lists the brokers,
elects new leaders, then takes the dead broker's replicas offline, StopReplica requests
in its batch while it reads the ISRs. When it logs its elections (`partition_state_change`
to `OnlinePartition`, looked for from the kill for `ELECTIONS_WITHIN_S`) its ZooKeeper
connection is reset (`zk-reset controller`): the request then on its way fails with
ConnectionLoss, in the middle of the state change, and the controller reconnects at once
with its session and its role. It must drop what the failed change queued and go on:
the broker returns and gets its leaderships. A gray ZooKeeper link that also flaps, as
in the `controller-zk-reset` scenario; three faults through three mechanisms, one broker
away, so the overlap rules allow them together. The latency and the reset both name
`controller`: `chaos.generator.correlated.outside_cut` keeps forced controller elections
out of the time between them.

`reset_mid_failover_from(rng, heal_at)` draws one from the caller's generator whatever
the share, as the blind hunt's grafts (`chaos.hunt.corpus`) do. Pure; any thread.
"""

from __future__ import annotations

import math
import random

from chaos.generator.schedule import FaultSpec, Step, Trigger

__all__ = [
    "DELAY_MS",
    "ELECTIONS",
    "KILL_AFTER_S",
    "RESET",
    "RESET_MID_FAILOVER_SHARE",
    "reset_mid_failover",
    "reset_mid_failover_from",
]

#: The chance that a dense schedule holds a reset mid-failover.
RESET_MID_FAILOVER_SHARE = 0.3
#: The controller's added delay (ms): a request is on its way that long, a window the
#: reset, started within about 0.2 s of the event, lands in.
DELAY_MS = 500
#: When the broker is killed, seconds after the delay began: about when the controller
#: has re-armed its watches through it (about 5 s: a backlog its failover would queue
#: behind).
KILL_AFTER_S = (4.0, 7.0)
#: How long the broker stays dead (s): past its 6 s session and the controller's slowed
#: handling of its failure, back before the controller's links are.
KILL_S = (10.0, 11.5)
#: How long the controller's elections are looked for from the kill, and how long its
#: links stay slowed after the kill (s): the session's expiry (6 s, and up to 2 s more
#: before ZooKeeper acts on it), whatever the controller had queued (a topic deletion
#: takes a few seconds of slowed writes), then a few requests.
ELECTIONS_WITHIN_S = 16.0
#: The controller's elections for the dead broker's partitions are done: its next
#: request is on its way.
ELECTIONS = Trigger(
    "partition_state_change", (("target", "OnlinePartition"),), ELECTIONS_WITHIN_S, True
)
#: The reset, started by `ELECTIONS`.
RESET = FaultSpec.of("zk-reset", "controller")
#: No fault starts before this (`chaos.generator.generic.START_S`).
_START_S = 5.0
#: Mixed into its seed.
_SALT = "reset-mid-failover"


def reset_mid_failover(seed: int, heal_at: float) -> tuple[Step, ...]:
    """The reset mid-failover of `seed` (module docstring) before `heal_at`, with
    probability `RESET_MID_FAILOVER_SHARE`; () when not drawn or there is no room."""
    rng = random.Random(f"{_SALT}:{seed}")
    drawn = rng.random() < RESET_MID_FAILOVER_SHARE
    return reset_mid_failover_from(rng, heal_at) if drawn else ()


def reset_mid_failover_from(rng: random.Random, heal_at: float) -> tuple[Step, ...]:
    """A reset mid-failover drawn from `rng` before `heal_at` (whatever the share says);
    () when there is no room for it."""
    lag = round(rng.uniform(*KILL_AFTER_S), 1)
    dead = round(rng.uniform(*KILL_S), 1)
    victim = rng.choice(("non-controller:1", "non-controller:2"))
    latest = math.floor((heal_at - lag - ELECTIONS_WITHIN_S) * 10) / 10 - 0.1
    if latest < _START_S:
        return ()
    at = round(rng.uniform(_START_S, latest), 1)
    kill = round(at + lag, 1)
    slowed = {"delay_ms": DELAY_MS}
    return (
        Step(at, round(lag + ELECTIONS_WITHIN_S, 1), FaultSpec.of("latency", "controller", slowed)),
        Step(kill, dead, FaultSpec.of("kill", victim)),
        Step(kill, 0.0, RESET, ELECTIONS),
    )
