"""broker-bounce: restart brokers faster than their ZooKeeper session times out.

Setup: topic `chaos-broker-bounce`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s, 30 s and 45 s (a seed moves each by up to 2 s and shuffles the targets)
   bounce the busiest leader, the controller and another broker: SIGKILL and start at
   once (`bounce`). The new process registers while its old session may still hold
   `/brokers/ids/N`; it waits for the old registration to vanish, then registers with a
   new broker epoch.
2. The controller sees the broker leave and return (a new czxid, a new broker epoch) and
   treats it as a failure followed by a start-up: new leaders for what it led, then
   LeaderAndIsr for every replica it hosts. A bounced controller loses its role.
3. Heal at 55 s; the load goes on until 75 s.

Verdict: the core invariants (the returning broker never acts on requests meant for its
previous incarnation) and `acknowledged_kept` (no replica removes an acknowledged record,
even one it fetches back); convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import ACKNOWLEDGED_KEPT

WORKLOAD = Workload("chaos-broker-bounce")


def plan(seed: int | None) -> Schedule:
    """Three bounces, 15 s apart, each on another role."""
    draws = Draws(seed)
    targets = draws.order(("busiest-leader", "controller", "non-controller"))
    steps = tuple(
        Step(draws.around(at, 2), 0, FaultSpec("bounce", target))
        for at, target in zip((15, 30, 45), targets, strict=True)
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=30, also={ACKNOWLEDGED_KEPT}
)
