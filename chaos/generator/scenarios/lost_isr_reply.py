"""lost-isr-reply: a leader's ISR write is applied by ZooKeeper and its answer is lost.

Setup: topic `chaos-lost-isr-reply`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s (a seed moves it by up to 2 s) isolate the lowest-numbered non-controller
   from its peer brokers for 26 s (`broker-isolate non-controller:1`); ZooKeeper stays
   reachable, so it keeps its session and its leaderships while its followers can no
   longer fetch. Once they have lagged 10 s (`replica.lag.time.max.ms`), the next
   round of its ISR expiration thread, which runs every 5 s, writes the shrunk ISRs:
   between 10 and 15 s after the cut began.
2. From 9.5 s into the cut, lost-reply spells on both brokers that are not the controller
   follow one another for up to 8 s, until one catches a write (`zk-lost-reply
   non-controllers`): the cut broker shrinks its followers out of its ISRs and the other
   shrinks the cut broker out of its own, each when its 5 s round comes due. A spell
   freezes the ensemble's leader for up to 2.5 s; when a shrink waits at the frozen
   leader, it drops that write's answer, lets the leader apply it and closes the
   broker's connection. The broker's client reconnects within its session and sends the
   conditional write again, which meets BADVERSION: the znode already holds that ISR.
3. The leader re-reads the state znode, finds its own ISR there and adopts its zkVersion
   (KAFKA-2729), so it grows its ISRs again when the cut heals and the followers catch up.
4. Heal at 55 s; the load goes on until 75 s.

Verdict: the core invariants; convergence within 30 s of the heal (a leader that kept the
zkVersion its lost answer should have replaced fails every later ISR write: its ISR in
ZooKeeper never grows back to the replicas, and no broker's metadata learns of the ISR
that ZooKeeper holds).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-lost-isr-reply")
#: How long the broker is cut from its peers: the spells fall inside, and the followers'
#: reconnection is done before the bound.
CUT_S = 26
#: When the spells begin, in seconds into the cut, and how long they may go on: one spell
#: (a hold of up to 2.5 s and about 0.5 s around it) after another, over the shrink's
#: 10 to 15 s (the spells stop at the first catch).
SPELLS_AT_S = 9.5
SPELLS_FOR_S = 8
HOLD_S = 2.5


def plan(seed: int | None) -> Schedule:
    """A non-controller cut from its peers at ~15 s for 26 s, with lost-reply spells on the
    non-controllers over the time their ISR shrinks come due."""
    draws = Draws(seed)
    cut = draws.around(15, 2)
    spells = {"hold_s": HOLD_S, "window_s": SPELLS_FOR_S}
    steps = (
        Step(cut, CUT_S, FaultSpec("broker-isolate", "non-controller:1")),
        Step(
            round(cut + SPELLS_AT_S, 1),
            0,
            FaultSpec.of("zk-lost-reply", "non-controllers", spells),
        ),
    )
    return Schedule(seed, steps, heal_at_s=55, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
