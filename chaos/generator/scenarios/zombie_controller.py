"""zombie-controller: cut the controller from brokers, then ZooKeeper; ZooKeeper comes back first.

Setup: topic `chaos-zombie-controller`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 6 s (a seed moves it by up to 1 s) cut the controller from the other brokers
   (`broker-isolate controller`); ZooKeeper stays reachable. Its followers fall out of
   the ISRs, and the UpdateMetadata it sends about it waits in its senders.
2. 22 s later (a seed: ± 1 s) cut it from ZooKeeper as well (`zk-isolate controller`,
   measured beside the cut of step 1). Its session expires after 6 s and another broker
   becomes controller with a higher epoch.
3. 12 s after the second cut (a seed: ± 1 s) give it ZooKeeper back (step 2 ends, its
   undo measured beside the cut of step 1): it learns that its session expired and
   resigns while its senders still hold requests of its epoch. Resigning must close its
   channels and drop them.
4. 16 s later give it its brokers back (past the 30 s deadline of the call that was in
   flight when they were cut off, so a sender still running would send it again):
   nothing of the resigned epoch may reach them.
5. Heal at 62 s; the load goes on until 90 s.

Verdict: the core invariants and `resigned_controller_silent` (a resigned controller
queues no request of its epoch afterwards, and none of them reaches a broker more than
3 s after the resignation); convergence within 25 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.deposed_controller import CONVERGENCE_S, cuts
from chaos.generator.scenarios.scenario import Scenario, Workload
from chaos.generator.schedule import Schedule

WORKLOAD = Workload("chaos-zombie-controller", duration_s=90.0)


def plan(seed: int | None) -> Schedule:
    """ZooKeeper's link back first (see `chaos.generator.scenarios.deposed_controller.cuts`)."""
    return cuts(seed, zookeeper_back_first=True, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, CONVERGENCE_S, also={"resigned_controller_silent"}
)
