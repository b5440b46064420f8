"""Invariants of partition and topic progress that only some scenarios ask for, over the
events written since the run started (`since_ms`): the logs are whole files, and what
happened before the run is not the run's doing. Pure; any thread.

- `no_offline_partitions`: the controller never moved a partition to OfflinePartition
  (`partition_state_change` with target `OfflinePartition` and `partitions` > 0) and no
  election left a partition without a leader (`leader_election_failed`).
- `reassignment_completes`: every partition of `topics` (or of a topic beside one,
  `<topic>-<suffix>`) whose reassignment started during the run (`reassignment_started`)
  completed (`reassignment_completed` later), none failed (`reassignment_failed`; a
  failure by a controller whose successor then worked on the partition, a newer
  controller epoch starting or completing its reassignment, is that controller's lost
  term, and the successor must complete it), and
  at least one reassignment of those topics ran at all or was refused by the controller
  (`reassignment_rejected`: Kafka's controller refuses the reassignment of a topic
  queued for deletion, or onto a broker that is not registered, and the request ends
  there). A reassignment whose topic was deleted after it started ended with the topic
  (`topic_deletion_completed`): no topic is deleted while a partition of it is being
  reassigned, so by then its reassignment had completed (a controller may lose its
  session between the completion's writes and its event) or a new controller, finding
  the topic queued for deletion, dropped it.
- `topic_deletion_completes`: every topic of the run (one of `topics`, or a topic beside
  one, `<topic>-<suffix>`) whose deletion a controller queued during the run
  (`topic_deletion_requested`) was deleted (`topic_deletion_completed` later, by any
  controller), so neither a failover nor a replica that does not answer leaves it pending
  for good; one whose removal from ZooKeeper failed (`topic_deletion_failed`) and was
  never completed is named as left half-deleted. At least one deletion of such a topic
  must have been requested at all.

Both name a topic caught in Kafka 2.x's deletion-reassignment deadlock
(`rundir.invariants.deletion_deadlock`) as that: a correct controller stalls there as
Kafka's does, so when every violation is that deadlock the result is `allowed` (shown, not
failing), and otherwise the note counts the ones it explained. A `reassignment_failed`
of a partition the deadlock holds, never completed, is one of the stalled reassignment's
tries (a new partition whose replicas were all away has no state znode to bump, and
Kafka's controller, finding none, leaves the reassignment pending too).

The controller handover's (`paused_controller_resigns`, `resigned_controller_silent`,
`controller_writes_fenced`) are `rundir.invariants.controller_handover`'s.
"""

from __future__ import annotations

from collections.abc import Collection

from eventlog import (
    EventKind,
    ReassignmentCompleted,
    ReassignmentFailed,
    ReassignmentRejected,
    ReassignmentStarted,
    TopicDeletionCompleted,
    TopicDeletionFailed,
    TopicDeletionRequested,
)
from rundir.events import Event, EventLogs, events_since
from rundir.invariants.deletion_deadlock import EXPLANATION, deadlocked
from rundir.invariants.names import (
    NO_OFFLINE_PARTITIONS,
    REASSIGNMENT_COMPLETES,
    TOPIC_DELETION_COMPLETES,
)
from rundir.results import InvariantResult, Violation

__all__ = [
    "no_offline_partitions",
    "reassignment_completes",
    "topic_deletion_completes",
]

OFFLINE = "OfflinePartition"


def no_offline_partitions(
    logs: EventLogs, since_ms: int, topics: Collection[str] | None = None
) -> InvariantResult:
    """See the module docstring. With `topics`, only partitions of those topics count (a
    state change that names its topics, an election failure of such a partition); older
    logs whose state changes name no topics count whatever the topic."""
    violations = []
    checked = 0

    def ours(e: Event) -> bool:
        named = e.fields.get("topics") if e.kind == "partition_state_change" else None
        if topics is None or (e.kind == "partition_state_change" and named is None):
            return True
        wanted = set(named) if named is not None else {e.fields.get("topic")}
        return bool(wanted & set(topics))

    for e in events_since(logs, since_ms):
        if e.kind in ("partition_state_change", "leader_election_failed") and not ours(e):
            continue
        if e.kind == "partition_state_change":
            checked += 1
            if e.fields.get("target") == OFFLINE and int(e.fields.get("partitions", 0)) > 0:
                violations.append(
                    Violation(
                        f"{e.fields['partitions']} partition(s)",
                        f"the controller on {e.node} moved them to {OFFLINE}",
                        (e,),
                    )
                )
        elif e.kind == "leader_election_failed":
            checked += 1
            violations.append(
                Violation(
                    f"{e.fields.get('topic')}-{e.fields.get('partition')}",
                    f"no leader was elected: {e.fields.get('reason')}",
                    (e,),
                )
            )
    return InvariantResult(NO_OFFLINE_PARTITIONS, tuple(violations), checked)


#: The kinds `reassignment_completes` reads.
_REASSIGNMENT = (
    ReassignmentStarted,
    ReassignmentCompleted,
    ReassignmentFailed,
    ReassignmentRejected,
)


