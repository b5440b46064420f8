"""stale-controller-requests: cut the controller off, brokers first; its old requests arrive late.

Setup: topic `chaos-stale-requests`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 85 s.

Steps:

1. At 10 s (a seed moves it by up to 2 s) cut the controller from the other brokers, not
   from ZooKeeper (`broker-isolate controller`), for 30 s. After the replica lag time
   the ISRs shrink on both sides of the cut; the controller, still in charge, sends the
   other brokers UpdateMetadata for the shrunk ISRs, and its senders resend them again
   and again across the cut.
2. At 26 s (a seed moves it by up to 2 s) cut it from ZooKeeper as well (`zk-isolate
   controller`) for 24 s. It stops acting, but cannot learn that its session is gone;
   its senders go on resending. After the 6 s session timeout another broker becomes
   controller with a higher epoch and sends its own requests to the brokers it can reach.
3. At about 40 s the cut between the brokers heals while the old controller is still cut
   from ZooKeeper: its queued requests of the old epoch reach brokers that have already
   obeyed the new epoch. They must be refused.
4. At about 50 s it reaches ZooKeeper again, finds its session expired, resigns and
   re-registers. Heal at 55 s; the load goes on until 85 s.

Verdict: the core invariants (`controller_epoch_fencing`: no broker obeys the old epoch
after the new one) and `paused_controller_resigns`; convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.scenarios.scenario import Draws, Scenario, Workload
from chaos.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-stale-requests", duration_s=85)


def plan(seed: int | None) -> Schedule:
    """The controller cut from the brokers at ~10 s for 30 s, from ZooKeeper at ~26 s
    for 24 s."""
    draws = Draws(seed)
    steps = (
        Step(draws.around(10, 2), 30, FaultSpec("broker-isolate", "controller")),
        Step(draws.around(26, 2), 24, FaultSpec("zk-isolate", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=40, also={"paused_controller_resigns"}
)
