"""rolling-restart: stop and start each broker in turn, as an upgrade would.

Setup: topic `chaos-rolling-restart`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s, 34 s and 58 s (a seed moves each by up to 1 s and shuffles the order) stop
   broker 1, 2 and 3 (`stop broker:<id>`, a controlled shutdown) and start each again
   10 s later. The 14 s between one start and the next stop leave the restarted broker
   time to catch up and rejoin the ISRs.
2. Each stop moves leadership away from the stopping broker first; stopping the
   controller moves the controller too.
3. Heal at 70 s; the load goes on until 90 s.

Verdict: the core invariants and `no_offline_partitions`; convergence within 30 s of the
heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-rolling-restart", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """Each broker stopped for 10 s, 24 s apart."""
    draws = Draws(seed)
    brokers = draws.order((1, 2, 3))
    steps = tuple(
        Step(draws.around(at, 1), 10, FaultSpec("stop", f"broker:{broker}"))
        for at, broker in zip((10, 34, 58), brokers, strict=True)
    )
    return Schedule(seed, steps, heal_at_s=70, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30, also={"no_offline_partitions"})
