"""cert-rotation: the cluster's CA replaced under load, one server restart at a time.

Setup: topic `chaos-cert-rotation`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 330 s. The cluster runs
secured, as compose starts it: ZooKeeper over TLS only, mutual TLS between the brokers and
from the tools, every certificate from the CA in `.secrets/tls`.

Steps:

1. At 15 s (a seed moves it by up to 3 s) rotate the CA (`cert-rotation all`, the
   rotation of `python -m security rotate`): a new CA trusted beside the old one, every
   ZooKeeper server (the leader last) then every broker (the controller last) stopped
   gracefully and started again, each waited for until it serves; new certificates for
   every server and the tools, a second pass; the old CA retired, a third pass. Eighteen
   restarts, about two minutes (125 s in the first run); one ZooKeeper server or one
   broker is down at a time, so the quorum holds and every partition keeps two replicas
   in sync. The workload's client follows the files: it connects with the new
   certificates once they are written.
2. The rotation took effect when the host's CA is a new one and every server accepts the
   host's new client certificate and presents one of the new CA; it is undone (nothing
   to undo once finished; a rotation cut short is finished) when no rotation is under way
   and every server serves with the one CA of `.secrets/tls`.
3. Heal at 300 s (later if the rotation is still going: the heal waits for it); the load
   goes on until 330 s.

Verdict: the core invariants; no partition offline at any time; no acknowledged record
removed from a replica; every broker registration served by the controller; a resigned
controller silent, its writes fenced; convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import (
    ACKNOWLEDGED_KEPT,
    CONTROLLER_WRITES_FENCED,
    NO_OFFLINE_PARTITIONS,
    REGISTRATION_SERVED,
    RESIGNED_CONTROLLER_SILENT,
)

WORKLOAD = Workload("chaos-cert-rotation", duration_s=330)


def plan(seed: int | None) -> Schedule:
    """One rotation of the CA at ~15 s."""
    draws = Draws(seed)
    step = Step(draws.around(15, 3), 0, FaultSpec("cert-rotation", "all"))
    return Schedule(seed, (step,), heal_at_s=300, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__,
    WORKLOAD,
    plan,
    convergence_s=30,
    also={
        NO_OFFLINE_PARTITIONS,
        ACKNOWLEDGED_KEPT,
        REGISTRATION_SERVED,
        RESIGNED_CONTROLLER_SILENT,
        CONTROLLER_WRITES_FENCED,
    },
)
