"""Admin work an earlier run left in flight on a cluster: partitions being reassigned (a
request under `/admin/reassign_partitions`, or a topic znode still naming replicas being
added or removed), topics queued for deletion under `/admin/delete_topics`, and a
preferred-replica election request. A run starts only once there is none
(`chaos.run.setup.check_no_leftovers`): the run's invariants judge the reassignments and
deletions it issues itself, and Kafka 2.x runs one reassignment request at a time.

`find_leftovers` reads them (any thread, on the caller's ZooKeeper session);
`wipe_leftovers` removes them from a cluster whose brokers are all stopped
(`chaos.hunt.tidy`, the hunt's own projects only): the requests, and every topic they
name, whole.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from kazoo.exceptions import NoNodeError

from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.deletion import TopicDeletionZk
from zkdata.errors import ZkDataError
from zkdata.reassignment import ReassignmentZk

__all__ = ["Leftovers", "find_leftovers", "wipe_leftovers"]

#: How many partitions `Leftovers.describe` names before counting the rest.
_NAMED = 6


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What is in flight: partitions being reassigned (`topic-partition`, sorted), topics
    queued for deletion (sorted), whether a preferred election is requested, and the
    znodes that could not be read (path: why)."""

    reassigning: tuple[str, ...] = ()
    deleting: tuple[str, ...] = ()
    electing: bool = False
    unreadable: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.reassigning or self.deleting or self.electing or self.unreadable)

    @property
    def topics(self) -> tuple[str, ...]:
        """Every topic named, sorted."""
        moved = {p.rsplit("-", 1)[0] for p in self.reassigning}
        return tuple(sorted(moved | set(self.deleting)))

    def describe(self) -> str:
        """One line naming what is in flight."""
        parts = []
        if self.reassigning:
            named = ", ".join(self.reassigning[:_NAMED])
            more = len(self.reassigning) - _NAMED
            parts.append(f"reassigning {named}" + (f" and {more} more" if more > 0 else ""))
        if self.deleting:
            parts.append(f"deleting topics {', '.join(self.deleting)}")
        if self.electing:
            parts.append("a preferred-replica election requested")
        parts.extend(f"unreadable {u}" for u in self.unreadable)
        return "; ".join(parts) or "nothing"


def find_leftovers(zk: KafkaZkClient) -> Leftovers:
    """What admin work is in flight on `zk`'s cluster now."""
    reassigning: set[str] = set()
    unreadable: list[str] = []
    try:
        requested = ReassignmentZk(zk).get_reassignments() or ()
    except ZkDataError as exc:
        unreadable.append(f"{paths.REASSIGN_PARTITIONS}: {exc}")
        requested = ()
    reassigning.update(
        f"{r.topic_partition.topic}-{r.topic_partition.partition}" for r in requested
    )
    topics = sorted(zk.get_all_topics())
    reads = zk.get_topic_assignments(topics)
    for topic in topics:
        found = reads.found.get(topic)
        if found is None:
            continue
        reassigning.update(
            f"{topic}-{p}" for p, a in found.partitions.items() if a.is_being_reassigned
        )
    for topic, error in reads.malformed.items():
        unreadable.append(f"{paths.topic(topic)}: {error.reason}")
    return Leftovers(
        tuple(sorted(reassigning)),
        tuple(sorted(TopicDeletionZk(zk).get_topic_deletions())),
        zk.kazoo.retry(zk.kazoo.exists, paths.PREFERRED_REPLICA_ELECTION) is not None,
        tuple(unreadable),
    )


def wipe_leftovers(zk: KafkaZkClient, leftovers: Leftovers) -> None:
    """Remove the requests and every topic `leftovers` names (its partitions' states, its
    config, its deletion request). Only while no broker runs: a live controller would
    meet topics vanishing under it. Idempotent."""
    doomed = [paths.REASSIGN_PARTITIONS, paths.PREFERRED_REPLICA_ELECTION]
    for topic in leftovers.topics:
        doomed += [paths.topic(topic), paths.topic_config(topic), paths.delete_topic(topic)]
    for path in doomed:
        with contextlib.suppress(NoNodeError):
            zk.kazoo.retry(zk.kazoo.delete, path, recursive=True)
