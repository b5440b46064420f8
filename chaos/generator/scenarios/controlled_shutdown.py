"""controlled-shutdown: stop brokers with SIGTERM under load; no partition goes offline.

Setup: topic `chaos-controlled-shutdown`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) stop the busiest leader (`stop`, docker stop:
   SIGTERM, SIGKILL after 30 s). It asks the controller for a controlled shutdown; the
   controller moves leadership of its partitions to other ISR members and takes it out of
   the ISRs before it exits.
2. At 30 s (a seed: 15 ± 3 s after the stop) start it again; it catches up.
3. At 42 s (a seed moves it by up to 3 s) stop the controller the same way: it answers
   its own controlled shutdown, then resigns, and another broker takes over.
4. At 57 s (a seed: 15 ± 3 s after the stop) start it again.
5. Heal at 65 s; the load goes on until 90 s.

Verdict: the core invariants and `no_offline_partitions`: at no time is a partition
without a leader; convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-controlled-shutdown", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """Stop the busiest leader at ~15 s, then the controller at ~42 s, each for ~15 s."""
    draws = Draws(seed)
    steps = tuple(
        Step(draws.around(at, 3), draws.around(15, 3), FaultSpec("stop", target))
        for at, target in ((15, "busiest-leader"), (42, "controller"))
    )
    return Schedule(seed, steps, heal_at_s=65, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30, also={"no_offline_partitions"})
