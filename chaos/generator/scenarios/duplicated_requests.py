"""duplicated-requests: each LeaderAndIsr for one broker arrives twice; it fences the copy.

Setup: topic `chaos-duplicated-requests`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s kill the second broker that is not the controller (`kill non-controller:2`)
   for 15 s. Its session expires about 6 s later: the controller elects new leaders for
   the partitions it led and shrinks it out of the ISRs, each change a LeaderAndIsr to the
   replicas that are left.
2. At 16 s (a seed moves it by up to 0.5 s) put a request proxy between the controller
   and the first broker that is not the controller (`request non-controller:1`, action
   `duplicate`, kinds `LeaderAndIsr,StopReplica`, every one while it lasts, the copy 1 s
   after the original) until 50 s. Each request reaches the broker and is answered; 1 s
   later the same bytes arrive again. The copy carries the leader epochs the broker has
   just obeyed: the broker must fence every partition of it (STALE_CONTROLLER_EPOCH for a
   LeaderAndIsr, FENCED_LEADER_EPOCH for a StopReplica), or it would become leader or
   follower again at an epoch it already holds, perhaps after a newer one came between.
3. At 30 s the killed broker starts again and catches up; at 40 s (a seed moves it by up
   to 1 s) preferred elections of the topic (`elect-leaders`) move its partitions back to
   it: another LeaderAndIsr, and its copy, for the broker behind the proxy.
4. Heal at 55 s; the load goes on until 75 s.

Verdict: the core invariants and `stale_requests_fenced` (the proxy's record of each late
copy names its stale partitions and the broker's answer for each: none obeyed);
convergence within 30 s of the heal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step
from rundir.invariants.names import STALE_REQUESTS_FENCED

WORKLOAD = Workload("chaos-duplicated-requests")
#: The proxy's plan: every LeaderAndIsr and StopReplica, again 1 s later.
PLAN: dict[str, Scalar] = {
    "action": "duplicate",
    "kinds": "LeaderAndIsr,StopReplica",
    "count": 0,
    "delay_ms": 1000,
}


def around_a_failover(
    workload: Workload, proxy: Mapping[str, Scalar], proxy_until_s: float, heal_at_s: float
) -> Callable[[int | None], Schedule]:
    """The plan both request scenarios share: `non-controller:2` killed at 15 s for 15 s,
    the `request` fault with `proxy` on `non-controller:1` from ~16 s to `proxy_until_s`,
    preferred elections of the workload's topic at ~40 s, healed at `heal_at_s`."""

    def plan(seed: int | None) -> Schedule:
        draws = Draws(seed)
        proxy_at = draws.around(16, 0.5)
        steps = (
            Step(15.0, 15.0, FaultSpec("kill", "non-controller:2")),
            Step(
                proxy_at,
                round(proxy_until_s - proxy_at, 1),
                FaultSpec.of("request", "non-controller:1", proxy),
            ),
        )
        elect = Action(draws.around(40, 1), "elect-leaders", (("topic", workload.topic),))
        return Schedule(seed, steps, heal_at_s, workload.duration_s, actions=(elect,))

    return plan


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, around_a_failover(WORKLOAD, PLAN, 50.0, 55.0), 30, {STALE_REQUESTS_FENCED}
)
