"""moved-while-reconnecting: move `/controller` while the controller reconnects to ZooKeeper.

Setup: topic `chaos-moved-while-reconnecting`, 6 partitions, replication factor 3, min
ISR 2, acks=all; two producers at 50 values/s each and a consumer, for 110 s.

Steps:

1. At 5 s delay everything the controller sends by 1500 ms for 65 s (`latency
   controller`): each of its ZooKeeper requests takes at least 1.5 s. The delay begins
   by closing its ZooKeeper connection; kazoo forgets every watch with it, and the
   controller re-arms them one event at a time (30 to 40 s of reads at 1.5 s each).
2. At 50 s (a seed moves it by up to 1 s), once that backlog is done, reset the
   controller's ZooKeeper connection (`zk-reset controller`): it keeps its session, and
   its watches are gone again. It needs at least 3 s to reconnect through the delay and
   arm its `/controller` watch anew.
3. Half a second later delete `/controller` (`move-controller`, as an operator forces an
   election). The other brokers' watches see the deletion and one of them wins a new
   controller epoch; the old controller, watching nothing, never sees the deletion. It
   learns of the move when, reconnected, it re-reads `/controller` (a ControllerChange:
   the znode now names another broker) and must resign then.
4. Heal at 80 s; the load goes on until 110 s.

Verdict: the core invariants, `paused_controller_resigns` (the superseded controller logs
its resignation) and `resigned_controller_silent`; convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from rundir.invariants.names import PAUSED_CONTROLLER_RESIGNS, RESIGNED_CONTROLLER_SILENT

WORKLOAD = Workload("chaos-moved-while-reconnecting", duration_s=110)
#: The controller's added delay: its reconnection and each read take at least this long.
DELAY_MS = 1500
#: The move after the reset: well inside the 3 s the controller needs to watch again.
MOVE_AFTER_S = 0.5


def plan(seed: int | None) -> Schedule:
    """The controller delayed from 5 s to 70 s; its ZooKeeper connection reset at ~50 s
    and `/controller` deleted 0.5 s later."""
    draws = Draws(seed)
    reset = draws.around(50, 1)
    steps = (
        Step(5, 65, FaultSpec.of("latency", "controller", {"delay_ms": DELAY_MS})),
        Step(reset, 0, FaultSpec("zk-reset", "controller")),
    )
    actions = (Action(round(reset + MOVE_AFTER_S, 1), "move-controller", ()),)
    return Schedule(seed, steps, heal_at_s=80, end_s=WORKLOAD.duration_s, actions=actions)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, 30, also={PAUSED_CONTROLLER_RESIGNS, RESIGNED_CONTROLLER_SILENT}
)
