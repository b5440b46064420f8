"""fast-bounce: bounce a broker while the controller is frozen across its re-registration.

Setup: topic `chaos-fast-bounce`, 6 partitions, replication factor 3, min ISR 2, acks=all;
two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) bounce a broker that is not the controller
   (`bounce non-controller:1`): SIGKILL and start at once. Its old session lives on for
   the 6 s session timeout; the new process registers as soon as the old registration is
   gone.
2. 3.5 s later (a seed: 3.2 to 3.8 s) freeze the controller for 3.5 s (`pause
   controller`), shorter than its session, across the moment the old registration
   vanishes (ZooKeeper expires a dead session 4 to 6 s after its last heartbeat) and the
   new one appears (the new process registers within a few hundred milliseconds). When
   it thaws, one read of `/brokers/ids` shows the broker with a new registration (a new
   czxid and broker epoch) and no absence in between: a bounce.
3. The controller must treat it as a failure followed by a start-up: new leaders for what
   the broker led, LeaderAndIsr for every replica it hosts, addressed to its new broker
   epoch; the broker refuses anything addressed to the old one.
4. Heal at 35 s; the load goes on until 75 s.

Verdict: the core invariants (`broker_epoch_fencing`: nothing meant for the old
incarnation is obeyed by the new one); convergence within 30 s of the heal (a bounce the
controller missed leaves the broker's replicas out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-fast-bounce")


def plan(seed: int | None) -> Schedule:
    """A bounce at ~15 s, the controller frozen ~3.5 s later for 3.5 s."""
    draws = Draws(seed)
    bounce = draws.around(15, 2)
    pause_at = round(bounce + draws.around(3.5, 0.3), 1)
    steps = (
        Step(bounce, 0, FaultSpec("bounce", "non-controller:1")),
        Step(pause_at, 3.5, FaultSpec("pause", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=35, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
