"""`judge`: every cluster invariant over one run's inputs. Pure but for a history kept as
its files (`rundir.history_stream.HistoryFiles`), which it reads; any thread.

`RunInputs` is plain values (built by `rundir.reader.load_run` from a run
directory, or by the PySpark pipeline from its own reading): every node's events, the
workload history and final read, the cluster snapshots around the final heal, and the
scenario's settings the invariants depend on. The history checker judges the history once
(`history_verdict`, or the verdict given in `RunInputs.history_verdict`) for both
invariants over it, `acknowledged_writes` and Jepsen's queue classes.

The event logs are whole files: a cluster that served earlier runs hands a run the events
of those runs too. Two rules keep a run to its own doing. Processes that had ended before
the run started (`since_ms`) are not judged at all (a bug hunt's brokers that ran with a
bug switch before they were recreated without it). The processes running at the start
are read whole, as the event invariants (1-4) need what came before (epochs only grow),
but a violation whose events all happened before the run started (on a cluster that
served several runs, as `chaos all` does) was the earlier run's to report: it is left out
here and counted in the invariant's note.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rundir.audit import ReplicaReport
from rundir.checker import (
    FinalRead,
    QueuePolicy,
    check,
    check_files,
    final_read_from_history,
    indexed,
)
from rundir.disturbances import Disturbance
from rundir.events import EventLogs, since_process_at
from rundir.history import FINAL_READ_PROCESS, HistoryOp
from rundir.history_stream import HistoryFiles
from rundir.invariants.broker_epochs import broker_epoch_fencing
from rundir.invariants.controller_epochs import controller_epoch_fencing, one_controller_per_epoch
from rundir.invariants.controller_handover import (
    controller_writes_fenced,
    paused_controller_resigns,
    resigned_controller_silent,
)
from rundir.invariants.convergence import (
    CONVERGES_AFTER_HEAL,
    ClusterSnapshot,
    converges_after_heal,
)
from rundir.invariants.dead_brokers import dead_broker_forgotten
from rundir.invariants.leaders import one_leader_per_leader_epoch
from rundir.invariants.names import (
    ACKNOWLEDGED_KEPT,
    CONTROLLER_WRITES_FENCED,
    DEAD_BROKER_FORGOTTEN,
    NO_OFFLINE_PARTITIONS,
    PAUSED_CONTROLLER_RESIGNS,
    REASSIGNMENT_COMPLETES,
    REGISTRATION_SERVED,
    REREGISTRATION_COMPLETES,
    RESIGNED_CONTROLLER_SILENT,
    STALE_REQUESTS_FENCED,
    TOPIC_DELETION_COMPLETES,
)
from rundir.invariants.queue_anomalies import queue_anomalies
from rundir.invariants.registrations import registration_served, reregistration_completes
from rundir.invariants.replication import audit_invariants, event_invariants
from rundir.invariants.scenario_checks import (
    no_offline_partitions,
    reassignment_completes,
    topic_deletion_completes,
)
from rundir.invariants.stale_requests import stale_requests_fenced
from rundir.invariants.writes import acknowledged_kept, acknowledged_writes
from rundir.results import InvariantResult, RunVerdict, Violation

__all__ = ["SCENARIO_CHECKS", "RunInputs", "during_run", "history_verdict", "judge"]


@dataclass(frozen=True, slots=True)
class RunInputs:
    """What the invariants judge. `history` None: the run had no workload; `final_read`
    None: rebuilt from the history; `convergence_bound_ms` None: the scenario sets no
    bound, so convergence is not judged."""

    events: EventLogs
    #: the operations, or the files streamed again on each pass (`HistoryFiles`)
    history: Collection[HistoryOp] | None = None
    final_read: FinalRead | None = None
    snapshots: Sequence[ClusterSnapshot] = ()
    unclean_leader_election: bool = False
    #: Why the run may lose acknowledged writes besides unclean election (a power loss
    #: under a flush policy that does not fsync every message; `config.json`'s
    #: `acknowledged_loss_allowed`), or None.
    acknowledged_loss_allowed: str | None = None
    convergence_bound_ms: int | None = None
    #: Scenario-specific invariants to run besides 1-6 (`rundir.invariants.names`), over the
    #: events since `since_ms` (the run's start; invariants 1-4 report only violations
    #: shown by an event since then) and, for a reassignment, the run's `topics`.
    also: frozenset[str] = frozenset()
    since_ms: int = 0
    topics: tuple[str, ...] = ()
    #: The end-of-run replica audit (`audit.json`); None: the run has none, and the
    #: invariants over it are not judged.
    audit: Sequence[ReplicaReport] | None = None
    #: The `request` fault's proxy records (`traces/`), each with its `trace` file name;
    #: None: the run kept none.
    request_records: Sequence[Mapping[str, Any]] | None = None
    #: The faults that did more than take broker processes away, when and on whom
    #: (`rundir.disturbances`); None: the run's faults are unknown, and the invariants
    #: that assume an undisturbed cluster judge the whole run.
    disturbances: Sequence[Disturbance] | None = None
    #: The history checker's verdict over `history`, `final_read` and the `policy`, when
    #: the caller judged it already (`history_verdict`).
    history_verdict: RunVerdict | None = None

    @property
    def policy(self) -> QueuePolicy:
        """What the run's configuration allows the history checker to find."""
        return QueuePolicy(self.unclean_leader_election, self.acknowledged_loss_allowed)


