"""zk-isolation: cut one broker from ZooKeeper only, then reconnect it.

Setup: topic `chaos-zk-isolation`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 3 s) cut one broker from every ZooKeeper server
   (`zk-isolate`): the busiest leader, or with a seed the busiest leader, the controller
   or another broker.
2. Its session expires after 6 s: its registration vanishes and, if it was the
   controller, another broker takes over. The controller elects new leaders for its
   partitions. The isolated broker still thinks it leads them, but it cannot shrink an
   ISR in ZooKeeper, so an acks=all write sent to it is never acknowledged.
3. At 35 s (a seed: 20 ± 5 s after the cut) reconnect it: it re-registers with a new
   broker epoch, learns the new leaders, truncates and catches up.
4. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants (no acknowledged write lost to the stale leader) and
`resigned_controller_silent` (an isolated controller that resigns queues nothing of its old
epoch afterwards); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Scenario, Workload, one_fault

WORKLOAD = Workload("chaos-zk-isolation")

PLAN = one_fault(
    "zk-isolate",
    ("busiest-leader", "controller", "non-controller"),
    (15, 3),
    (20, 5),
    heal_at_s=50,
    end_s=WORKLOAD.duration_s,
)

SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, PLAN, 30, also={"resigned_controller_silent"})
