"""slow-network: delay, then drop, traffic on the busiest leader's links.

Setup: topic `chaos-slow-network`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s (a seed moves it by up to 2 s) delay the busiest leader's traffic by 200 ms
   (`latency`; a seed picks 100, 200 or 300 ms) for 20 s (± 4 s). Produce latency grows;
   fetches slow down but followers stay in the ISR.
2. At 45 s (a seed moves it by up to 2 s) drop 20 % of its packets (`loss`; a seed picks
   10, 20 or 30 %) for 20 s (± 4 s). Requests time out and are retried; followers may
   fall out of the ISR and come back; its ZooKeeper session may survive or expire.
3. Heal at 75 s; the load goes on until 90 s.

Verdict: the core invariants (retries produce no lost or reordered acknowledged writes);
convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-slow-network", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """Latency on the busiest leader at ~10 s, then loss at ~45 s, each for ~20 s."""
    draws = Draws(seed)
    delay = draws.pick((200, 100, 300))
    percent = draws.pick((20, 10, 30))
    latency = FaultSpec.of("latency", "busiest-leader", {"delay_ms": delay})
    loss = FaultSpec.of("loss", "busiest-leader", {"percent": percent})
    steps = (
        Step(draws.around(10, 2), draws.around(20, 4), latency),
        Step(draws.around(45, 2), draws.around(20, 4), loss),
    )
    return Schedule(seed, steps, heal_at_s=75, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=40)