def reassignment_completes(
    logs: EventLogs, since_ms: int, topics: Collection[str]
) -> InvariantResult:
    """See the module docstring."""
    started: dict[tuple[str, int], Event] = {}
    done: set[tuple[str, int]] = set()
    refused: set[tuple[str, int]] = set()
    failed: list[tuple[tuple[str, int], int, Event, str]] = []
    handled_at: dict[tuple[str, int], int] = {}  # the newest controller epoch working on it
    violations = []
    events = events_since(logs, since_ms)
    explained = []
    for e in events:
        if e.kind == EventKind.TOPIC_DELETION_COMPLETED:
            gone = e.decoded()
            if isinstance(gone, TopicDeletionCompleted):
                done.update(key for key in started if key[0] == gone.topic)
            continue
        event = e.decoded() if e.kind.startswith("reassignment_") else None
        if not isinstance(event, _REASSIGNMENT) or not _ours(event.topic, topics):
            continue
        key = (event.topic, event.partition)
        if isinstance(event, ReassignmentStarted | ReassignmentCompleted):
            handled_at[key] = max(handled_at.get(key, -1), event.controller_epoch)
        if isinstance(event, ReassignmentStarted):
            started.setdefault(key, e)
        elif isinstance(event, ReassignmentCompleted):
            done.add(key)
        elif isinstance(event, ReassignmentRejected):
            refused.add(key)
        else:
            failed.append((key, event.controller_epoch, e, event.reason))
    unfinished = any(key not in done for key in started)
    stuck = deadlocked(events) if unfinished else frozenset()
    for key, epoch, e, reason in failed:
        if handled_at.get(key, -1) <= epoch:  # no newer controller took the partition over
            name = f"{key[0]}-{key[1]}"
            if key[0] in stuck and key not in done:  # a try of the deadlock's waiting
                explained.append(Violation(name, f"failed ({reason}): {EXPLANATION}", (e,)))
            else:
                violations.append(Violation(name, f"reassignment failed: {reason}", (e,)))
    for key, e in sorted(started.items()):
        if key not in done:
            subject = f"{key[0]}-{key[1]}"
            if key[0] in stuck:
                explained.append(Violation(subject, f"never completed: {EXPLANATION}", (e,)))
            else:
                violations.append(Violation(subject, "started and never completed", (e,)))
    if not started and not done and not refused and not violations:
        what = ", ".join(sorted(topics))
        violations.append(Violation(what, "no reassignment of these topics ran during the run"))
    checked = len(set(started) | done | refused)
    return _result(REASSIGNMENT_COMPLETES, violations, explained, checked)


def _result(
    name: str, violations: list[Violation], explained: list[Violation], checked: int
) -> InvariantResult:
    """The verdict, with the violations Kafka's deletion-reassignment deadlock explains
    allowed when they are all there is, and counted in the note otherwise."""
    if explained and not violations:
        note = f"{len(explained)} stall(s) of Kafka's deletion-reassignment deadlock"
        return InvariantResult(name, tuple(explained), checked, note=note, allowed=True)
    note = f"{len(explained)} more explained by Kafka's deletion-reassignment deadlock"
    return InvariantResult(name, tuple(violations), checked, note=note if explained else "")


def _ours(topic: object, topics: Collection[str]) -> bool:
    """`topic` is one of `topics` or a topic beside one, `<topic>-<suffix>`."""
    return isinstance(topic, str) and any(topic == t or topic.startswith(t + "-") for t in topics)


def topic_deletion_completes(
    logs: EventLogs, since_ms: int, topics: Collection[str]
) -> InvariantResult:
    """See the module docstring."""

    def ours(topic: object) -> bool:
        return _ours(topic, topics)

    requested: dict[str, Event] = {}
    failed: dict[str, tuple[Event, TopicDeletionFailed]] = {}
    done: set[str] = set()
    events = events_since(logs, since_ms)
    for e in events:
        event = e.decoded() if e.kind.startswith("topic_deletion_") else None
        if isinstance(event, TopicDeletionRequested):
            for topic in event.topics:
                if ours(topic):
                    requested.setdefault(topic, e)
        elif isinstance(event, TopicDeletionCompleted) and ours(event.topic):
            done.add(event.topic)
            failed.pop(event.topic, None)
        elif isinstance(event, TopicDeletionFailed) and ours(event.topic):
            failed[event.topic] = (e, event)
    pending = any(t not in done and t not in failed for t in requested)
    stuck = deadlocked(events) if pending else frozenset()
    violations, explained = [], []
    for topic, e in sorted(requested.items()):
        if topic in stuck and topic not in failed and topic not in done:
            explained.append(Violation(topic, f"never completed: {EXPLANATION}", (e,)))
        elif topic in failed:
            line, failure = failed[topic]
            what = ", ".join(sorted(failure.failed))
            violations.append(Violation(topic, f"left half-deleted: {what} not removed", (e, line)))
        elif topic not in done:
            violations.append(Violation(topic, "deletion requested and never completed", (e,)))
    if not requested and not violations:
        what = ", ".join(sorted(topics))
        violations.append(
            Violation(what, "the run asked for their deletion and no controller took it up")
        )
    return _result(TOPIC_DELETION_COMPLETES, violations, explained, len(requested))
