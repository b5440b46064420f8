"""skipped-epoch: a leader never told of the epoch after its own leads again.

Setup: topic `chaos-skipped-epoch`, 6 partitions, replication factor 3, min ISR 2,
acks=all; two producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. At 15 s SIGKILL the second broker that is not the controller (`kill
   non-controller:2`, F) for 15 s. About 6 s later its session expires and the partitions
   it led get new leaders from their ISRs (leader epoch E); where F's next replica is the
   first broker that is not the controller (L), L leads.
2. At 30 s F starts again. At 30.5 s put a request proxy between the controller and the
   first broker that is not the controller (`request non-controller:1`, action `drop`,
   kinds `LeaderAndIsr` and `UpdateMetadata`, every one while it lasts) until 52 s. The
   UpdateMetadata announcing F's registration, or its return to the ISRs, is the first
   request the proxy drops: the proof that it acts, soon after F's restart and before the
   elections below (each step starts on time on a thread of its own). Each
   dropped request is answered UNAVAILABLE and the controller's sender sends it again
   after its back-off, so every later request for L waits behind it until the proxy goes.
3. From 35 s until half a second after the elections below, slow F's links by 800 ms
   (`latency non-controller:2`): each of its fetches from L takes a round trip longer,
   so F stays in the ISRs (it lags far less than 10 s) but holds fewer of L's records
   than L and the other follower do.
4. At 40 s (a seed moves it by up to 1 s) preferred elections of the topic
   (`elect-leaders`) move F's partitions back to it at leader epoch E+1, from F's own
   log end: short of L's, so L keeps at E a tail of records F never fetched (never
   acknowledged: F was in the ISR). The other follower learns of E+1, truncates to
   where E ends in F's log and follows F; L does not learn it, and goes on leading at E
   with its tail and what producers that still take it for the leader send it, at
   offsets where F writes its own.
5. 3 s later (a seed: 2.5 to 3.5 s) SIGKILL F again, for 20 s. Its session expires and
   the controller elects the next replica of the ISR at E+2: L, where it comes right
   after F. L learns E+1 and E+2 together when the proxy goes, and leads with the records
   of E it kept; the other follower asks L where E+1, its latest epoch, ended. L never had
   E+1 and answers with the end of E in its own log, past the offset where E ended in the
   follower's (KAFKA-6361). The follower must also look where E ends in its own log and
   cut there (KIP-279); keeping the records of E+1 up to L's offset leaves two replicas
   with different records at the same offsets. F, started again, asks the same.
6. Heal at 65 s; the load goes on until 90 s.

Verdict: the core invariants and the specification's `log_matching` (judged on every
run: the replicas' records below the high watermark agree at the end); convergence within
30 s of the heal.
"""

from __future__ import annotations

from chaos.faults.params import Scalar
from chaos.generator.scenarios.scenario import Draws, Scenario, Workload
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

WORKLOAD = Workload("chaos-skipped-epoch", duration_s=90)
#: The proxy's plan: every LeaderAndIsr and UpdateMetadata for L dropped while it lasts
#: (the sender resends). UpdateMetadata makes the proxy act soon after F starts again:
#: the step proves itself then, before the elections.
DROP: dict[str, Scalar] = {"action": "drop", "kinds": "LeaderAndIsr,UpdateMetadata", "count": 0}
#: F's links slowed from this time (s) to just after the elections, so that F, when it
#: takes its partitions over, has not fetched all of L's log: L's tail at E.
SLOW_FROM_S = 35.0
SLOW: dict[str, Scalar] = {"delay_ms": 800}


def plan(seed: int | None) -> Schedule:
    """F killed at 15 s for 15 s, L's requests dropped from 30.5 s to 52 s, F slowed from
    35 s, preferred elections at ~40 s, F killed again ~3 s later for 20 s, healed at
    65 s."""
    draws = Draws(seed)
    elect_at = draws.around(40, 1)
    second_kill = round(elect_at + draws.around(3, 0.5), 1)
    slowed = round(elect_at + 0.5 - SLOW_FROM_S, 1)
    steps = (
        Step(15.0, 15.0, FaultSpec("kill", "non-controller:2")),
        Step(30.5, 21.5, FaultSpec.of("request", "non-controller:1", DROP)),
        Step(SLOW_FROM_S, slowed, FaultSpec.of("latency", "non-controller:2", SLOW)),
        Step(second_kill, 20.0, FaultSpec("kill", "non-controller:2")),
    )
    elect = Action(elect_at, "elect-leaders", (("topic", WORKLOAD.topic),))
    heal = max(65.0, round(second_kill + 21, 1))
    return Schedule(seed, steps, heal, WORKLOAD.duration_s, actions=(elect,))


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, 30)
