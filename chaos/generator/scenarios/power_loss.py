"""power-loss: cut the power of two replicas of a partition while the third is out of the ISR.

Setup: topic `chaos-power-loss`, 1 partitions, replication factor 3 (every broker holds
it), min ISR 2, acks=all; two producers at 50 values/s each and a consumer, for 90 s. The
cluster runs with disk layers (`make chaos-power-loss` starts it with them), once with
Kafka's default flush policy (never: the page cache holds the appends) and once with
`make chaos-power-loss FLUSH=1` (LOG_FLUSH_INTERVAL_MESSAGES=1: every append fsynced before
it counts); both are rows of the chaos table (docs/chaos.md).

Steps:

1. At 5 s the disk layers of brokers 1 and 2 start keeping what each file changed since
   its last fsync (`disk-volatile brokers:1,2`, until 55 s): their page cache becomes
   volatile.
2. At 10 s (a seed moves it by up to 1 s) freeze broker 3 (`pause broker:3`) for 40 s.
   Its session expires after 6 s and it leaves the ISR, which is {1, 2}: min ISR 2 still
   lets acks=all writes be acknowledged.
3. At 30 s (a seed: up to 2 s either way) cut the power of brokers 1 and 2 together
   (`power-loss brokers:1,2`): SIGKILL both, take back every write their files had not
   fsynced, start them again. They recover their logs from what the disks kept and one
   is elected from the ISR {1, 2}.
4. At about 50 s broker 3 thaws, registers again and follows the new leader, truncating
   what the leader no longer holds.
5. Heal at 60 s; the load goes on until 90 s.

Verdict: the core invariants and Jepsen's `lost-write`. With the default flush policy
the power loss takes acknowledged writes, as Kafka's durability model allows (it relies
on replication, and two of three replicas lost their caches at once): the run reports
them as allowed anomalies, because the schedule holds a power loss and the brokers do not
flush every message (config.json's `acknowledged_loss_allowed`). With a flush interval
of 1 none may be lost: any loss fails the run. Convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-power-loss", partitions=1, min_insync_replicas=2, duration_s=90)
#: The two replicas whose power is cut, and the one out of the ISR meanwhile.
CUT = "brokers:1,2"
OUT = "broker:3"


def plan(seed: int | None) -> Schedule:
    """Volatile caches on the cut pair from 5 s, the third replica frozen from ~10 s for
    40 s, the power cut at ~30 s."""
    draws = Draws(seed)
    pause = draws.around(10, 1)
    cut = draws.around(30, 2)
    steps = (
        Step(5, 50, FaultSpec("disk-volatile", CUT)),
        Step(pause, 40, FaultSpec("pause", OUT)),
        Step(cut, 0, FaultSpec("power-loss", CUT)),
    )
    return Schedule(seed, steps, heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30, also=("lost-write",))
