"""starved-controller: hold the controller to 5 % of one core under load, then let it go.

Setup: topic `chaos-starved-controller`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) put a CFS quota of 5 % of a core on the
   controller (`cpu-starve`; a seed picks 5, 2 or 10 %), measured in its cgroup: a gray
   failure. The broker stays alive and registered, but everything it does (its
   controller's event thread, its partitions' produce and fetch, its heartbeats to
   ZooKeeper) runs some twenty times slower. It may keep its ZooKeeper session and stay
   controller while its requests crawl, or lose it: then another broker becomes
   controller with a higher epoch, and what the starved one still sends is fenced.
   Followers of its partitions, and its own followers, fall behind and may leave the
   ISRs.
2. At 45 s (a seed: 30 ± 5 s after the start) lift the quota (measured: the cgroup's
   quota back to none). It catches up: ISRs grow back, a deposed controller resigns.
3. Heal at 60 s; the load goes on until 90 s.

Verdict: the core invariants (slowness alone loses no acknowledged write, and no stale
epoch is obeyed); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-starved-controller", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """The controller at a few percent of a core from ~15 s for ~30 s."""
    draws = Draws(seed)
    percent = draws.pick((5, 2, 10))
    starve = FaultSpec.of("cpu-starve", "controller", {"percent": percent})
    step = Step(draws.around(15, 3), draws.around(30, 5), starve)
    return Schedule(seed, (step,), heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
