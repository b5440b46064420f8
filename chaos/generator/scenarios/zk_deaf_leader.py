"""zk-deaf-leader: a leader's ISR write lands in ZooKeeper but its answer is lost.

Setup: topic `chaos-zk-deaf-leader`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) cut the first broker that is not the controller
   from the other brokers for 26 s (`broker-isolate non-controller:1`). It keeps its
   ZooKeeper session and the partitions it leads; their followers stop fetching. Its ISR
   expiration thread (every 5 s) shrinks those ISRs once the followers lag past the
   10 s replica lag time: 10 to 15 s into the cut.
2. 11 s into the cut (a seed moves it by up to 0.3 s) it stops hearing ZooKeeper for 6 s
   (`zk-deaf non-controller:1`): its requests still reach the ensemble, the ensemble's
   replies are dropped (its ACKs pass). The shrink comes due in the first 4 s of the
   spell (13.5 to 15 s into the cut in the runs seen): ZooKeeper applies it and the
   answer is lost; the client gives up the connection (4 s without an answer, two thirds
   of the 6 s session) and reconnects when the spell ends, within the session. The next
   attempt, conditional on the zkVersion the leader still holds, meets BADVERSION: the
   znode already holds that ISR.
3. The leader re-reads the state znode, finds its own ISR there and adopts its zkVersion
   (KAFKA-2729), so it grows its ISRs again when the cut heals and the followers catch up.
4. Heal at 55 s; the load goes on until 75 s.

Verdict: the core invariants; convergence within 30 s of the heal (a leader that kept the
zkVersion its lost answer should have replaced fails every later ISR write, and its ISRs
never grow back to the replicas).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-zk-deaf-leader")
#: How long the broker is cut from its peers: the deaf spell falls inside, and the
#: followers' reconnection (gRPC's backoff grows over the cut) is done before the bound.
CUT_S = 26
#: How long the spell lasts: past the client's 4 s read timeout, so it drops the
#: connection with the writes sent since the spell began unanswered, and short enough
#: that it reconnects before the server expires the session (6 s after the drop).
DEAF_S = 6
#: When the spell begins, in seconds into the cut: its first 4 s cover the ISR shrink,
#: due on the 5 s expiration grid 10 to 15 s into the cut.
DEAF_AT_S = 11


def plan(seed: int | None) -> Schedule:
    """A non-controller cut from its peers at ~15 s for 26 s, deaf to ZooKeeper ~11 s into
    the cut for 6 s."""
    draws = Draws(seed)
    cut = draws.around(15, 2)
    deaf = round(cut + draws.around(DEAF_AT_S, 0.3), 1)
    steps = (
        Step(cut, CUT_S, FaultSpec("broker-isolate", "non-controller:1")),
        Step(deaf, DEAF_S, FaultSpec("zk-deaf", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
