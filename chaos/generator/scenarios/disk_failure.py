"""disk-failure: a leader's log directory starts failing its writes with EIO under load.

Setup: topic `chaos-disk-failure`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s. The cluster's
brokers keep their log directories behind disk layers (`make up DISK_LAYER=1`; `make
chaos-disk-failure` starts it so, in `notify` mode, when no cluster runs); a run on a
cluster without them stops before touching it and says how to start one.

Steps:

1. At 15 s (a seed moves it by up to 3 s) make every write under the busiest leader's
   log directory fail with EIO (`disk-eio`, op `write`; a seed picks a probability of 1
   or 0.5) for 25 s (± 5 s). Its next append meets the error, as Kafka's does an
   IOException: the log fails, `LogDirFailureChannel` takes the directory offline (every
   replica of it answers KAFKA_STORAGE_ERROR) and the broker emits `log_dir_failed`. In
   `notify` mode it stays up and writes `/log_dir_event_notification`, and the controller
   elects new leaders for the partitions it led, from their ISRs; in `halt` mode (Kafka's
   for a broker with one log directory) it halts and the controller moves them once its
   session expires. The producers' sends to it fail and are sent again to the new leaders.
2. At the step's end the layer is transparent again and the broker is restarted (a log
   directory stays offline until then, as in Kafka): it recovers its logs, truncates to
   the new leaders and rejoins the ISRs.
3. Heal at 60 s; the load goes on until 90 s.

Verdict: the core invariants (the records a leader acknowledged before its directory
failed are on the ISR it leaves behind: no acknowledged write is lost), no replica
removing an acknowledged record when it comes back, every new leader holding what was
committed before its epoch; convergence within 40 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import ACKNOWLEDGED_KEPT, LEADER_COMPLETENESS

WORKLOAD = Workload("chaos-disk-failure", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """EIO on the busiest leader's writes from ~15 s for ~25 s."""
    draws = Draws(seed)
    eio: dict[str, Scalar] = {"op": "write", "probability": draws.pick((1.0, 0.5))}
    step = Step(
        draws.around(15, 3), draws.around(25, 5), FaultSpec.of("disk-eio", "busiest-leader", eio)
    )
    return Schedule(seed, (step,), heal_at_s=60, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=40, also={ACKNOWLEDGED_KEPT, LEADER_COMPLETENESS}
)
