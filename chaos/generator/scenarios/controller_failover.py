"""controller-failover: kill the active controller, then restart it.

Setup: topic `chaos-controller-failover`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) SIGKILL the controller (`kill controller`).
2. `/controller` vanishes when its session expires (6 s); a surviving broker wins the
   election with a higher controller epoch, runs failover, and elects new leaders for
   the partitions the dead broker led.
3. At 30 s (a seed: 15 ± 5 s after the kill) start it again: it registers as a plain
   broker, obeys the new controller and rejoins the ISRs.
4. Heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants (in particular one controller per epoch, and no broker obeys
the dead controller's epoch once it has obeyed the new one); convergence within 30 s of
the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault

WORKLOAD = Workload("chaos-controller-failover")

PLAN = one_fault("kill", ("controller",), (15, 3), (15, 5), heal_at_s=45, end_s=WORKLOAD.duration_s)

SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, PLAN, 30)
