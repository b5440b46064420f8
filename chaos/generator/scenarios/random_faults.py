"""random: every fault family, several at once, with admin operations and event-triggered faults.

Setup: topic `chaos-random`, 6 partitions, replication factor 3 and min ISR 2 or, as the
seed draws (`chaos.generator.replication`, two seeds in five), replication factor 2 and
min ISR 1; acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. `generic_schedule(seed, 90)` (`chaos.generator.generic`) draws the schedule. A seed
   draws a dense schedule (faults overlap) or, one time in three, a sparse one (one fault
   at a time, at least 15 s between them).
2. Admin operations: a side topic `chaos-random-side` (3 partitions, replication factor 2)
   created in the first seconds, maybe grown to more partitions, maybe reassigned (on
   replication factor 2, maybe the workload's topic in its place), then deleted; maybe
   preferred elections of the workload's topic and a forced controller election, at
   drawn times.
3. Faults of every kind but the disk kinds, `power-loss` and `request`, on drawn roles (brokers and
   ZooKeeper servers) with drawn params, each held for a heavy-tailed time (a lognormal
   of median 8 s, clipped to 1-40 s), after heavy-tailed gaps; kinds rotate. Two faults
   are active at once only where the overlap rules allow it (`chaos.generator.overlap`):
   never two on ZooKeeper servers, never two that take a broker away, never two through
   the same mechanism on the same side, and a whole-cluster `partition` alone.
4. Faults started by the cluster's events: one hook in two (a forced controller election,
   a fault that takes the controller or a broker away, a broker fault, the reassignment,
   the deletion) gets a fault that starts on the event it makes the cluster write
   (`controller_elected`, `leader_elected`, `isr_changed`, `reassignment_started`,
   `topic_deletion_started`). `request` faults come where control requests flow: from
   a hook that makes the controller send a burst of them, or on the first request sent
   to their broker.
5. Heal at 70 s; the load goes on until 90 s.

Without a seed the schedule is the one of seed 0. A failing seed replays exactly: the
schedule is a pure function of the seed, and `schedule.json` records it.

Verdict: every invariant whose premise the schedule meets (`chaos.generator.scenarios.judged`): the
core invariants, the specifications', the queue classes, `acknowledged_kept`, the
controller handover's, `stale_requests_fenced` always; `reassignment_completes` and
`topic_deletion_completes` when the schedule reassigns or deletes a topic;
`registration_served` unless a starved node overlaps a broker taken away or the whole
cluster is partitioned;
`no_offline_partitions` for a sparse schedule on single brokers; convergence within 60 s
of the heal.
"""

from __future__ import annotations

from chaos.generator.generic import generic_schedule
from chaos.generator.scenarios.judged import ALWAYS, judged_invariants
from chaos.generator.scenarios.scenario import Scenario, Workload
from chaos.generator.schedule import Schedule

WORKLOAD = Workload("chaos-random", duration_s=90)
#: How long the cluster may take to converge after the heal.
CONVERGENCE_S = 60


def plan(seed: int | None) -> Schedule:
    """`generic_schedule` for the workload's duration (seed 0 without one)."""
    seed = 0 if seed is None else seed
    return generic_schedule(seed, WORKLOAD.duration_s, topic=WORKLOAD.topic, heal_s=20)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, CONVERGENCE_S, also=ALWAYS, also_for=judged_invariants
)
