"""network-partition: cut a leader from its followers (`broker-isolate busiest-leader`).

Setup: topic `chaos-network-partition`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) cut the busiest leader from the other brokers
   (`broker-isolate busiest-leader`). It stays registered, so it stays the leader.
2. Its followers stop fetching; after the replica lag time it shrinks its ISRs to
   itself, and acks=all writes fail with too few in-sync replicas instead of being
   acknowledged by one copy. The controller's requests to it fail until the cut heals.
3. At 40 s (a seed: 25 ± 5 s after the cut) heal the cut: the followers catch up and
   the ISRs grow back.
4. Heal at 55 s; the load goes on until 90 s.

Verdict: the core invariants and `acknowledged_kept` (no replica removes an
acknowledged record, even one it fetches back); convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault
from rundir.invariants.names import ACKNOWLEDGED_KEPT

WORKLOAD = Workload("chaos-network-partition", duration_s=90)

PLAN = one_fault(
    "broker-isolate", ("busiest-leader",), (15, 3), (25, 5), heal_at_s=55, end_s=WORKLOAD.duration_s
)

SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, PLAN, 40, also={ACKNOWLEDGED_KEPT})
