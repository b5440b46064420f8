"""stalled-reassignment: a reassignment held up by a frozen broker outlives its controller.

Setup: topic `chaos-stalled-reassignment`, 6 partitions, replication factor 2, min ISR 1,
acks=all; two producers at 50 values/s each and a consumer, for 75 s. A reassignment of
logs this small completes in under a second, before any fault could interrupt it; a frozen
target broker holds it up.

Steps:

1. At 19 s (a seed moves it by up to 1 s) freeze the first broker that is not the
   controller (`pause non-controller:1`) for 4.5 s, less than its session.
2. 1 s later start the reassignment (the action `reassign`, shift 1: every partition gets
   a replica on another broker). The partitions with a new replica on the frozen broker
   wait for it to catch up.
3. 1 s after that (a seed: 0.5 to 1.5 s) SIGKILL the controller (`kill controller`) for
   15 s (a seed: ± 3 s). The frozen broker thaws and catches up while no controller, or
   a new one, is in charge.
4. The new controller's failover must resume the reassignment in flight from
   `/admin/reassign_partitions` and complete it.
5. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `reassignment_completes`; convergence within 45 s of the
heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-stalled-reassignment", replication_factor=2, min_insync_replicas=1)


def plan(seed: int | None) -> Schedule:
    """A broker frozen at ~19 s, the reassignment 1 s later, the controller killed ~1 s
    after that."""
    draws = Draws(seed)
    freeze_at = draws.around(19, 1)
    reassign = Action(
        round(freeze_at + 1, 1), "reassign", (("topic", WORKLOAD.topic), ("shift", 1))
    )
    kill_at = round(reassign.at_s + draws.around(1, 0.5), 1)
    steps = (
        Step(freeze_at, 4.5, FaultSpec("pause", "non-controller:1")),
        Step(kill_at, draws.around(15, 3), FaultSpec("kill", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=50, end_s=WORKLOAD.duration_s, actions=(reassign,))


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 45, also={"reassignment_completes"})
