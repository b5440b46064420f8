"""slow-controller-bounce: bounce a broker while the controller's requests are delayed.

Setup: topic `chaos-slow-controller-bounce`, 6 partitions, replication factor 3, min ISR
2, acks=all; two producers at 50 values/s each and a consumer, for 75 s.

Steps:

1. At 10 s delay everything the controller sends by 125 ms for 35 s (`latency
   controller`): its ZooKeeper requests reach the ensemble 125 ms late, while
   ZooKeeper's watch notifications reach it at once.
2. At 18 s (a seed moves it by up to 2 s) bounce a broker that is not the controller
   (`bounce non-controller:1`): SIGKILL and start at once. The new process retries its
   registration every 250 ms until ZooKeeper expires the old session (4 to 6 s later),
   so it registers again within about 250 ms of the old registration vanishing.
3. The child watch of `/brokers/ids` fires when the old registration vanishes; a
   listing read then (it reaches ZooKeeper 125 ms later) may miss the new registration
   that the controller's next read, after it has set the watch again (another 125 ms),
   already sees, and that no further notification announces. The controller must read
   the registrations when it handles the change, not when the watch fired: it then sees
   the broker bounced (or gone, then back), not dead.
4. Heal at 45 s; the load goes on until 75 s.

Verdict: the core invariants and `registration_served` (a broker the controller takes
for dead while it is registered is sent nothing: no UpdateMetadata, no LeaderAndIsr,
until some later broker change or reconnection lists it again); convergence within 30 s
of the heal.
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from rundir.invariants.names import REGISTRATION_SERVED

WORKLOAD = Workload("chaos-slow-controller-bounce")
#: The controller's added delay: the watch's listing reaches ZooKeeper this late after the
#: old registration vanished, the controller's next read twice as late, and the new
#: registration comes within 250 ms of the vanishing.
DELAY_MS = 125


def plan(seed: int | None) -> Schedule:
    """The controller delayed from 10 s to 45 s; a non-controller bounced at ~18 s."""
    draws = Draws(seed)
    steps = (
        Step(10, 35, FaultSpec.of("latency", "controller", {"delay_ms": DELAY_MS})),
        Step(draws.around(18, 2), 0, FaultSpec("bounce", "non-controller:1")),
    )
    return Schedule(seed, steps, heal_at_s=45, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(
    __doc__, WORKLOAD, plan, convergence_s=30, also={REGISTRATION_SERVED}
)
