"""reassignment-under-failover: kill the controller while a reassignment runs; it completes.

Setup: topic `chaos-reassignment`, 6 partitions, replication factor 2, min ISR 1,
acks=all; two producers at 50 values/s each and a consumer, for 75 s. With two replicas on
three brokers, the reassignment gives every partition a replica on a broker that must copy
the log first.

Steps:

1. At 20 s (a seed moves it by up to 2 s) start the reassignment (the action `reassign`,
   shift 1: each replica moves to the next broker id, written to
   `/admin/reassign_partitions`). The 20 s of load before it give the logs something to
   copy.
2. 1 s later (a seed: 0.5 to 1.5 s) SIGKILL the controller (`kill controller`) while the
   new replicas are still catching up.
3. The new controller's failover reads `/admin/reassign_partitions` and resumes every
   reassignment in flight: it waits for the new replicas to join the ISR, then elects
   leaders in the target replica set, stops and deletes the replicas left out, and
   removes the request.
4. At 36 s (a seed: 15 ± 3 s after the kill) start the old controller again.
5. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `reassignment_completes`: every partition ends with the
target replicas and `/admin/reassign_partitions` is gone; convergence within 45 s of the
heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-reassignment", replication_factor=2, min_insync_replicas=1)


def plan(seed: int | None) -> Schedule:
    """Start the reassignment at ~20 s and kill the controller ~1 s later for ~15 s."""
    draws = Draws(seed)
    start = draws.around(20, 2)
    reassign = Action(start, "reassign", (("topic", WORKLOAD.topic), ("shift", 1)))
    kill_at = round(start + draws.around(1, 0.5), 1)
    kill = Step(kill_at, draws.around(15, 3), FaultSpec("kill", "controller"))
    return Schedule(seed, (kill,), heal_at_s=50, end_s=WORKLOAD.duration_s, actions=(reassign,))


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 45, also={"reassignment_completes"})
