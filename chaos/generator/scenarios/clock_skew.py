"""clock-skew: controller an hour off, a follower strobed, ZooKeeper's leader ahead, a failover.

Setup: topic `chaos-clock-skew`, 6 partitions, replication factor 3, min ISR 2, acks=all;
two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 10 s (a seed moves it by up to 2 s) bump the controller's wall clock an hour ahead
   (`clock`, action `bump`, +3 600 000 ms; a seed picks +1 h or -1 h) for 45 s. Its events
   carry times an hour off; its monotonic clock, and so every timeout, session and ISR
   lag, runs on.
2. At 15 s (± 2 s) strobe another broker's wall clock (`clock`, action `strobe`), a
   leader of some partitions and a follower of the others: 10 minutes behind and back
   to the real time, every second, for 35 s.
3. At 20 s (± 2 s) bump the ZooKeeper leader's wall clock 10 minutes ahead (`clock`,
   action `bump`, +600 000 ms, on `zk-leader`) for 35 s: the `ctime` and `mtime` of
   every znode written meanwhile (the next controller's `/controller`, a re-registered
   broker's `/brokers/ids/<id>`, ISR changes) are 10 minutes ahead of the others; its
   sessions and ticks run on the monotonic clock.
4. At 30 s (± 2 s) bounce the controller (step 1's broker, unless the controller
   moved): it restarts with its clock still an hour off (the clock file outlives the
   process); a broker elects itself controller with the next epoch and moves leadership.
5. Heal at 60 s (every clock reset and measured real); the load goes on until 90 s.

Verdict: the core invariants, acknowledged writes kept, and the superseded controller's
writes fenced, all judged on the host's time line (each event placed by its monotonic
clock, docs/events.md), never by comparing two nodes' wall clocks: the run is judged as
the same run without skew would be; convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import ACKNOWLEDGED_KEPT, CONTROLLER_WRITES_FENCED

WORKLOAD = Workload("chaos-clock-skew", duration_s=90)
HOUR_MS = 3_600_000


def plan(seed: int | None) -> Schedule:
    """A bumped controller, a strobed follower, a bumped ZooKeeper leader, and a bounce of
    the controller while the clocks are off."""
    draws = Draws(seed)
    bump: dict[str, Scalar] = {"action": "bump", "offset_ms": draws.pick((HOUR_MS, -HOUR_MS))}
    strobe: dict[str, Scalar] = {
        "action": "strobe",
        "offset_ms": -600_000,
        "other_offset_ms": 0,
        "period_ms": 1000,
    }
    zk_bump: dict[str, Scalar] = {"action": "bump", "offset_ms": 600_000}
    steps = (
        Step(draws.around(10, 2), 45, FaultSpec.of("clock", "controller", bump)),
        Step(draws.around(15, 2), 35, FaultSpec.of("clock", "non-controller", strobe)),
        Step(draws.around(20, 2), 35, FaultSpec.of("clock", "zk-leader", zk_bump)),
        Step(draws.around(30, 2), 0, FaultSpec.of("bounce", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=40, also={ACKNOWLEDGED_KEPT, CONTROLLER_WRITES_FENCED}
)
