"""slow-reregistration: a broker whose ZooKeeper requests are slow re-registers after its
session expired, twice.

Setup: topic `chaos-slow-reregistration`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s delay everything a broker that is not the controller sends by 1 s for 44 s
   (`latency non-controller:1`): its ZooKeeper requests reach the ensemble 1 s late,
   while the answers, and the requests the controller sends it over the connection the
   controller opened, come at once.
2. At 14 s (a seed moves it by up to 2 s) cut that broker from every ZooKeeper server
   for 12 s (`zk-isolate non-controller:1`): its session expires after 6 s, its
   registration vanishes and the controller elects new leaders for what it led. Back,
   it registers again and follows those leaders. This first round empties it of
   leaderships: a broker that still takes itself for a leader writes ISR shrinks
   through the delay, and the requests of the controller wait for those writes.
3. At 34 s (a seed moves it by up to 1 s) cut it again, for 10 s. When the cut heals
   the broker opens a new session and registers again. The controller sees the new
   registration as soon as it is created and sends the broker UpdateMetadata and
   LeaderAndIsr addressed to the new broker epoch, while the broker learns that epoch
   only from its read of the registration, a second later. The broker must obey a
   request addressed to a broker epoch newer than the one it knows (KAFKA-9839), and
   its re-registration must succeed even if its create is answered twice (a retry that
   finds the node its own session made counts as done).
4. Heal at 56 s; the load goes on until 90 s.

Verdict: the core invariants (`broker_epoch_fencing` names a request refused as stale
although it was addressed to a newer registration); convergence within 30 s of the heal
(a broker that refused its LeaderAndIsr, or never registered again, keeps its replicas
out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-slow-reregistration", duration_s=90)
#: The broker's added delay: how long it waits for its own registration's epoch after
#: the controller could have seen it.
DELAY_MS = 1000
#: How long each cut from ZooKeeper lasts: longer than the broker's 6 s session.
CUTS_S = (12, 10)


def plan(seed: int | None) -> Schedule:
    """A non-controller delayed from 10 s to 54 s, cut from ZooKeeper at ~14 s for 12 s
    and at ~34 s for 10 s."""
    draws = Draws(seed)
    delay = {"delay_ms": DELAY_MS}
    steps = (
        Step(10, 44, FaultSpec.of("latency", "non-controller:1", delay)),
        Step(draws.around(14, 2), CUTS_S[0], FaultSpec("zk-isolate", "non-controller:1")),
        Step(draws.around(34, 1), CUTS_S[1], FaultSpec("zk-isolate", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=56, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
