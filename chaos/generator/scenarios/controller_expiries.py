"""controller-expiries: the controller loses its ZooKeeper session, three times in a row.

Setup: topic `chaos-controller-expiries`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 8 s (a seed moves it by up to 1 s) cut the controller from every ZooKeeper server
   for 10 s (`zk-isolate controller`): its session expires after 6 s, it resigns, and
   another broker is elected. When the cut heals it registers again with a new session
   and finds the new controller.
2. At 26 s and at 44 s do the same to whichever broker is the controller then. From
   the second round on, the election may fall to a broker that was the controller
   before its own session expired (always, by the third round, unless the last broker
   never elected wins it); that broker must start afresh: a controller whose previous
   term ended with its session must fail over like any other winner (KAFKA-4229).
3. Heal at 56 s; the load goes on until 90 s.

Verdict: the core invariants; convergence within 30 s of the heal (a winner that holds
`/controller` without acting as controller elects nobody for the partitions of the
isolated broker and never sends the brokers metadata naming it).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-controller-expiries", duration_s=90)
#: How long each controller is cut from ZooKeeper: longer than its 6 s session.
CUT_S = 10
#: When each round starts (before a seed's shift).
ROUNDS_AT_S = (8, 26, 44)


def plan(seed: int | None) -> Schedule:
    """The controller of the moment cut from ZooKeeper for 10 s at ~8, ~26 and ~44 s."""
    draws = Draws(seed)
    steps = tuple(
        Step(draws.around(at, 1), CUT_S, FaultSpec("zk-isolate", "controller"))
        for at in ROUNDS_AT_S
    )
    return Schedule(seed, steps, heal_at_s=56, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
