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

The same wait holds when the partition keeps its leader but the reassignment's
LeaderAndIsr reached its new replicas while that leader was away: a broker told to follow
a leader it cannot find does not follow it (Kafka's "cannot become follower since the new
leader is unavailable"), and when the leader comes back no election, so no new
LeaderAndIsr, tells the new replicas again.

`deadlocked(events)` returns the topics caught in it at the end of the run: topic T was
queued for deletion (`topic_deletion_requested`) and never deleted, its deletion was
halted for a reassignment in progress since (a later halt for a replica offline meanwhile
does not end the wait: the reassignment still blocks it once the replica is back), and a
partition of T whose reassignment started
and never completed either has no leader in the last fact the events give about its
leadership (a controller's ISR shrink that removed the leader, or a failed election,
after its last `leader_elected`), or had its last reassignment start
(`reassignment_started`, resumed or not) while the last leader elected for it was not
among the brokers the controller last counted live (`broker_change` `live`), with no
election of it since. Any one of those missing, and the stall is not this deadlock.
"""

from __future__ import annotations

from collections.abc import Iterable

from eventlog import (
    BrokerChange,
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
        "broker_change",
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
    halted: set[str] = set()
    reassigning: set[tuple[str, int]] = set()
    leaderless: dict[tuple[str, int], bool] = {}
    leaders: dict[tuple[str, int], int] = {}
    told_while_away: set[tuple[str, int]] = set()
    live: frozenset[int] | None = None
    for e in events:
        event = e.decoded() if e.kind in _KINDS else None
        if isinstance(event, BrokerChange):
            live = frozenset(event.live)
        elif isinstance(event, TopicDeletionRequested):
            queued.update(event.topics)
        elif isinstance(event, TopicDeletionIneligible):
            if event.reason == REASON_REASSIGNMENT:
                halted.add(event.topic)
        elif isinstance(event, TopicDeletionCompleted):
            queued.discard(event.topic)
            halted.discard(event.topic)
        elif isinstance(event, ReassignmentStarted):
            key = (event.topic, event.partition)
            reassigning.add(key)
            leader = leaders.get(key, -1)
            if live is not None and leader >= 0 and leader not in live:
                told_while_away.add(key)
            else:
                told_while_away.discard(key)
        elif isinstance(event, ReassignmentCompleted):
            reassigning.discard((event.topic, event.partition))
        elif isinstance(event, (LeaderElected, IsrChanged)):
            key = (event.topic, event.partition)
            leaderless[key] = event.leader < 0
            leaders[key] = event.leader
            if isinstance(event, LeaderElected):
                told_while_away.discard(key)
        elif isinstance(event, LeaderElectionFailed):
            leaderless[(event.topic, event.partition)] = True
    stuck = {t for t, p in reassigning if leaderless.get((t, p)) or (t, p) in told_while_away}
    return frozenset(queued & stuck & halted)
