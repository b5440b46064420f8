"""Cluster invariants over every node's event log and the workload history
(docs/invariants.md). The checks are pure functions of plain values, shared by the chaos
runner and the PySpark pipeline; reading a run directory lives apart, in `rundir.reader`,
the events they read in `rundir.events`, what they return in `rundir.results`.

- `controller_epochs`: 1. one controller per controller epoch, won epochs only grow;
  2. no broker accepts a request from an older controller epoch.
- `broker_epochs`: 3. no broker accepts a request addressed to an older broker epoch.
- `leaders`: 4. one leader per partition per leader epoch, leader epochs only grow.
- `writes`: 5. no acknowledged write lost, acknowledged writes in order (`rundir.checker`);
  `acknowledged_kept`: no replica removes an acknowledged record (`log_truncated`).
- `queue_anomalies`: Jepsen's Kafka queue classes over the workload history
  (`rundir.checker.queue`), one result each, what the configuration allows apart.
- `convergence`: `ClusterSnapshot`; 6. convergence after the final heal within a bound.
- `scenario_checks`: partitions and topics that make progress (offline partitions,
  reassignments, topic deletions), asked for by some scenarios only.
- `controller_handover`: a superseded controller resigns, then stays silent, and its
  writes are fenced; asked for by some scenarios only.
- `replication`: the replication specifications' invariants, judged on every run:
  `spec_isr` (leader in ISR, ISR join after the epoch start), `spec_high_watermark`
  (valid high watermark, leader completeness), `spec_audit` (weak and strong ISR, log
  matching, over the end-of-run replica audit).
- `judge`: `RunInputs` and `judge`, which runs all of them.
- `testing`: `EventLogBuilder` for hand-made logs in tests.
"""

from rundir.events import Event, EventFormatError, EventLogs
from rundir.invariants.broker_epochs import broker_epoch_fencing
from rundir.invariants.controller_epochs import controller_epoch_fencing, one_controller_per_epoch
from rundir.invariants.convergence import (
    BrokerView,
    ClusterSnapshot,
    PartitionState,
    ViewedPartition,
    converges_after_heal,
    problems,
    time_to_convergence,
)
from rundir.invariants.judge import RunInputs, judge
from rundir.invariants.leaders import one_leader_per_leader_epoch
from rundir.invariants.queue_anomalies import queue_anomalies
from rundir.invariants.writes import acknowledged_kept, acknowledged_writes
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = [
    "BrokerView",
    "ClusterSnapshot",
    "Event",
    "EventFormatError",
    "EventLogs",
    "InvariantResult",
    "PartitionState",
    "RunInputs",
    "RunVerdict",
    "ViewedPartition",
    "Violation",
    "acknowledged_kept",
    "acknowledged_writes",
    "broker_epoch_fencing",
    "controller_epoch_fencing",
    "converges_after_heal",
    "judge",
    "one_controller_per_epoch",
    "one_leader_per_leader_epoch",
    "problems",
    "queue_anomalies",
    "time_to_convergence",
]