def history_verdict(inputs: RunInputs) -> RunVerdict | None:
    """The history checker's verdict (`rundir.checker`) over the inputs' history, judged
    once for every invariant over it: the one given, else judged now, a history kept as
    its files as it is read (`rundir.checker.check_files`); None without a history."""
    if inputs.history_verdict is not None:
        return inputs.history_verdict
    if not inputs.history:
        return None
    policy = inputs.policy
    if isinstance(inputs.history, HistoryFiles):
        return check_files(inputs.history.paths, inputs.final_read, policy)
    ops = indexed(tuple(inputs.history))
    final = inputs.final_read or final_read_from_history(ops, FINAL_READ_PROCESS)
    return check(ops, final, policy)


def judge(inputs: RunInputs) -> RunVerdict:
    """Run invariants 1-6 (docs/invariants.md), in that order, then the replication
    specifications' (`rundir.invariants.replication`), then those in `also`, then
    Jepsen's queue classes over the workload history (with the history's measures).
    Every invariant sees each node's log from the process that was running when the run
    started (`since_ms`) on (`events.since_process_at`): processes that had ended before
    the run, perhaps of another build, are not judged. `ValueError` for a name in `also`
    that is not a scenario-specific invariant."""
    unknown = inputs.also - SCENARIO_CHECKS.keys()
    if unknown:
        raise ValueError(f"no such scenario invariant: {', '.join(sorted(unknown))}")
    inputs = replace(inputs, events=since_process_at(inputs.events, inputs.since_ms))
    if inputs.convergence_bound_ms is None:
        convergence = InvariantResult(
            CONVERGES_AFTER_HEAL, note="the scenario sets no convergence bound", judged=False
        )
    else:
        convergence = converges_after_heal(inputs.snapshots, inputs.convergence_bound_ms)
    since = inputs.since_ms
    checked = history_verdict(inputs)
    queue = queue_anomalies(
        inputs.history, inputs.final_read, policy=inputs.policy, verdict=checked
    )
    loss_allowed = inputs.policy.loss_allowed
    # a replica that lost unsynced writes diverges as one elected uncleanly does
    diverging = loss_allowed is not None
    return RunVerdict(
        (
            during_run(one_controller_per_epoch(inputs.events), since),
            during_run(controller_epoch_fencing(inputs.events), since),
            during_run(broker_epoch_fencing(inputs.events), since),
            during_run(one_leader_per_leader_epoch(inputs.events), since),
            acknowledged_writes(
                inputs.history,
                inputs.final_read,
                loss_allowed=loss_allowed,
                logs=inputs.events,
                verdict=checked,
            ),
            convergence,
            *(
                during_run(r, since)
                for r in event_invariants(inputs.events, unclean_leader_election=diverging)
            ),
            *audit_invariants(
                inputs.audit,
                inputs.events,
                unclean_leader_election=diverging,
            ),
            *(SCENARIO_CHECKS[name](inputs) for name in sorted(inputs.also)),
            *queue.results,
        ),
        stats=queue.stats,
    )


def _last_op_ms(inputs: RunInputs) -> int:
    """When the workload last did something (wall clock), 0 without a history."""
    return max((op.wall_ms for op in inputs.history or ()), default=0)


def during_run(result: InvariantResult, since_ms: int) -> InvariantResult:
    """`result` without the violations whose events all happened before `since_ms` (a
    violation shown by no event, or by one event at or after it, stays); the note counts
    what was left out."""
    kept = tuple(v for v in result.violations if not _before(v, since_ms))
    earlier = len(result.violations) - len(kept)
    if not earlier:
        return result
    note = f"{earlier} violations before the run started not judged"
    return replace(result, violations=kept, note="; ".join(n for n in (result.note, note) if n))


def _before(violation: Violation, since_ms: int) -> bool:
    return bool(violation.events) and all(e.ts < since_ms for e in violation.events)


#: The scenario-specific invariants by name, each over the run's inputs.
SCENARIO_CHECKS: Mapping[str, Callable[[RunInputs], InvariantResult]] = {
    ACKNOWLEDGED_KEPT: lambda i: acknowledged_kept(
        i.history, i.events, i.since_ms, loss_allowed=i.policy.loss_allowed
    ),
    NO_OFFLINE_PARTITIONS: lambda i: no_offline_partitions(i.events, i.since_ms, i.topics or None),
    PAUSED_CONTROLLER_RESIGNS: lambda i: paused_controller_resigns(i.events, i.since_ms),
    REASSIGNMENT_COMPLETES: lambda i: reassignment_completes(i.events, i.since_ms, i.topics),
    REGISTRATION_SERVED: lambda i: registration_served(i.events, i.since_ms, _last_op_ms(i)),
    REREGISTRATION_COMPLETES: lambda i: reregistration_completes(
        i.events, i.since_ms, _last_op_ms(i)
    ),
    DEAD_BROKER_FORGOTTEN: lambda i: dead_broker_forgotten(
        i.events, i.since_ms, disturbances=i.disturbances or ()
    ),
    RESIGNED_CONTROLLER_SILENT: lambda i: resigned_controller_silent(i.events, i.since_ms),
    TOPIC_DELETION_COMPLETES: lambda i: topic_deletion_completes(i.events, i.since_ms, i.topics),
    CONTROLLER_WRITES_FENCED: lambda i: controller_writes_fenced(i.events, i.since_ms),
    STALE_REQUESTS_FENCED: lambda i: stale_requests_fenced(i.request_records),
}
