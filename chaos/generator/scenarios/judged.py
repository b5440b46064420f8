"""Which invariants a generic schedule (`chaos.generator.generic`) is judged on:
`judged_invariants(schedule)`, every invariant the testbed has
(`chaos.generator.scenarios.invariant_names.INVARIANTS`) whose premise the schedule
meets. The `random` scenario's verdict checks them (`Scenario.invariants_for`).

- always: the core invariants, the replication specifications', Jepsen's queue classes,
  `acknowledged_kept`, `paused_controller_resigns`, `resigned_controller_silent`,
  `controller_writes_fenced` and `stale_requests_fenced` (the last judged only over the
  late copies a `request` fault delivered);
- `registration_served` and `reregistration_completes`: unless a fault that starves a
  broker's or a ZooKeeper server's CPU or memory (`cpu-starve`, `memory-squeeze`)
  overlaps one that takes a broker away, or the schedule partitions the whole cluster: a
  broker that registers then may wait longer than the bound for a crawling controller or
  ensemble, which is slowness, not a lost registration;
- `reassignment_completes`: when the schedule reassigns a topic or retires a broker;
- `topic_deletion_completes`: when the schedule deletes a topic;
- `dead_broker_forgotten`: when some fault kills, stops or bounces a broker. The
  invariant judges only the failures no other fault came near (the run's
  `faults.jsonl`, `rundir.disturbances`): nothing then cut a live broker off from the
  controller, dropped or delayed its requests, or held up the ZooKeeper writes of the
  elections before the requests went out, so a live broker that still lists a dead one
  after the bound was never told;
- `no_offline_partitions`: when faults come one at a time, each on one broker,
  `SPARSE_GAP.low` apart (a sparse schedule), and none takes its broker away but by a
  clean `stop` (a controlled shutdown): every ISR is full again when the next fault
  starts, so no fault takes a partition's last in-sync replica, and no leader vanishes.
  A broker killed, paused, cut off or expired takes its leaderships with it, and the
  controller moves those partitions to OfflinePartition before it elects new leaders, as
  Kafka's does: a correct controller fails the invariant there.

Pure; any thread.
"""

from __future__ import annotations

from chaos.cluster.roles import parse_role
from chaos.generator.generic import SPARSE_GAP
from chaos.generator.overlap import takes_broker_away, window
from chaos.generator.scenarios.invariant_names import INVARIANTS
from chaos.generator.schedule import Schedule, Step
from rundir.disturbances import PROCESS_ONLY_KINDS
from rundir.invariants.names import (
    DEAD_BROKER_FORGOTTEN,
    NO_OFFLINE_PARTITIONS,
    REASSIGNMENT_COMPLETES,
    REGISTRATION_SERVED,
    REREGISTRATION_COMPLETES,
    TOPIC_DELETION_COMPLETES,
)

__all__ = ["ALWAYS", "CONDITIONAL", "judged_invariants"]

#: The invariants judged only when the schedule meets their premise.
CONDITIONAL = frozenset(
    {
        DEAD_BROKER_FORGOTTEN,
        NO_OFFLINE_PARTITIONS,
        REASSIGNMENT_COMPLETES,
        REGISTRATION_SERVED,
        REREGISTRATION_COMPLETES,
        TOPIC_DELETION_COMPLETES,
    }
)

#: The invariants every generic schedule is judged on.
ALWAYS = frozenset(INVARIANTS) - CONDITIONAL

_STARVING = ("cpu-starve", "memory-squeeze")


def _apart(a: Step, b: Step, margin: float) -> bool:
    (start_a, end_a), (start_b, end_b) = window(a), window(b)
    return end_a + margin <= start_b or end_b + margin <= start_a


def _one_broker_at_a_time(schedule: Schedule) -> bool:
    steps = schedule.steps
    if any(parse_role(s.fault.target).group or s.fault.target.startswith("zk") for s in steps):
        return False
    if any(takes_broker_away(s.fault) and s.fault.kind != "stop" for s in steps):
        return False
    return all(_apart(a, b, SPARSE_GAP.low) for i, a in enumerate(steps) for b in steps[i + 1 :])


def _starved_while_away(schedule: Schedule) -> bool:
    if any(s.fault.kind == "partition" for s in schedule.steps):
        return True
    starving = [s for s in schedule.steps if s.fault.kind in _STARVING]
    away = [s for s in schedule.steps if takes_broker_away(s.fault)]
    return any(not _apart(a, b, 0.0) for a in starving for b in away if a is not b)


def _brokers_killed(schedule: Schedule) -> bool:
    return any(
        s.fault.kind in PROCESS_ONLY_KINDS and not s.fault.target.startswith("zk")
        for s in schedule.steps
    )


def judged_invariants(schedule: Schedule) -> frozenset[str]:
    """The invariants `schedule` is judged on (see the module docstring)."""
    kinds = {a.kind for a in schedule.actions}
    judged = set(ALWAYS)
    if not _starved_while_away(schedule):
        judged |= {REGISTRATION_SERVED, REREGISTRATION_COMPLETES}
    if kinds & {"reassign", "vacate"}:
        judged.add(REASSIGNMENT_COMPLETES)
    if _brokers_killed(schedule):
        judged.add(DEAD_BROKER_FORGOTTEN)
    if "delete-topic" in kinds:
        judged.add(TOPIC_DELETION_COMPLETES)
    if _one_broker_at_a_time(schedule):
        judged.add(NO_OFFLINE_PARTITIONS)
    return frozenset(judged)
