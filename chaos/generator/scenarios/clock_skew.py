"""clock-skew: move the controller's and a leader's wall clocks by minutes, strobe a
ZooKeeper follower's, and fail the controller over while they are off.

Setup: topic `chaos-clock-skew`, 6 partitions, replication factor 3, min ISR 2, acks=all;
two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s (a seed moves it by up to 2 s) set the controller's wall clock 10 minutes
   back (`clock-offset`, -600 s; a seed picks -600 or -300) for 45 s. Its events carry
   times from ten minutes ago; its monotonic clock, and so every timeout, runs on.
2. At 15 s (± 2 s) set another broker's wall clock 10 minutes ahead (`clock-offset
   non-controller`, +600 s; a seed picks +600 or +300), a leader of some of the
   partitions, for 35 s.
3. At 20 s (± 2 s) strobe a ZooKeeper follower's clock (`clock-strobe`, 5 minutes
   ahead and back every 2 s) for 30 s: the JVM's wall clock jumps both ways while it
   serves.
4. At 30 s (± 2 s) bounce the controller (step 1's broker, unless the controller moved):
   it restarts with its clock still 10 minutes back (the clock file outlives the
   process); a broker elects itself controller with the next epoch and moves leadership.
5. Heal at 60 s (every clock reset and measured real); the load goes on until 90 s.

Verdict: the core invariants, judged on the host's time line (each event placed by its
monotonic clock, docs/events.md), never by comparing two nodes' wall clocks: the run must
be judged as the same run without skew would be; convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-clock-skew", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """Offsets on the controller and another broker, a strobe on a ZooKeeper follower,
    and a bounce of the controller while the clocks are off."""
    draws = Draws(seed)
    behind = draws.pick((-600, -300))
    ahead = draws.pick((600, 300))
    steps = (
        Step(
            draws.around(10, 2),
            45,
            FaultSpec.of("clock-offset", "controller", {"offset_s": behind}),
        ),
        Step(
            draws.around(15, 2),
            35,
            FaultSpec.of("clock-offset", "non-controller", {"offset_s": ahead}),
        ),
        Step(
            draws.around(20, 2),
            30,
            FaultSpec.of("clock-strobe", "zk-follower", {"offset_s": 300, "period_s": 2}),
        ),
        Step(draws.around(30, 2), 0, FaultSpec.of("bounce", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=40)
