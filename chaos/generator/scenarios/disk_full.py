"""disk-full: the controller's log directory runs out of space under load.

Setup: topic `chaos-disk-full`, 6 partitions, replication factor 3, min ISR 2, acks=all;
two producers at 50 values/s each and a consumer, for 90 s. The cluster's brokers keep
their log directories behind disk layers (`make up DISK_LAYER=1`; `make chaos-disk-full`
starts it so, in `notify` mode, when no cluster runs); a run on a cluster without them
stops before touching it and says how to start one.

Steps:

1. At 15 s (a seed moves it by up to 3 s) let the controller's log directory take 16 KiB
   more (`disk-full`; a seed picks 16, 8 or 32 KiB), then fail every write with ENOSPC,
   for 25 s (± 5 s). This load's appends reach a broker's directory at about 2.5 KiB/s,
   so some 6 s spend the budget; the next write meets ENOSPC, which Kafka treats like
   any IOException of a log directory: the directory goes offline and `log_dir_failed`
   names the error. In `notify` mode the controller handles its own
   `/log_dir_event_notification` and elects new leaders for the partitions it led (in
   `halt` mode it halts, and the next controller moves them).
2. At the step's end the layer is transparent again and the broker is restarted (its
   directory stays offline until then): its controlled shutdown hands the controller to
   another broker with the next epoch; it recovers its logs, dropping any half-written
   batch, and rejoins the ISRs.
3. Heal at 60 s; the load goes on until 90 s.

Verdict: the core invariants (a full disk loses no acknowledged write), no replica
removing an acknowledged record when it comes back, every new leader holding what was
committed before its epoch; convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import ACKNOWLEDGED_KEPT, LEADER_COMPLETENESS

WORKLOAD = Workload("chaos-disk-full", duration_s=90)
KIB = 1024


def plan(seed: int | None) -> Schedule:
    """ENOSPC on the controller's log directory once ~16 KiB more were written, from
    ~15 s for ~25 s."""
    draws = Draws(seed)
    full: dict[str, Scalar] = {"budget_bytes": draws.pick((16 * KIB, 8 * KIB, 32 * KIB))}
    step = Step(
        draws.around(15, 3), draws.around(25, 5), FaultSpec.of("disk-full", "controller", full)
    )
    return Schedule(seed, (step,), heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=40, also={ACKNOWLEDGED_KEPT, LEADER_COMPLETENESS}
)
