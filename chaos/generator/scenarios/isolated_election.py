"""isolated-election: a new controller elects leaders while a broker is cut off from it.

Setup: topic `chaos-isolated-election`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) cut the first broker that is not the controller
   from the other brokers for 45 s (`broker-isolate non-controller:1`). It keeps its
   ZooKeeper session, so it stays registered.
2. 2 s later (a seed: 1.5 to 2.5 s) kill the controller (`kill controller`) for 25 s.
   When its session expires another broker takes over (the cut one, or the other) and
   elects new leaders for what the dead one led, from ISRs that still hold the cut broker.
   Its LeaderAndIsr and UpdateMetadata for the brokers on the other side of the cut go
   over channels it has just opened, whose connections cannot be made: they fail when
   gRPC gives up connecting (20 s), and then at once, until the cut heals.
3. The new controller's senders must resend every failed request until it is answered:
   when the cut heals (at about 60 s) the cut-off brokers learn every leadership they
   missed, follow the new leaders and rejoin the ISRs.
4. Heal at 65 s; the load goes on until 90 s.

Verdict: the core invariants; convergence within 30 s of the heal (a broker that never got
its LeaderAndIsr keeps following a leader that lost its role, or does not lead what
ZooKeeper says it leads, and its replicas stay out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-isolated-election", duration_s=90)
#: How long the broker is cut off: the new controller is elected about 8 s into the cut,
#: and its first requests across the cut fail when gRPC gives up connecting, 20 s later.
CUT_S = 45


def plan(seed: int | None) -> Schedule:
    """A non-controller cut from its peers at ~15 s for 45 s; the controller killed ~2 s
    later for 25 s."""
    draws = Draws(seed)
    cut = draws.around(15, 2)
    kill = round(cut + draws.around(2, 0.5), 1)
    steps = (
        Step(cut, CUT_S, FaultSpec("broker-isolate", "non-controller:1")),
        Step(kill, 25, FaultSpec("kill", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=65, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
