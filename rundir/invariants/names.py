"""The name of every invariant a verdict can hold, as `verdict.json`, the scenarios and
the pipeline spell it. One owner, so that a scenario cannot ask for a check that does not
exist under that name."""

from __future__ import annotations

from rundir.checker.queue import QUEUE_CLASSES

ONE_CONTROLLER_PER_EPOCH = "one_controller_per_epoch"
CONTROLLER_EPOCH_FENCING = "controller_epoch_fencing"
BROKER_EPOCH_FENCING = "broker_epoch_fencing"
ONE_LEADER_PER_LEADER_EPOCH = "one_leader_per_leader_epoch"
ACKNOWLEDGED_WRITES = "acknowledged_writes"
ACKNOWLEDGED_KEPT = "acknowledged_kept"
CONVERGES_AFTER_HEAL = "converges_after_heal"
NO_OFFLINE_PARTITIONS = "no_offline_partitions"
PAUSED_CONTROLLER_RESIGNS = "paused_controller_resigns"
REASSIGNMENT_COMPLETES = "reassignment_completes"
RESIGNED_CONTROLLER_SILENT = "resigned_controller_silent"
TOPIC_DELETION_COMPLETES = "topic_deletion_completes"
CONTROLLER_WRITES_FENCED = "controller_writes_fenced"
REGISTRATION_SERVED = "registration_served"
REREGISTRATION_COMPLETES = "reregistration_completes"
STALE_REQUESTS_FENCED = "stale_requests_fenced"
LEADER_IN_ISR = "leader_in_isr"
VALID_HIGH_WATERMARK = "valid_high_watermark"
WEAK_ISR = "weak_isr"
STRONG_ISR = "strong_isr"
LOG_MATCHING = "log_matching"
LEADER_COMPLETENESS = "leader_completeness"
ISR_JOIN_AFTER_EPOCH_START = "isr_join_after_epoch_start"
DEAD_BROKER_FORGOTTEN = "dead_broker_forgotten"

#: The replication specifications' invariants, judged on every run whatever its scenario
#: names (`rundir.invariants.replication`), in verdict order.
SPEC_INVARIANTS = (
    LEADER_IN_ISR,
    VALID_HIGH_WATERMARK,
    LEADER_COMPLETENESS,
    ISR_JOIN_AFTER_EPOCH_START,
    WEAK_ISR,
    STRONG_ISR,
    LOG_MATCHING,
)

#: What every run is judged on whatever its scenario names, besides the scenario's own
#: invariants: the specifications' invariants and Jepsen's queue classes (in verdict order).
EVERY_RUN = (*SPEC_INVARIANTS, *QUEUE_CLASSES)
