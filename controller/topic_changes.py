"""`TopicChanges`: what the active controller does when topics are created or vanish
(Kafka's TopicChange), when partitions are added to a topic (PartitionModifications) and
when a topic's config overrides change (TopicUncleanLeaderElectionEnable), and how it
loads topics into the context, at failover and for new topics.

New partitions go New -> Online with their replicas (Kafka's `onNewPartitionCreation`).
Partitions added to a topic queued for deletion are not created: the topic znode is
written back to the assignment the controller knows (Kafka's
`restorePartitionReplicaAssignment`). A topic whose name collides with an existing one's
('.' read as '_'), written by a tool that skipped the check, is not created: it is logged
with Kafka's message and the other topic is left alone. Event thread only; the watches
armed here run on kazoo's thread and only enqueue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kazoo.protocol.states import WatchedEvent

from admin import colliding_candidates, refused_topics
from controller import events as ev
from controller.context import ControllerContext
from controller.election_strategies import OfflineElection
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.states import PartitionState, ReplicaState
from controller.watchers import Watchers
from domain import TopicPartition
from eventlog import EventLog, MalformedZnode, PartitionsAdded, TopicChange
from zkdata.client import KafkaZkClient
from zkdata.errors import ZnodeFormatError
from zkdata.reassignment import ReassignmentZk

_log = logging.getLogger(__name__)


class TopicChanges:
    """Topic creation, added partitions and topic config changes, for the active
    controller."""

    def __init__(
        self,
        context: ControllerContext,
        zk: KafkaZkClient,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        event_log: EventLog,
        watchers: Watchers,
        unclean_default: bool,
        assignments: ReassignmentZk,
    ) -> None:
        self._ctx = context
        self._zk = zk
        self._assignments = assignments
        self._partitions = partitions
        self._replicas = replicas
        self._events = event_log
        self._watchers = watchers
        self._unclean_default = unclean_default

    def arm_topic_watch(self) -> None:
        """Failover, before anything is read: arm the `/brokers/topics` child watch."""
        self._arm_topic_watch()

    def load_all_topics(self) -> None:
        """Failover: list the topics (re-arming the `/brokers/topics` child watch) and load
        every topic's assignment and config into the context, leaving out topics whose
        names collide with an older one's."""
        topics = self._arm_topic_watch()
        self._load_topics(topics - self._refused(topics, set()).keys())

    def process_topic_change(self) -> None:
        """New topics get their partitions created and brought online; vanished topics are
        forgotten."""
        topics = self._arm_topic_watch()
        known = self._ctx.all_topics()
        deleted = known - topics
        for topic in sorted(deleted):
            self._ctx.remove_topic(topic)
        refused = self._refused(topics - known, known - deleted)
        added = self._load_topics(topics - known - refused.keys())
        self._events.emit(TopicChange(added=added, removed=sorted(deleted), refused=refused))
        new_partitions = [tp for topic in added for tp in self._ctx.partitions_of(topic)]
        if new_partitions:
            self.on_new_partition_creation(new_partitions)

    def process_partition_modifications(self, topic: str) -> None:
        """`/brokers/topics/T` changed (Kafka's PartitionModifications): re-arm its watch;
        partitions it lists that the context lacks are created and brought online, unless
        the topic is being deleted."""
        if topic not in self._ctx.all_topics():
            return  # deleted, or never loaded: nothing is watched any more
        reads = self._zk.get_topic_assignments([topic], self._partition_watch)
        for error in reads.malformed.values():
            self._malformed(error.path, error.reason)
        found = reads.found.get(topic)
        if found is None:
            return
        known = {tp.partition for tp in self._ctx.partitions_of(topic)}
        added = {p: a for p, a in sorted(found.partitions.items()) if p not in known}
        if not added:
            return
        deleting = self._ctx.is_topic_queued_for_deletion(topic)
        restored = deleting and self._restore_assignment(topic)
        self._events.emit(
            PartitionsAdded(
                topic=topic,
                partitions=sorted(added),
                created=not deleting,
                restored=restored,
                controller_epoch=self._ctx.epoch,
            ),
        )
        if deleting:
            return  # as Kafka does: no partition is added to a topic being deleted
        for partition, assignment in added.items():
            self._ctx.set_assignment(TopicPartition(topic, partition), assignment)
        self.on_new_partition_creation([TopicPartition(topic, p) for p in added])

    def _restore_assignment(self, topic: str) -> bool:
        """Write the topic's assignment as the controller knows it back to
        `/brokers/topics/T` (fenced), undoing partitions added while it is being deleted;
        whether it was written. Kafka's `restorePartitionReplicaAssignment`."""
        known = {tp.partition: self._ctx.assignment(tp) for tp in self._ctx.partitions_of(topic)}
        try:
            return self._assignments.restore_topic_assignment(
                topic, known, self._ctx.epoch_zk_version
            )
        except ZnodeFormatError as exc:
            self._malformed(exc.path, exc.reason)
            return False

    def process_topic_config_change(self, topic: str) -> None:
        """Reload a topic's overrides; when unclean leader election is now enabled for it,
        elect leaders for its offline partitions."""
        if topic not in self._ctx.all_topics():
            return
        configs = self._zk.get_topic_configs([topic])
        for error in configs.malformed.values():
            self._malformed(error.path, error.reason)
            return
        found = configs.found.get(topic)
        self._ctx.set_topic_config(topic, dict(found.config) if found else {})
        if self._ctx.unclean_enabled(topic, self._unclean_default):
            self._partitions.trigger_online_partition_state_change(topic)

    def on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        """New -> Online for partitions and their replicas (Kafka's onNewPartitionCreation)."""
        replicas = self._ctx.replicas_for_partitions(partitions)
        self._partitions.handle_state_changes(partitions, PartitionState.NEW)
        self._replicas.handle_state_changes(replicas, ReplicaState.NEW)
        self._partitions.handle_state_changes(partitions, PartitionState.ONLINE, OfflineElection())
        self._replicas.handle_state_changes(replicas, ReplicaState.ONLINE)

    def _refused(self, candidates: set[str], known: set[str]) -> dict[str, str]:
        """The `candidates` not to create because their names collide with a `known`
        topic's or with an earlier-created candidate's: topic -> Kafka's message. Only the
        colliding names are read (for their creation order)."""
        clashing = colliding_candidates(candidates, known)
        if not clashing:
            return {}
        order = self._zk.topics_in_creation_order(sorted(clashing))
        refused = refused_topics(order, known | (candidates - clashing))
        for topic, reason in sorted(refused.items()):
            _log.warning("Topic %s is not created: %s", topic, reason)
        return refused

    def _arm_topic_watch(self) -> set[str]:
        return self._zk.get_all_topics(watch=self._watchers(ev.TopicChange()))

    def _partition_watch(self, topic: str) -> Callable[[WatchedEvent], None]:
        return self._watchers(ev.PartitionModifications(topic))

    def _load_topics(self, topics: set[str]) -> list[str]:
        """Read the assignments and configs of `topics` into the context; return the ones
        that loaded (malformed ones are reported and skipped)."""
        reads = self._zk.get_topic_assignments(sorted(topics), self._partition_watch)
        for error in reads.malformed.values():
            self._malformed(error.path, error.reason)
        configs = self._zk.get_topic_configs(sorted(reads.found))
        for error in configs.malformed.values():
            self._malformed(error.path, error.reason)
        for topic, assignment in sorted(reads.found.items()):
            self._ctx.add_topic(topic, assignment.partitions)
            self._ctx.set_topic_config(
                topic, configs.found[topic].config if topic in configs.found else {}
            )
        return sorted(reads.found)

    def _malformed(self, path: str | None, reason: str) -> None:
        self._events.emit(MalformedZnode(path=path, reason=reason))
