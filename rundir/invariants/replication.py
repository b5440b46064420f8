"""The replication specifications' invariants (hachikuji/kafka-specification:
KafkaReplication, Kip101, Kip279, Kip320, AsyncIsr; docs/invariants.md, "Specification
invariants"), in the order a verdict lists them: those over the event logs
(`spec_isr`, `spec_high_watermark`), then those over the end-of-run replica audit
(`spec_audit`), not judged when the run has no `audit.json`. Pure; any thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from rundir.audit import ReplicaReport
from rundir.events import EventLogs
from rundir.invariants.names import LOG_MATCHING, STRONG_ISR, WEAK_ISR
from rundir.invariants.spec_audit import log_matching, strong_isr, weak_isr
from rundir.invariants.spec_high_watermark import leader_completeness, valid_high_watermark
from rundir.invariants.spec_isr import isr_join_after_epoch_start, leader_in_isr
from rundir.results import InvariantResult

__all__ = ["AUDIT_INVARIANTS", "audit_invariants", "event_invariants"]

#: The invariants judged from `audit.json`, in verdict order.
AUDIT_INVARIANTS = (WEAK_ISR, STRONG_ISR, LOG_MATCHING)


def event_invariants(logs: EventLogs, *, unclean_leader_election: bool) -> list[InvariantResult]:
    """`leader_in_isr`, `valid_high_watermark`, `leader_completeness` and
    `isr_join_after_epoch_start` over the event logs."""
    return [
        leader_in_isr(logs),
        valid_high_watermark(logs),
        leader_completeness(logs, unclean_leader_election=unclean_leader_election),
        isr_join_after_epoch_start(logs),
    ]


def audit_invariants(
    audit: Sequence[ReplicaReport] | None, logs: EventLogs, *, unclean_leader_election: bool
) -> list[InvariantResult]:
    """`weak_isr`, `strong_isr` and `log_matching` over the audit (and the ISR the logs
    name); each not judged, with a note, when the run has no audit."""
    if audit is None:
        return [
            InvariantResult(name, note="the run has no audit.json", judged=False)
            for name in AUDIT_INVARIANTS
        ]
    return [
        weak_isr(audit, logs),
        strong_isr(audit, logs, unclean_leader_election=unclean_leader_election),
        log_matching(audit, unclean_leader_election=unclean_leader_election),
    ]
