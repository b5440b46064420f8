"""lost-registration-reply: a broker's new registration is created and its answer is lost.

Setup: topic `chaos-lost-registration-reply`, 6 partitions, replication factor 3, min
ISR 2, acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 8 s delay everything the lowest-numbered non-controller sends by 1 s for 30 s
   (`latency non-controller:1`): each of its ZooKeeper requests reaches the ensemble
   1 s after it left.
2. At 12 s (a seed moves it by up to 1 s) cut that broker from every ZooKeeper server
   for 10 s (`zk-isolate non-controller:1`): its session expires after 6 s, ZooKeeper
   removes its registration and the controller elects new leaders for what it led.
3. When the broker, back in touch, learns that its session expired (its
   `zk_session_state` `lost`, looked for from 6 s into the cut for 20 s), lost-reply
   spells on it follow one another for up to 10 s, until one catches a write
   (`zk-lost-reply non-controller:1`, `writes_only`: a request the follower it is
   connected to holds for the frozen leader, not the TLS or session handshake of its
   new connection, which also waits unanswered). The broker opens a new
   session and creates `/brokers/ids/N` again; the create waits a second in the delay
   and then at the frozen leader of the ensemble, where the spell catches it: its
   answer is dropped, the leader applies it, and the broker's connection is closed. The
   client reconnects within the new session and sends the create again, which meets the
   node the first attempt made, owned by the broker's own session (KAFKA-1387). The
   broker must take it as its registration and go on with the broker epoch it names.
4. Heal at 50 s; the load goes on until 75 s.

Verdict: the core invariants and `reregistration_completes` (a broker that lost its
session and opened a new one registers again within 15 s, as it knows it); convergence
within 25 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step, Trigger
from rundir.invariants.names import REREGISTRATION_COMPLETES

WORKLOAD = Workload("chaos-lost-registration-reply")
#: The broker's added delay: its create is in flight for that long before it reaches
#: the ensemble, so that a spell's freeze usually holds it at the leader.
DELAY_MS = 1000
#: How long the cut from ZooKeeper lasts: longer than the broker's 6 s session.
CUT_S = 10
#: How long the spells may go on, and the most each holds a write (s): the broker's new
#: session through the delay and its create fall inside.
SPELLS_FOR_S = 10
HOLD_S = 2.5
#: The broker's learning that its session expired, which starts the spells.
SESSION_LOST = Trigger("zk_session_state", (("state", "lost"),), 20)


def plan(seed: int | None) -> Schedule:
    """A non-controller delayed from 8 s for 30 s, cut from ZooKeeper at ~12 s for 10 s,
    and lost-reply spells on it for up to 10 s from when it learns its session expired."""
    draws = Draws(seed)
    cut = draws.around(12, 1)
    spells = {"hold_s": HOLD_S, "window_s": SPELLS_FOR_S, "writes_only": True}
    lost = FaultSpec.of("zk-lost-reply", "non-controller:1", spells)
    steps = (
        Step(8, 30, FaultSpec.of("latency", "non-controller:1", {"delay_ms": DELAY_MS})),
        Step(cut, CUT_S, FaultSpec("zk-isolate", "non-controller:1")),
        Step(round(cut + 6, 1), 0, lost, SESSION_LOST),
    )
    return Schedule(seed, steps, heal_at_s=50, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=25, also={REREGISTRATION_COMPLETES}
)
