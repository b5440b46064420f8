"""failover-after-bounce: kill the controller while a bounced broker registers again.

Setup: topic `chaos-failover-after-bounce`, 6 partitions, replication factor 2, min ISR
1, acks=all; two producers at 50 values/s each and a consumer, for 75 s. Two replicas,
so that two partitions have none on the controller: at failover the new controller
takes the dead controller's replicas out of their ISRs, which gives those partitions a
new leader epoch and their followers a second LeaderAndIsr, sent after the first
UpdateMetadata (with three replicas every partition has one there, and the second
LeaderAndIsr hides what the first did).

Steps:

1. At 12 s (a seed moves it by up to 1 s) bounce a broker that is not the controller
   (`bounce non-controller:1`): SIGKILL and start at once. The new process registers
   when ZooKeeper expires the old session, 4 to 6 s later; its metadata cache is empty.
2. Three seconds later SIGKILL the controller (`kill controller`) for 15 s: its session
   expires 4 to 6 s after the kill, after the bounced broker registered again, and no
   controller handles that registration in between.
3. A surviving broker wins the election and runs failover with the bounced broker among
   the live ones. Its LeaderAndIsr tells that broker to follow leaders its cache does not
   know yet; the failover must tell every live broker the live brokers first
   (UpdateMetadata before LeaderAndIsr), or at least the LeaderAndIsr must say where its
   leaders are, for the broker to fetch and rejoin the ISRs. Of the partitions the two
   survivors share, nothing else changes the leader epoch before the heal.
4. At about 30 s the old controller starts again and registers as a plain broker.
5. Heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants; convergence within 30 s of the heal (a follower that found
no leader fetches nothing, and its replicas stay out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-failover-after-bounce", replication_factor=2, min_insync_replicas=1)
#: The kill after the bounce: the bounced broker registers again (4 to 6 s after the
#: bounce) before the killed controller's session expires (4 to 6 s after the kill).
KILL_AFTER_S = 3.0
#: How long the controller stays dead.
KILL_S = 15


def plan(seed: int | None) -> Schedule:
    """A non-controller bounced at ~12 s; the controller killed 3 s later for 15 s."""
    draws = Draws(seed)
    bounce = draws.around(12, 1)
    steps = (
        Step(bounce, 0, FaultSpec("bounce", "non-controller:1")),
        Step(round(bounce + KILL_AFTER_S, 1), KILL_S, FaultSpec("kill", "controller")),
    )
    return Schedule(seed, steps, heal_at_s=45, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30)
