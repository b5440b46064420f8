"""moved-controller-election: a slow controller loses `/controller` amid elections it alone knows.

Setup: topic `chaos-moved-controller-election`, 6 partitions, replication factor 3, min
ISR 2, acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 5 s bounce the first broker that is not the controller (`bounce non-controller:1`):
   the controller moves its leaderships to other replicas, and it rejoins the ISRs as a
   follower. Its partitions are now led by replicas that are not their preferred ones
   (the auto leader rebalance checks every 300 s: it does not move them back during the
   run).
2. At 14 s delay by 0.8 s everything the controller sends on the connections it opens
   (`latency controller`, `delay_ms` 800), as in `moved-controller`: each of its
   ZooKeeper requests takes at least 0.8 s. Its session reconnects through the delay,
   and the watches it sets again fire: it works through a topic change, a broker change
   and the ISR changes one slow round trip after another, for 8 s or more.
3. At 34 s (a seed moves it by up to 1 s), the controller idle again, ask it for
   preferred elections of every partition of the topic (`elect-leaders`, KIP-183's
   ElectLeaders request; it answers after 100 ms, REQUEST_TIMED_OUT, and goes on
   electing the partitions step 1 moved away from their preferred leader). It decides from its
   context and sends the new leaders in one ZooKeeper multi, which reaches ZooKeeper
   0.8 s later. A request queued behind the controller's other work would come after
   the `/controller` change below and be refused (NOT_CONTROLLER) once it resigned.
4. 0.2 s after the request (in practice as soon as it is answered) delete `/controller`
   (`move-controller`). The third broker, whose links are not slowed, bumps the
   controller epoch at once. ElectLeaders is not kept in ZooKeeper, so the successor
   never learns of the elections and leaves those partitions alone: no state znode is
   written at the new epoch before the old controller's multi arrives, and only the
   multi's `/controller_epoch` version check can stop it. It must fail, and the old
   controller resign.
5. At 45 s the delay ends; heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `controller_writes_fenced` (no partition state written
at the old controller epoch commits after the new one's epoch bump, in ZooKeeper's zxid
order); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-moved-controller-election")
#: The controller's added delay: well below the 2 s kazoo allows a connection handshake.
DELAY_MS = 800
#: How long the controller holds the ElectLeaders answer: short, so that the move follows
#: while the elections' multi is still on its way to ZooKeeper.
ELECT_TIMEOUT_MS = 100
#: The move after the request: less than the delay of the elections' multi.
MOVE_AFTER_S = 0.2


def plan(seed: int | None) -> Schedule:
    """A non-controller bounced at 5 s, the controller slowed from 14 s to 45 s,
    preferred elections asked for at ~34 s and `/controller` deleted 0.2 s later."""
    draws = Draws(seed)
    elect_at = draws.around(34, 1)
    actions = (
        Action(
            elect_at,
            "elect-leaders",
            (("timeout_ms", ELECT_TIMEOUT_MS), ("topic", WORKLOAD.topic)),
        ),
        Action(round(elect_at + MOVE_AFTER_S, 1), "move-controller", ()),
    )
    steps = (
        Step(5.0, 0.0, FaultSpec("bounce", "non-controller:1")),
        Step(14.0, 31.0, FaultSpec("latency", "controller", (("delay_ms", DELAY_MS),))),
    )
    return Schedule(seed, steps, heal_at_s=50, end_s=WORKLOAD.duration_s, actions=actions)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30, also={"controller_writes_fenced"})
