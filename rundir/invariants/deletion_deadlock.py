"""The deadlock Kafka 2.x's controller has between a topic's deletion and a reassignment of
one of its partitions, recognised in a run's events so that `reassignment_completes` and
`topic_deletion_completes` name it as Kafka's behaviour instead of a fault of the
controller under test. Pure; any thread.

The mechanism (docs/bugs.md, "An alarm on the fixed build"): a partition under
reassignment loses its leader (its in-sync replicas are gone); then its topic is queued
for deletion. Deletion waits while a reassignment of the topic is in progress
(`topic_deletion_ineligible`, reason `"topic reassignment in progress"`); the reassignment
completes only when its new replicas join an ISR, which needs a leader; and the controller
elects no leader for a partition of a topic queued for deletion (Kafka's
`triggerOnlineStateChangeForPartitions` skips them, and so does this controller). Each
waits for the next, for good.

`deadlocked(events)` returns the topics caught in it at the end of the run: topic T was
queued for deletion (`topic_deletion_requested`) and never deleted, its deletion was last
halted for a reassignment in progress, and a partition of T whose reassignment started
and never completed has no leader in the last fact the events give about its leadership
(a controller's ISR shrink that removed the leader, or a failed election, after its last
`leader_elected`). Any one of those missing, and the stall is not this deadlock.
"""

from __future__ import annotations

from collections.abc import Iterable

from eventlog import (
    IsrChanged,
    LeaderElected,
    LeaderElectionFailed,
    ReassignmentCompleted,
    ReassignmentStarted,
    TopicDeletionCompleted,
    TopicDeletionIneligible,
    TopicDeletionRequested,
)
from rundir.events import Event

__all__ = ["EXPLANATION", "REASON_REASSIGNMENT", "deadlocked"]

#: The reason a controller gives for halting a deletion while its topic is reassigned.
REASON_REASSIGNMENT = "topic reassignment in progress"

#: How a violation this deadlock explains is described.
EXPLANATION = (
    "Kafka 2.x's deletion-reassignment deadlock: the topic's deletion waits for a "
    "reassignment whose partition has no leader, and no leader is elected for a topic "
    "queued for deletion (docs/bugs.md)"
)

_KINDS = frozenset(
    {
        "isr_changed",
        "leader_elected",
        "leader_election_failed",
        "reassignment_started",
        "reassignment_completed",
        "topic_deletion_requested",
        "topic_deletion_ineligible",
        "topic_deletion_completed",
    }
)


def deadlocked(events: Iterable[Event]) -> frozenset[str]:
    """The topics caught in the deadlock at the end of `events` (in time order); see the
    module docstring."""
    queued: set[str] = set()
    last_halt: dict[str, str] = {}
    reassigning: set[tuple[str, int]] = set()
    leaderless: dict[tuple[str, int], bool] = {}
    for e in events:
        event = e.decoded() if e.kind in _KINDS else None
        if isinstance(event, TopicDeletionRequested):
            queued.update(event.topics)
        elif isinstance(event, TopicDeletionIneligible):
            last_halt[event.topic] = event.reason
        elif isinstance(event, TopicDeletionCompleted):
            queued.discard(event.topic)
        elif isinstance(event, ReassignmentStarted):
            reassigning.add((event.topic, event.partition))
        elif isinstance(event, ReassignmentCompleted):
            reassigning.discard((event.topic, event.partition))
        elif isinstance(event, (LeaderElected, IsrChanged)):
            leaderless[(event.topic, event.partition)] = event.leader < 0
        elif isinstance(event, LeaderElectionFailed):
            leaderless[(event.topic, event.partition)] = True
    stuck = {topic for topic, partition in reassigning if leaderless.get((topic, partition))}
    return frozenset(
        topic for topic in queued & stuck if last_halt.get(topic) == REASON_REASSIGNMENT
    )
