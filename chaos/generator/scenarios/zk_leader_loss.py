"""zk-leader-loss: kill the ZooKeeper ensemble's leader, then restart it.

Setup: topic `chaos-zk-leader-loss`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) SIGKILL the ensemble's leader
   (`zk-leader-kill zk-leader`). The two others elect a new leader; until then the
   ensemble serves no writes, and brokers connected to the dead server move to another.
2. Sessions survive when the brokers reconnect within the 6 s session timeout; a session
   that does not expires and its broker re-registers (a controller among them resigns).
3. At 30 s (a seed: 15 ± 5 s after the kill) restart it; it rejoins as a follower.
4. Heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants; convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault

WORKLOAD = Workload("chaos-zk-leader-loss")

PLAN = one_fault(
    "zk-leader-kill", ("zk-leader",), (15, 3), (15, 5), heal_at_s=45, end_s=WORKLOAD.duration_s
)

SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, PLAN, 30)
