"""zk-quorum-loss: ZooKeeper loses its quorum while the controller handles a broker failure.

Setup: topic `chaos-zk-quorum-loss`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 125 s.

Steps:

1. At 5 s delay everything the controller sends by 1500 ms until 20 s after the kill of
   step 2 (`latency controller`; proving it takes about 5 s, over before the kill): each
   of its ZooKeeper requests takes at least 1.5 s. Handling a broker failure is then
   slow: the controller lists the brokers 5 to 7 s after the kill (the session expires 6
   to 8 s after it), elects new leaders (reads and writes their states: 3 s), then takes
   the broker's replicas offline: StopReplica requests enter the batch, and it reads and
   writes the ISRs (another 3 s). The delay begins by closing the controller's
   ZooKeeper connection (the proxy sees new connections only), and kazoo drops every
   watch with the connection, so the controller first re-arms each of its watches and
   re-reads what it watches: about a dozen events of one to three reads, 30 to 40 s at
   1.5 s a read.
2. At 50 s (a seed moves it by up to 1 s), once that backlog is done, kill a broker
   that is not the controller (`kill non-controller:1`) for 34 s.
3. When the controller logs its elections' `partition_state_change` to
   `OnlinePartition` (a trigger, looked for from the kill on for 25 s), freeze every
   ZooKeeper follower for 16 s (`pause zk-followers`): the ensemble has no quorum. Its
   leader runs on, answers reads for up to 5 s and commits nothing, then gives the
   quorum up; it expires no session (a session lasts 6 s), and no leader wakes from a
   freeze to find every session overdue. The controller's next request, its read of the
   ISRs, is still on its 1.5 s way. If its session is on a follower, the read waits there
   and fails (ConnectionLoss, about 4 s later; pipelined reads are not retried) with the
   StopReplica requests in the batch, in the middle of a state change (docs/bugs.md,
   kafka-2300). If its session is on the leader (one run in three), the read is answered
   and the write after it is retried through the outage: nothing fails. A time could not
   place the outage: the controller's elections ended 8.3 to 9.9 s after the kill in four
   runs, later when the backlog of step 1 was still running, and the window is 1.5 s
   wide. The delay ends 2 to 12 s before the thaw, so that the controller reconnects in
   time to keep its session (delayed, it came too late once: ZooKeeper expired its
   session, which ended its term and its batch). The leader's 5 s and the 6 s sessions
   race, though: a session whose last touch reached the leader more than about 0.75 s
   before the freeze (the delayed controller's, between two requests) is expired by the
   leader just before it gives the quorum up, and the controller resigns at the thaw.
   `controller-zk-reset` breaks the same read with no such race.
4. When the quorum is back the controller keeps its session and its role. It must have
   dropped the requests of the failed change and go on working: when the killed broker
   returns (about 8 s after the thaw) it gets its leaderships and replicas, and the ISRs
   fill up.
5. Heal at 95 s; the load goes on until 125 s.

Verdict: the core invariants; convergence within 30 s of the heal (a controller whose
every state change fails after the first one leaves the returning broker without
LeaderAndIsr and its replicas out of the ISRs).
"""

from __future__ import annotations

from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step, Trigger

WORKLOAD = Workload("chaos-zk-quorum-loss", duration_s=125)
#: The controller's added delay: each of its ZooKeeper round trips takes this long, so
#: the stretch of a broker failure's handling an outage must hit (a read and a write
#: after the StopReplica requests entered the batch) is about twice as wide; short of
#: its session's ping timeout (4 s of a 6 s session).
DELAY_MS = 1500
#: How long two ZooKeeper servers stay frozen: longer than a broker's command retries
#: (12 s, `broker_node.zk_session.new_client`).
OUTAGE_S = 16
#: How long the broker stays dead: it returns this long after the kill, after the thaw.
KILL_S = 34
#: When the delay ends, from the kill: into the outage, which begins 6 to 17 s after the
#: kill, and seconds before the thaw (or with the outage still ahead, when the elections
#: come late: then nothing is left to catch).
DELAY_AFTER_KILL_S = 20
#: The controller's elections for the killed broker's partitions are done: the outage
#: starts, while the controller's next request is on its way.
ELECTIONS_DONE = Trigger("partition_state_change", (("target", "OnlinePartition"),), 25)


def plan(seed: int | None) -> Schedule:
    """The controller delayed from 5 s to 20 s after the kill; a non-controller killed at
    ~50 s for 34 s; every ZooKeeper follower frozen for 16 s when the controller's
    elections for the killed broker's partitions are done."""
    draws = Draws(seed)
    kill = draws.around(50, 1)
    delay = {"delay_ms": DELAY_MS}
    steps = (
        Step(5, kill + DELAY_AFTER_KILL_S - 5, FaultSpec.of("latency", "controller", delay)),
        Step(kill, KILL_S, FaultSpec("kill", "non-controller:1")),
        Step(kill, OUTAGE_S, FaultSpec("pause", "zk-followers"), ELECTIONS_DONE),
    )
    return Schedule(seed, steps, heal_at_s=95, end_s=WORKLOAD.duration_s)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=30)
