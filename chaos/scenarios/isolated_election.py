"""isolated-election: the controller elects new leaders while a broker is cut off from it.

Setup: topic `chaos-isolated-election`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) cut the first broker that is not the controller
   from the other brokers for 22 s (`broker-isolate non-controller:1`). It keeps its
   ZooKeeper session, so it stays registered, and every request the controller sends it
   fails until the cut heals.
2. 2 s later (a seed: 1.5 to 2.5 s) kill the other broker that is not the controller
   (`kill non-controller:2`) for 18 s. When its session expires the controller elects new
   leaders for what it led from the ISRs, which still hold the cut broker, and tells the
   cut broker to lead or follow: LeaderAndIsr that cannot reach it yet.
3. The controller's sender must resend those requests until they are answered: when the
   killed broker is back and the cut heals (at about 37 s), the cut broker learns every
   leadership it missed, follows the new leaders and rejoins the ISRs.
4. Heal at 55 s; the load goes on until 90 s.

Verdict: the core invariants; convergence within 30 s of the heal (a broker that never got
its LeaderAndIsr keeps following a leader that lost its role, or does not lead what
ZooKeeper says it leads, and its replicas stay out of the ISRs).
"""

from __future__ import annotations

from chaos.scenarios.scenario import Draws, Scenario, Workload
from chaos.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-isolated-election", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """A non-controller cut from its peers at ~15 s for 22 s; the other one killed ~2 s
    later for 18 s."""
    draws = Draws(seed)
    cut = draws.around(15, 2)
    kill = round(cut + draws.around(2, 0.5), 1)
    steps = (
        Step(cut, 22, FaultSpec("broker-isolate", "non-controller:1")),
        Step(kill, 18, FaultSpec("kill", "non-controller:2")),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
