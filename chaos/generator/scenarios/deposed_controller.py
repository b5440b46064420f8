"""deposed-controller: cut the controller from brokers, then ZooKeeper; brokers come back first.

Setup: topic `chaos-deposed-controller`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 6 s (a seed moves it by up to 1 s) cut the controller from the other brokers
   (`broker-isolate controller`); ZooKeeper stays reachable. Its followers fall out of
   the ISRs after the 10 s replica lag, the leaders report the ISR changes a few seconds
   later, and the UpdateMetadata the controller sends about them waits in its senders,
   resent until the brokers answer.
2. 22 s later (a seed: ± 1 s) cut it from ZooKeeper as well (`zk-isolate controller`,
   measured beside the cut of step 1). Its session expires after 6 s and another broker
   becomes controller with a higher epoch; the cut controller, suspended, knows nothing
   of it and still holds its queued requests.
3. 12 s after the second cut (a seed: ± 1 s) give it its brokers back (step 1 ends, its
   undo measured beside the cut of step 2): its senders deliver the requests of the
   deposed epoch to brokers that already obeyed its successor (a call that was in flight
   across the cut ends with its 30 s deadline and is sent again). They must refuse them.
4. 16 s later give it ZooKeeper back: it learns that its session expired, resigns and
   registers again.
5. Heal at 62 s; the load goes on until 90 s.

Verdict: the core invariants (`controller_epoch_fencing`: no broker obeys the deposed
epoch after obeying the new one) and `resigned_controller_silent`; convergence within 25 s
of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-deposed-controller", duration_s=90.0)

#: From the cut from the brokers to the cut from ZooKeeper: the 10 s replica lag, then the
#: leaders' ISR change notifications (batched for up to a few seconds) and the controller's
#: UpdateMetadata about them, queued for brokers it cannot reach.
QUEUE_S = 22.0
#: When the first link comes back, counted from the second cut: time for the session to
#: expire and a successor to be elected and heard.
FIRST_HEAL_S = 12.0
#: When the other link comes back, after the first: past the 30 s deadline of the call
#: that was in flight when the brokers were cut off, so that it is sent again over the
#: healed link (a TCP connection that lost packets for that long retransmits slowly).
SECOND_HEAL_S = 16.0
#: The heal and the convergence bound of both scenarios.
HEAL_AT_S = 62.0
CONVERGENCE_S = 25.0


def cuts(seed: int | None, zookeeper_back_first: bool, end_s: float) -> Schedule:
    """The controller cut from the brokers at ~6 s, from ZooKeeper ~22 s later; ~12 s
    after that one link comes back (ZooKeeper's with `zookeeper_back_first`), the other
    16 s after it; healed at 62 s."""
    draws = Draws(seed)
    broker_cut = draws.around(6, 1)
    zk_cut = round(broker_cut + draws.around(QUEUE_S, 1), 1)
    first_back = round(zk_cut + draws.around(FIRST_HEAL_S, 1), 1)
    second_back = round(first_back + SECOND_HEAL_S, 1)
    broker_back, zk_back = (
        (second_back, first_back) if zookeeper_back_first else (first_back, second_back)
    )
    steps = (
        Step(
            broker_cut,
            round(broker_back - broker_cut, 1),
            FaultSpec("broker-isolate", "controller"),
        ),
        Step(zk_cut, round(zk_back - zk_cut, 1), FaultSpec("zk-isolate", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=HEAL_AT_S, end_s=end_s)


def plan(seed: int | None) -> Schedule:
    """The brokers' link back first (see `cuts`)."""
    return cuts(seed, zookeeper_back_first=False, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, CONVERGENCE_S, also={"resigned_controller_silent"}
)
