"""controller-pause: freeze the controller past its session timeout, then thaw it.

Setup: topic `chaos-controller-pause`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) freeze the controller (`pause controller`,
   the cgroup freezer): its process keeps all its state but runs nothing.
2. Its session expires after 6 s; another broker becomes controller with a higher epoch
   and moves leadership away from the frozen broker.
3. At 33 s (a seed: 18 ± 4 s after the pause, always well past the session timeout)
   thaw it. It finds its session gone and must resign; anything it still sends carries
   the old epoch and is rejected. It re-registers and rejoins the ISRs.
4. Heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants, `paused_controller_resigns` and `resigned_controller_silent`:
the thawed broker resigns and queues no request of its old epoch afterwards, and no broker
obeys a request of the old epoch after obeying the new one; convergence within 30 s of the
heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault

WORKLOAD = Workload("chaos-controller-pause")

PLAN = one_fault(
    "pause", ("controller",), (15, 3), (18, 4), heal_at_s=45, end_s=WORKLOAD.duration_s
)

SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, PLAN, 30, also={"paused_controller_resigns", "resigned_controller_silent"}
)
