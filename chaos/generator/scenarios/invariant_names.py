"""Every invariant a scenario can name, with what it means: the cluster (controller and
data) invariants, those a scenario adds (`rundir.invariants.judge.SCENARIO_CHECKS`), the
replication specifications' invariants and Jepsen's queue classes
(`rundir.invariants.names.EVERY_RUN`). A scenario's `invariants` lists those it expects to
hold and to exercise: the core ones and the scenario checks are judged because it names
them; the specifications' and the queue classes are judged on every run anyway, and naming
one says the scenario is written to exercise it (docs/scenarios.md shows it).

`unknown_invariants` is the check a scenario's definition runs: a name outside
`INVARIANTS` is refused with the nearest known names. Pure values; any thread.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from rundir.invariants.names import (
    ACKNOWLEDGED_KEPT,
    ACKNOWLEDGED_WRITES,
    BROKER_EPOCH_FENCING,
    CONTROLLER_EPOCH_FENCING,
    CONTROLLER_WRITES_FENCED,
    CONVERGES_AFTER_HEAL,
    DEAD_BROKER_FORGOTTEN,
    EVERY_RUN,
    ISR_JOIN_AFTER_EPOCH_START,
    LEADER_COMPLETENESS,
    LEADER_IN_ISR,
    LOG_MATCHING,
    NO_OFFLINE_PARTITIONS,
    ONE_CONTROLLER_PER_EPOCH,
    ONE_LEADER_PER_LEADER_EPOCH,
    PAUSED_CONTROLLER_RESIGNS,
    REASSIGNMENT_COMPLETES,
    REGISTRATION_SERVED,
    REREGISTRATION_COMPLETES,
    RESIGNED_CONTROLLER_SILENT,
    STALE_REQUESTS_FENCED,
    STRONG_ISR,
    TOPIC_DELETION_COMPLETES,
    VALID_HIGH_WATERMARK,
    WEAK_ISR,
)

__all__ = ["CORE_INVARIANTS", "EVERY_RUN_INVARIANTS", "INVARIANTS", "unknown_invariants"]

#: The cluster invariants and those a scenario adds, by their names in `rundir.invariants`,
#: each with what it means.
_CLUSTER: Mapping[str, str] = {
    ONE_CONTROLLER_PER_EPOCH: "at most one broker acts as controller for a controller "
    "epoch; controller epochs only grow",
    CONTROLLER_EPOCH_FENCING: "no broker obeys a request from a controller epoch older "
    "than one it has obeyed",
    BROKER_EPOCH_FENCING: "no broker obeys a request addressed to an older broker epoch "
    "of its own (KIP-380)",
    ONE_LEADER_PER_LEADER_EPOCH: "per partition, at most one leader per leader epoch; "
    "leader epochs only grow",
    ACKNOWLEDGED_WRITES: "no acknowledged (acks=all) write is lost and acknowledged writes "
    "are read in offset order; never checked with unclean leader election on",
    CONVERGES_AFTER_HEAL: "within the scenario's bound after the heal: one controller, "
    "every partition online with a live leader, every ISR full, every broker's metadata "
    "equal to ZooKeeper's",
    NO_OFFLINE_PARTITIONS: "no partition is without a leader at any time of the run",
    PAUSED_CONTROLLER_RESIGNS: "a controller frozen past its session resigns when it runs "
    "again, and nothing it sends afterwards is obeyed",
    REASSIGNMENT_COMPLETES: "the reassignment the schedule started completes",
    RESIGNED_CONTROLLER_SILENT: "a controller that resigned an epoch queues no request of "
    "that epoch afterwards, and none reaches a broker more than 3 s after the resignation",
    CONTROLLER_WRITES_FENCED: "no partition state written by a controller commits after a "
    "newer controller epoch was elected (in ZooKeeper's transaction order; without it, "
    "logged no more than 2 s after the election)",
    TOPIC_DELETION_COMPLETES: "every topic of the run whose deletion was requested is "
    "deleted by the end of the run, none left half-deleted",
    ACKNOWLEDGED_KEPT: "no replica removes an acknowledged (acks=all) record from its log, "
    "even one it fetches back",
    REGISTRATION_SERVED: "a controller queues a request to every broker registration of "
    "the run, addressed to its broker epoch, within 15 s",
    REREGISTRATION_COMPLETES: "a broker that lost its ZooKeeper session and opened a new "
    "one registers again within 15 s",
    DEAD_BROKER_FORGOTTEN: "within 10 s of a controller handling a broker's failure, every "
    "broker it counts as live holds metadata that no longer lists the dead broker",
    STALE_REQUESTS_FENCED: "every stale LeaderAndIsr or StopReplica the request fault's "
    "proxy delivered late (a duplicate, a reordered request) was fenced by the broker",
}

#: The replication specifications' invariants (docs/invariants.md, "Specification
#: invariants"), each with what it means.
_SPEC: Mapping[str, str] = {
    LEADER_IN_ISR: "a partition's leader is a member of its ISR (LeaderInIsr)",
    VALID_HIGH_WATERMARK: "the high watermark never exceeds an ISR member's log end and "
    "never moves back within a leader epoch (ValidHighWatermark)",
    LEADER_COMPLETENESS: "a newly elected clean leader holds every record committed "
    "before its epoch (Kip101, Kip279)",
    ISR_JOIN_AFTER_EPOCH_START: "a follower joins the ISR only once its log reached the "
    "start of the leader's epoch (Kip320)",
    WEAK_ISR: "at the end, every ISR member holds as many records as the leader's high "
    "watermark (WeakIsr; from the replica audit)",
    STRONG_ISR: "at the end, below the high watermark every ISR member holds the leader's "
    "records (StrongIsr; from the replica audit)",
    LOG_MATCHING: "at the end, two replicas holding the same offsets of a leader epoch hold "
    "the same records, a stopped broker's read from its files (from the replica audit)",
}

#: Jepsen's Kafka queue classes over the workload's history (docs/workload.md), each with
#: the anomaly it names.
_QUEUE: Mapping[str, str] = {
    "inconsistent-offsets": "no offset is read or acknowledged with two values",
    "duplicate": "no value is read or acknowledged at two offsets beyond its sends' allowance",
    "lost-write": "no acknowledged send stays unread while a later offset is read",
    "unseen": "the final read holds every send acknowledged before it began",
    "G1a": "no value is read whose every send definitely failed",
    "poll-skip": "no consumer's poll starts past offsets known to hold records",
    "int-poll-skip": "no poll skips a record known to lie between two offsets it returns",
    "nonmonotonic-poll": "no consumer's poll starts at or before where its previous poll ended",
    "int-nonmonotonic-poll": "no poll returns an offset at or below the one before it",
    "nonmonotonic-send": "no producer's later acknowledgement on a partition is at or below "
    "its previous offset",
}

#: What each invariant a verdict can check means, by its name in `rundir.invariants`.
INVARIANTS: Mapping[str, str] = {**_CLUSTER, **_SPEC, **_QUEUE}

#: The invariants every scenario checks (DESIGN §9).
CORE_INVARIANTS = frozenset(
    {
        ONE_CONTROLLER_PER_EPOCH,
        CONTROLLER_EPOCH_FENCING,
        BROKER_EPOCH_FENCING,
        ONE_LEADER_PER_LEADER_EPOCH,
        ACKNOWLEDGED_WRITES,
        CONVERGES_AFTER_HEAL,
    }
)

#: The invariants judged on every run whatever a scenario names (`names.EVERY_RUN`).
EVERY_RUN_INVARIANTS = frozenset(EVERY_RUN)


def unknown_invariants(names: Iterable[str]) -> str:
    """Why `names` cannot be a scenario's invariants: each name outside `INVARIANTS`,
    with the nearest known names; "" when they all are."""
    unknown = sorted(set(names) - INVARIANTS.keys())
    said = []
    for name in unknown:
        near = difflib.get_close_matches(name, list(INVARIANTS), n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(near)}?)" if near else ""
        said.append(f"{name}{hint}")
    return f"unknown invariants {', '.join(said)}" if said else ""
