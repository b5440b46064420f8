"""last-replica-standing: kill both replicas of a partition in turn; the stale one returns first.

Setup: topic `chaos-last-replica`, 6 partitions, replication factor 2, min ISR 1,
acks=all, unclean leader election off; two producers at 50 values/s each and a consumer,
for 90 s. With two replicas on three brokers, the partitions whose replicas are the two
brokers that are not the controller lose every replica while the controller lives on to
decide what to do.

Steps:

1. At 15 s (a seed moves it by up to 2 s) SIGKILL the first broker that is not the
   controller (`kill non-controller:1`) for 30 s. The controller drops it from its ISRs;
   the other replica goes on acknowledging writes alone (min ISR 1).
2. 7 s later (a seed: 5 to 9 s) SIGKILL the second one (`kill non-controller:2`) for
   30 s. It was the last in-sync replica of the partitions the two share: they go
   offline, and their ISR must still name it.
3. At about 45 s the first broker comes back, out of sync. It must not be elected: with
   unclean election off, those partitions stay offline rather than lose acknowledged
   writes.
4. At about 52 s the second broker comes back; being the last in-sync replica it is
   elected, and the first catches up from it.
5. Heal at 55 s; the load goes on until 90 s.

Verdict: the core invariants (no acknowledged write lost to an out-of-sync leader), with
the two that this schedule exercises named: `leader_completeness` (the last in-sync
replica, elected on its return, holds every record committed before) and Jepsen's
`lost-write`; convergence within 30 s of the heal (a partition whose ISR was emptied could
not elect anybody).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import LEADER_COMPLETENESS

WORKLOAD = Workload(
    "chaos-last-replica", replication_factor=2, min_insync_replicas=1, duration_s=90
)


def plan(seed: int | None) -> Schedule:
    """The two non-controllers killed ~7 s apart, each for 30 s, the first back first."""
    draws = Draws(seed)
    first = draws.around(15, 2)
    second = round(first + draws.around(7, 2), 1)
    steps = (
        Step(first, 30, FaultSpec("kill", "non-controller:1")),
        Step(second, 30, FaultSpec("kill", "non-controller:2")),
    )
    return Schedule(seed, steps, heal_at_s=max(55, second + 31), end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=30, also=(LEADER_COMPLETENESS, "lost-write")
)
