"""zk-deaf-leader: a leader's ISR write lands in ZooKeeper but its answer is lost.

Setup: topic `chaos-zk-deaf-leader`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) cut the first broker that is not the controller
   from the other brokers for 30 s (`broker-isolate non-controller:1`). It keeps its
   ZooKeeper session and the partitions it leads; their followers stop fetching.
2. 10.5 s into the cut (a seed: 10 to 11 s) it stops hearing ZooKeeper for 6 s (`zk-deaf
   non-controller:1`): its packets still reach the ensemble, the ensemble's are dropped.
   Its ISR expiration thread (every 5 s) finds the followers lagging past 10 s and writes
   the shrunk ISRs: ZooKeeper applies them, the answers are lost, the client gives up
   the connection (4 s without an answer) and retries the writes once the link is back,
   within the session. The retries meet BADVERSION: the znode already holds them.
3. The leader re-reads the state znode, finds its own ISR there and adopts its zkVersion
   (KAFKA-2729); when the cut heals (at about 45 s) the followers catch up and it writes
   the grown ISRs.
4. Heal at 55 s; the load goes on until 75 s.

Verdict: the core invariants; convergence within 30 s of the heal (a leader that kept the
zkVersion its lost answer should have replaced fails every later ISR write, and its ISRs
never grow back to the replicas).
"""

from __future__ import annotations

from chaos.scenarios.scenario import Draws, Scenario, Workload
from chaos.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-zk-deaf-leader")
#: How long the broker hears nothing from ZooKeeper: past the client's 4 s read timeout
#: (two thirds of the 6 s session), so it drops the connection with writes unanswered, and
#: short enough that it reconnects before the server expires the session (6 s after the
#: dropped connection).
DEAF_S = 6


def plan(seed: int | None) -> Schedule:
    """A non-controller cut from its peers at ~15 s for 30 s; deaf to ZooKeeper ~10.5 s
    later for 6 s."""
    draws = Draws(seed)
    cut = draws.around(15, 2)
    deaf = round(cut + draws.around(10.5, 0.5), 1)
    steps = (
        Step(cut, 30, FaultSpec("broker-isolate", "non-controller:1")),
        Step(deaf, DEAF_S, FaultSpec("zk-deaf", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
