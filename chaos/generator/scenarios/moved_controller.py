"""moved-controller: a slowed-down controller loses `/controller` during a broker failure.

Setup: topic `chaos-moved-controller`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 8 s delay by 0.8 s everything the controller sends on the connections it opens
   (`latency controller`, `delay_ms` 800): each of its ZooKeeper requests takes at least
   0.8 s. Its session reconnects through the delay (kazoo gives a connection handshake
   the session timeout over the number of servers, 2 s: a delay of 2 s or more keeps it
   suspended, holding every event, for as long as the delay lasts).
2. At 16 s (a seed moves it by up to 1 s) SIGKILL the first broker that is not the
   controller (`kill non-controller:1`) for 14 s. Its registration vanishes 4 to 7 s
   later; the controller, behind on its events, moves its leaderships and shrinks the
   ISRs it was in, one slow ZooKeeper round trip after another.
3. 8 s after the kill (a seed: ± 0.5 s) delete `/controller` (the action
   `move-controller`, as an operator forces a new election). The third broker, whose
   links are not slowed, wins a higher epoch at once and rewrites the failed broker's
   partitions; the slow controller learns of it only when its event queue gets to the
   change.
4. Nothing the superseded controller still writes may land: a state znode already
   written at the new epoch makes it abort the change, and any other write must fail
   the `/controller_epoch` check and make it resign.
5. At 40 s the delay ends; heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants and `controller_writes_fenced` (no partition state written at
the old controller epoch commits after the new one's epoch bump: ZooKeeper's zxids order
the two, so a write in flight when the epoch changes that lands unfenced is named however
soon after the election it is logged); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-moved-controller")
#: The controller's added delay: well below the 2 s kazoo allows a connection handshake.
DELAY_MS = 800


def plan(seed: int | None) -> Schedule:
    """The controller slowed from 8 s to 40 s, a broker killed at ~16 s, `/controller`
    deleted ~8 s after the kill."""
    draws = Draws(seed)
    kill_at = draws.around(16, 1)
    move = Action(round(kill_at + draws.around(8, 0.5), 1), "move-controller", ())
    steps = (
        Step(8.0, 32.0, FaultSpec("latency", "controller", (("delay_ms", DELAY_MS),))),
        Step(kill_at, 14.0, FaultSpec("kill", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=45, end_s=WORKLOAD.duration_s, actions=(move,))


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30, also={"controller_writes_fenced"})
