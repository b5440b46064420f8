"""broker-failure: kill the broker leading the most partitions, then restart it.

Setup: topic `chaos-broker-failure`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) SIGKILL the broker leading the most partitions
   (`kill busiest-leader`).
2. Its ZooKeeper session expires after 6 s; the controller elects new leaders from the
   ISRs, and the new leaders shrink their ISRs.
3. At 35 s (a seed: 20 ± 5 s after the kill) start it again: it registers with a new
   broker epoch, truncates to the leaders' logs, catches up and rejoins the ISRs.
4. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `acknowledged_kept` (no replica removes an
acknowledged record, even one it fetches back); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault
from rundir.invariants.names import ACKNOWLEDGED_KEPT

WORKLOAD = Workload("chaos-broker-failure")

PLAN = one_fault(
    "kill", ("busiest-leader",), (15, 3), (20, 5), heal_at_s=50, end_s=WORKLOAD.duration_s
)

SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, PLAN, 30, also={ACKNOWLEDGED_KEPT})
