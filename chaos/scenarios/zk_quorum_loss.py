"""zk-quorum-loss: ZooKeeper loses its quorum while the controller handles a broker failure.

Setup: topic `chaos-zk-quorum-loss`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s delay everything the controller sends by 800 ms for 40 s (`latency
   controller`): each of its ZooKeeper requests takes at least 0.8 s, so handling a
   broker failure (set the watch, list the brokers, then read and write the state of
   every partition it led or followed) takes several seconds.
2. At 15 s (a seed moves it by up to 1 s) kill a broker that is not the controller
   (`kill non-controller:1`) for 30 s. Its session expires 4 to 6 s later and the
   controller starts moving its leaderships and taking its replicas out of the ISRs.
3. 7.5 s after the kill (a seed: 7 to 8 s) freeze two of the three ZooKeeper servers for
   16 s (`pause zk:1`, `pause zk:2`): the ensemble has no quorum and answers nothing,
   but expires no session either. The controller's write in progress fails when its
   retries give up (12 s), in the middle of a state change.
4. When the quorum is back the controller keeps its session and its role. It must have
   dropped the requests of the failed change and go on working: when the killed broker
   returns (at about 45 s) it gets its leaderships and replicas, and the ISRs fill up.
5. Heal at 55 s; the load goes on until 90 s.

Verdict: the core invariants; convergence within 30 s of the heal (a controller whose
every state change fails after the first one leaves the returning broker without
LeaderAndIsr and its replicas out of the ISRs).
"""

from __future__ import annotations

from chaos.scenarios.scenario import Draws, Scenario, Workload
from chaos.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-zk-quorum-loss", duration_s=90)
#: The controller's added delay: long enough that a broker failure keeps it inside a
#: state change for seconds, short of its session's ping timeout.
DELAY_MS = 800
#: How long two ZooKeeper servers stay frozen: longer than a broker's command retries
#: (12 s, `broker_node.zk_session.new_client`).
OUTAGE_S = 16


def plan(seed: int | None) -> Schedule:
    """The controller delayed from 10 s to 50 s; a non-controller killed at ~15 s for
    30 s; two ZooKeeper servers frozen ~7.5 s after the kill for 16 s."""
    draws = Draws(seed)
    kill = draws.around(15, 1)
    outage = round(kill + draws.around(7.5, 0.5), 1)
    steps = (
        Step(10, 40, FaultSpec.of("latency", "controller", {"delay_ms": DELAY_MS})),
        Step(kill, 30, FaultSpec("kill", "non-controller:1")),
        Step(outage, OUTAGE_S, FaultSpec("pause", "zk:1")),
        Step(outage, OUTAGE_S, FaultSpec("pause", "zk:2")),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
