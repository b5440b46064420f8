"""empty-broker-failure: a broker hosting nothing dies beside an offline partition; all forget it.

Setup: topic `chaos-empty-broker`, 6 partitions, replication factor 2, min ISR 1,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 3 s create `chaos-empty-broker-lone`: 3 partitions of one replica each, one on
   every broker.
2. At 8 s (a seed moves it by up to 1 s) retire the second broker that is not the
   controller (`vacate non-controller:2`): every replica it holds, of every topic, is
   reassigned to the others, and it stays registered hosting nothing once the
   reassignment completes.
3. At 22 s (a seed: up to 2 s either way) SIGKILL the first broker that is not the
   controller (`kill non-controller:1`) until the heal: the partition of the lone topic
   it holds has no other replica and stays offline.
4. 8 s later (a seed: 7 to 9 s) SIGKILL the retired broker (`kill non-controller:2`)
   until the heal. Its session expires 6 s later; it hosted nothing, so the controller
   has nothing to elect or take offline, and must still tell the live brokers with an
   UpdateMetadata of its own (KAFKA-13225: skipped while some partition was offline).
5. Heal at 50 s (both brokers start again); the load goes on until 75 s.

Verdict: the core invariants, `dead_broker_forgotten` (within 10 s of each failure every
live broker's metadata leaves the dead broker out) and `reassignment_completes` (the
retirement's reassignment); convergence within 30 s of the heal. `no_offline_partitions`
is not asked for: the lone partition is offline by design.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from rundir.invariants.names import DEAD_BROKER_FORGOTTEN, REASSIGNMENT_COMPLETES

WORKLOAD = Workload("chaos-empty-broker", replication_factor=2, min_insync_replicas=1)
LONE = f"{WORKLOAD.topic}-lone"
HEAL_AT_S = 50.0


def plan(seed: int | None) -> Schedule:
    """The lone topic at 3 s, the retirement at ~8 s, the two kills ~22 s and ~30 s."""
    draws = Draws(seed)
    create = Action(
        3, "create-topic", (("partitions", 3), ("replication_factor", 1), ("topic", LONE))
    )
    vacate = Action(draws.around(8, 1), "vacate", (("broker", "non-controller:2"),))
    first = draws.around(22, 2)
    second = round(first + draws.around(8, 1), 1)
    steps = (
        Step(first, round(HEAL_AT_S - first, 1), FaultSpec("kill", "non-controller:1")),
        Step(second, round(HEAL_AT_S - second, 1), FaultSpec("kill", "non-controller:2")),
    )
    return Schedule(
        seed, steps, heal_at_s=HEAL_AT_S, end_s=WORKLOAD.duration_s, actions=(create, vacate)
    )


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=30, also={DEAD_BROKER_FORGOTTEN, REASSIGNMENT_COMPLETES}
)
