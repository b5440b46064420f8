"""controller-zk-reset: the controller's ZooKeeper connection is reset mid state change.

Setup: topic `chaos-controller-zk-reset`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 110 s.

Steps:

1. At 5 s delay everything the controller sends by 1500 ms until 20 s after the kill of
   step 2 (`latency controller`): each of its ZooKeeper requests takes at least 1.5 s,
   so handling a broker failure takes seconds: the controller lists the brokers, elects
   new leaders (reads and writes their states), then takes the broker's replicas
   offline: StopReplica requests enter the batch, and it reads the ISRs. The delay
   begins by closing the controller's ZooKeeper connection (the proxy sees new
   connections only), and kazoo forgets every watch with the connection, so the
   controller first re-arms each of its watches and re-reads what it watches: about a
   dozen events of one to three reads, 30 to 40 s at 1.5 s a read.
2. At 50 s (a seed moves it by up to 1 s), once that backlog is done, kill a broker
   that is not the controller (`kill non-controller:1`) for 25 s.
3. When the controller logs its elections' `partition_state_change` to
   `OnlinePartition` (a trigger, looked for from the kill on for 25 s), reset the
   controller's ZooKeeper connection (`zk-reset controller`). Its next request, the read
   of the ISRs, is then on its 1.5 s way through the delay: it fails with ConnectionLoss
   (pipelined reads are not retried) with the StopReplica requests in the batch, in the
   middle of the state change (docs/bugs.md, kafka-2300). The controller reconnects at
   once and keeps its session and its role: no ZooKeeper server stops, no session can
   expire. A time could not place the reset: the window is 1.5 s wide, and the
   controller's elections end 6 to 14 s after the kill.
4. The controller must have dropped the requests of the failed change and go on
   working: its failover of the dead broker is done again when the broker returns (25 s
   after the kill), which gets its leaderships and replicas, and the ISRs fill up.
5. Heal at 80 s; the load goes on until 110 s.

Verdict: the core invariants; convergence within 30 s of the heal (a controller whose
every state change fails after the first one leaves the returning broker without
LeaderAndIsr and its replicas out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.scenarios.zk_quorum_loss import DELAY_AFTER_KILL_S, DELAY_MS, ELECTIONS_DONE
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-controller-zk-reset", duration_s=110)
#: How long the broker stays dead.
KILL_S = 25


def plan(seed: int | None) -> Schedule:
    """The controller delayed from 5 s to 20 s after the kill; a non-controller killed at
    ~50 s for 25 s; the controller's ZooKeeper connection reset when its elections for
    the killed broker's partitions are done."""
    draws = Draws(seed)
    kill = draws.around(50, 1)
    delay = {"delay_ms": DELAY_MS}
    steps = (
        Step(5, kill + DELAY_AFTER_KILL_S - 5, FaultSpec.of("latency", "controller", delay)),
        Step(kill, KILL_S, FaultSpec("kill", "non-controller:1")),
        Step(kill, 0, FaultSpec("zk-reset", "controller"), ELECTIONS_DONE),
    )
    return Schedule(seed, steps, heal_at_s=80, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
