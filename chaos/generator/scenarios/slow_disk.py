"""slow-disk: a follower's writes take 200 ms each, then the disk is fast again.

Setup: topic `chaos-slow-disk`, 6 partitions, replication factor 3, min ISR 2, acks=all;
two producers at 50 values/s each and a consumer, for 90 s. The cluster's brokers keep
their log directories behind disk layers (`make up DISK_LAYER=1`; `make chaos-slow-disk`
starts it so when no cluster runs); a run on a cluster without them stops before
touching it and says how to start one.

Steps:

1. At 15 s (a seed moves it by up to 3 s) hold every write under a broker's log
   directory 200 ms (`disk-slow`, op `write`; a seed picks 200, 100 or 400 ms) for 25 s
   (± 5 s): a broker other than the controller, a follower of the partitions it does not
   lead. Nothing fails. Its fetchers append what each fetch brought in one held write,
   so it stays a write or two behind, and in the ISRs, unless its appends back up past
   `replica.lag.time.max.ms` (10 s), when it leaves them. Every acks=all send waits for
   its fetches (it is in every ISR), and the partitions it leads append as slowly:
   produce latency grows by the held writes.
2. At the step's end the layer is transparent again, with no restart: the follower
   catches up (and rejoins any ISR it left).
3. Heal at 60 s; the load goes on until 90 s.

Verdict: the core invariants (slowness loses no acknowledged write), the high watermark
never passing an ISR member's log end, and a follower rejoining an ISR only once it
reached its leader's epoch; convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import ISR_JOIN_AFTER_EPOCH_START, VALID_HIGH_WATERMARK

WORKLOAD = Workload("chaos-slow-disk", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """Writes held 200 ms on a broker other than the controller from ~15 s for ~25 s."""
    draws = Draws(seed)
    slow: dict[str, Scalar] = {"op": "write", "delay_ms": draws.pick((200, 100, 400))}
    step = Step(
        draws.around(15, 3), draws.around(25, 5), FaultSpec.of("disk-slow", "non-controller", slow)
    )
    return Schedule(seed, (step,), heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__,
    WORKLOAD,
    plan,
    convergence_s=30,
    also={VALID_HIGH_WATERMARK, ISR_JOIN_AFTER_EPOCH_START},
)
