"""reordered-requests: an old LeaderAndIsr reaches a broker after a newer one and is fenced.

Setup: topic `chaos-reordered-requests`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 15 s kill the second broker that is not the controller (`kill non-controller:2`)
   for 15 s. About 6 s later its session expires and the controller elects new leaders
   for the partitions it led: a LeaderAndIsr at a new leader epoch for each replica left.
2. At 16 s (a seed moves it by up to 0.5 s) put a request proxy between the controller
   and the first broker that is not the controller (`request non-controller:1`, action
   `reorder`, kind `LeaderAndIsr`, one request, held up to 25 s) until 52 s. The first
   LeaderAndIsr for that broker, the elections of step 1, is answered at once with a
   success and held; requests about other partitions pass. The next LeaderAndIsr about
   one of its partitions (the controller's next change to them: the dead replica taken
   out of their ISRs right after, or the preferred elections of step 3) passes it, and
   the held one, older, follows. The broker must fence each partition the newer request
   covered (STALE_CONTROLLER_EPOCH: its leader epoch is not newer than the one the broker
   holds); obeying it would make it follow, or lead, at an epoch the cluster has left.
   The rest of the held request is news to the broker and is applied. While it is held
   the broker keeps its old view of those partitions (where it is the new leader,
   producers meet NOT_LEADER), and no acknowledged write may be lost for it; where no
   newer request comes, the hold runs out at about 41 s and it is delivered then.
3. At 30 s the killed broker starts again and catches up. At 40 s (a seed moves it by up
   to 1 s) preferred elections of the topic (`elect-leaders`) move its partitions back to
   it, at a newer leader epoch.
4. Heal at 57 s; the load goes on until 75 s.

Verdict: the core invariants and `stale_requests_fenced` (the proxy's record of the
delivered-late request names its stale partitions and the broker's answer for each);
convergence within 30 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.duplicated_requests import around_a_failover
from chaos.generator.scenarios.scenario import Scenario, Workload
from rundir.invariants.names import STALE_REQUESTS_FENCED

WORKLOAD = Workload("chaos-reordered-requests")
#: The proxy's plan: hold the first LeaderAndIsr until a newer one about its partitions.
PLAN: dict[str, Scalar] = {"action": "reorder", "kinds": "LeaderAndIsr", "count": 1, "hold_s": 25}


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, around_a_failover(WORKLOAD, PLAN, 52.0, 57.0), 30, {STALE_REQUESTS_FENCED}
)
