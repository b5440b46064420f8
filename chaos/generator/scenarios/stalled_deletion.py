"""stalled-deletion: a topic deletion held up by a frozen broker outlives its controller.

Setup: topic `chaos-stalled-deletion`, 6 partitions, replication factor 2, min ISR 1,
acks=all; two producers at 50 values/s each and a consumer, for 75 s. Beside it, at 8 s,
the action `create-topic` creates `chaos-stalled-deletion-doomed` (3 partitions,
replication factor 3: a replica on every broker), which no client uses. A deletion of
a topic that small completes in well under a second, before any fault could interrupt
it; a frozen replica holds it up.

Steps:

1. At 19 s (a seed moves it by up to 1 s) freeze the first broker that is not the
   controller (`pause non-controller:1`) for 4.5 s, less than its session.
2. 1 s later request the deletion of the doomed topic (the action `delete-topic`,
   `/admin/delete_topics/<topic>`). The controller sends StopReplica with delete to every
   replica; the frozen broker does not answer, so the deletion waits.
3. 1 s after that (a seed: 0.5 to 1.5 s) SIGKILL the controller (`kill controller`) for
   15 s (a seed: ± 3 s). The killed broker holds a replica of the doomed topic, so the
   new controller can finish the deletion only once it is back.
4. The new controller's failover must resume the deletion queued under
   `/admin/delete_topics` and complete it: the topic's znodes and replicas gone.
5. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `topic_deletion_completes` (the doomed topic deleted by
the end of the run, not left half-deleted); convergence within 25 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-stalled-deletion", replication_factor=2, min_insync_replicas=1)
#: The topic whose deletion the scenario requests, beside the workload's.
DOOMED = f"{WORKLOAD.topic}-doomed"


def plan(seed: int | None) -> Schedule:
    """The doomed topic created at 8 s, a broker frozen at ~19 s, the deletion 1 s later,
    the controller killed ~1 s after that."""
    draws = Draws(seed)
    create = Action(8.0, "create-topic", (("partitions", 3), ("topic", DOOMED)))
    freeze_at = draws.around(19, 1)
    delete = Action(round(freeze_at + 1, 1), "delete-topic", (("topic", DOOMED),))
    kill_at = round(delete.at_s + draws.around(1, 0.5), 1)
    steps = (
        Step(freeze_at, 4.5, FaultSpec("pause", "non-controller:1")),
        Step(kill_at, draws.around(15, 3), FaultSpec("kill", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=50, end_s=WORKLOAD.duration_s, actions=(create, delete))


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 25, also={"topic_deletion_completes"})
