"""slow-reregistration: a broker whose ZooKeeper requests are slow re-registers after its
session expired.

Setup: topic `chaos-slow-reregistration`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 80 s.

Steps:

1. At 10 s delay everything a broker that is not the controller sends by 1 s for 40 s
   (`latency non-controller:1`): its ZooKeeper requests reach the ensemble 1 s late,
   while the answers, and the requests the controller sends it over the connection the
   controller opened, come at once.
2. At 16 s (a seed moves it by up to 2 s) cut that broker from every ZooKeeper server
   for 12 s (`zk-isolate non-controller:1`): its session expires after 6 s, its
   registration vanishes and the controller takes it for dead, electing new leaders for
   what it led.
3. When the cut heals the broker opens a new session and registers again. The
   controller sees the new registration as soon as it is created and sends the broker
   UpdateMetadata and LeaderAndIsr addressed to the new broker epoch, while the broker
   learns that epoch only from its read of the registration, another second away. The
   broker must obey a request addressed to a broker epoch newer than the one it knows
   (KAFKA-9839), and its re-registration must succeed even if its create is answered
   twice (a retry that finds the node its own session made counts as done).
4. Heal at 50 s; the load goes on until 80 s.

Verdict: the core invariants (`broker_epoch_fencing` names a request refused as stale
although it was addressed to a newer registration); convergence within 30 s of the heal
(a broker that refused its LeaderAndIsr, or never registered again, keeps its replicas
out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-slow-reregistration", duration_s=80)
#: The broker's added delay: how long it waits for its own registration's epoch after
#: the controller could have seen it.
DELAY_MS = 1000
#: How long the broker is cut from ZooKeeper: longer than its 6 s session.
CUT_S = 12


def plan(seed: int | None) -> Schedule:
    """A non-controller delayed from 10 s to 50 s and cut from ZooKeeper at ~16 s for
    12 s."""
    draws = Draws(seed)
    steps = (
        Step(10, 40, FaultSpec.of("latency", "non-controller:1", {"delay_ms": DELAY_MS})),
        Step(draws.around(16, 2), CUT_S, FaultSpec("zk-isolate", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=50, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
