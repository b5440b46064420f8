"""ZooKeeper access in Kafka's terms, over a kazoo session (Kafka's `KafkaZkClient`).

Callers never touch kazoo paths or JSON: they ask for brokers, the controller, epochs.
Reads of many znodes are pipelined (`pipelined_reads`); atomic writes use `transaction()`.
Methods block the calling thread; watch callbacks run on kazoo's event thread and must
only hand work off (enqueue), never block. Concerns with modules of their own take a
`KafkaZkClient`: `deletion`, `reassignment`, `admin_requests`, `isr_change_notifications`,
`log_dir_event_notifications`.
Controller election lives in `controller_election`; the client offers it as its own methods.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent, ZnodeStat

from domain import LeaderIsrAndControllerEpoch, TopicPartition
from zkdata import acls, paths
from zkdata.admin_znodes import (
    IsrChangeNotificationSequenceZNode,
    LogDirEventNotificationSequenceZNode,
    TopicConfigZNode,
)
from zkdata.controller_election import ControllerElectionZk, ControllerEpoch
from zkdata.errors import BrokerIdInUseError, TopicExistsError, ZnodeFormatError
from zkdata.fenced_writes import Create, FencedWriter, OpResult, SetData
from zkdata.model import Broker, BrokerInfo, ControllerRegistration, TopicAssignment, TopicConfig
from zkdata.pipelined_reads import Reads, read_many
from zkdata.state_fields import KeptStateFields
from zkdata.state_readers import StateReaders, read_states
from zkdata.znodes import BrokerIdZNode, TopicPartitionStateZNode, TopicZNode

WatchCallback = Callable[[WatchedEvent], None]


@dataclass(frozen=True, slots=True)
class BrokerListing:
    """Every registration under `/brokers/ids`, with the ones that failed to decode."""

    brokers: dict[int, Broker]
    malformed: dict[str, ZnodeFormatError]


def now_ms() -> int:
    """Wall-clock milliseconds, as Kafka stamps its znodes."""
    return int(time.time() * 1000)


class KafkaZkClient:
    """Domain operations on one kazoo session (the caller owns starting and stopping it)."""

    def __init__(self, kazoo: KazooClient) -> None:
        self._zk = kazoo
        self._fenced = FencedWriter(kazoo)
        self._kept = KeptStateFields(kazoo)
        self._election = ControllerElectionZk(kazoo, lambda: self.session_id)

    @property
    def kazoo(self) -> KazooClient:
        """The underlying session (for state listeners)."""
        return self._zk

    @property
    def session_id(self) -> int | None:
        """The current session id, or None before the first connection."""
        client_id = self._zk.client_id
        return int(client_id[0]) if client_id else None

    # -- set-up --------------------------------------------------------------------------

    def create_persistent_paths(self) -> None:
        """Create Kafka's top-level persistent znodes if they are missing, each with the ACL
        Kafka gives it (`zkdata.acls`; open unless the session is secure). A secure session
        first closes the top of its tree (chroot or `/`) to writes by anyone, so that
        nobody without the credentials can delete `/controller` or create top-level znodes."""
        secure = acls.secure_session(self._zk)
        if secure:
            current, _ = self._zk.retry(self._zk.get_acls, paths.ROOT)
            if acls.writable_by_anyone(current):
                self._zk.retry(self._zk.set_acls, paths.ROOT, acls.kafka_acls(paths.ROOT, True))
        for path in paths.PERSISTENT_PATHS:
            self._zk.retry(self._zk.ensure_path, path, acls.kafka_acls(path, secure))

    # -- brokers -------------------------------------------------------------------------

    def register_broker(self, info: BrokerInfo, check_owner: bool = True) -> int:
        """Create the ephemeral `/brokers/ids/N` and return the broker epoch (its czxid).

        A node that already exists and is owned by this very session counts as success (the
        response of an earlier attempt was lost). Owned by another session:
        `BrokerIdInUseError`. Without `check_owner` any existing node is
        `BrokerIdInUseError`, this session's own too (KAFKA-1387's broker).
        """
        path = BrokerIdZNode.path(info.id)
        data = BrokerIdZNode.encode(info)
        try:
            self._zk.retry(self._zk.create, path, data, ephemeral=True, makepath=True)
        except NodeExistsError:
            if not check_owner:
                raise BrokerIdInUseError(f"{path} already exists") from None
        try:
            _, stat = self._zk.retry(self._zk.get, path)
        except NoNodeError:
            raise BrokerIdInUseError(f"{path} vanished right after it was created") from None
        if stat.ephemeralOwner != self.session_id:
            raise BrokerIdInUseError(
                f"broker id {info.id} is registered by another session "
                f"(0x{stat.ephemeralOwner:x}); is another broker running with this id?"
            )
        return int(stat.czxid)

    def get_broker(self, broker_id: int) -> Broker | None:
        """One registration with its epoch, or None if not registered."""
        try:
            data, stat = self._zk.retry(self._zk.get, BrokerIdZNode.path(broker_id))
        except NoNodeError:
            return None
        return Broker(BrokerIdZNode.decode(broker_id, data), int(stat.czxid))

    def get_all_brokers(self) -> BrokerListing:
        """All registrations, read pipelined; malformed ones are reported, not raised."""
        try:
            children = self._zk.retry(self._zk.get_children, paths.BROKER_IDS)
        except NoNodeError:
            return BrokerListing({}, {})  # no broker has ever started here
        pending = [(name, self._zk.get_async(paths.broker_id_child(name))) for name in children]
        brokers: dict[int, Broker] = {}
        malformed: dict[str, ZnodeFormatError] = {}
        for name, result in pending:
            try:
                data, stat = result.get()
            except NoNodeError:
                continue  # went away between the listing and the read
            if not (name.isascii() and name.isdigit()):
                malformed[name] = ZnodeFormatError(
                    "broker id is not an integer", paths.broker_id_child(name)
                )
                continue
            try:
                info = BrokerIdZNode.decode(int(name), data)
            except ZnodeFormatError as exc:
                malformed[name] = ZnodeFormatError(exc.reason, paths.broker_id_child(name))
                continue
            brokers[info.id] = Broker(info, int(stat.czxid))
        return BrokerListing(brokers, malformed)

    # -- controller (`controller_election`) ------------------------------------------------

    def get_controller(self) -> tuple[ControllerRegistration, ZnodeStat] | None:
        """The content and Stat of `/controller`, or None when there is no controller;
        `ZnodeFormatError` when it does not decode."""
        return self._election.get_controller()

    def get_controller_id(self) -> int | None:
        """The active controller's broker id, or None."""
        found = self.get_controller()
        return found[0].broker_id if found else None

    def get_controller_epoch(self) -> ControllerEpoch | None:
        """`/controller_epoch` and its zkVersion, or None if never written."""
        return self._election.get_controller_epoch()

    def register_controller_and_increment_epoch(self, controller_id: int) -> ControllerEpoch:
        """Try to become controller, registered as of now, in one epoch-incrementing multi;
        returns the new epoch or raises `ControllerMovedError`
        (`ControllerElectionZk.register_controller_and_increment_epoch`)."""
        registration = ControllerRegistration(controller_id, now_ms())
        return self._election.register_controller_and_increment_epoch(registration)

    def delete_controller_if_owned(self) -> None:
        """Remove `/controller` if this session holds it (after a failed epoch check)."""
        self._election.delete_controller_if_owned()

    # -- topics and partitions ---------------------------------------------------------

    def get_all_topics(self, watch: WatchCallback | None = None) -> set[str]:
        """Children of `/brokers/topics`, optionally arming a child watch."""
        if watch is not None:
            self._zk.retry(self._zk.ensure_path, paths.BROKER_TOPICS)
        try:
            return set(self._zk.retry(self._zk.get_children, paths.BROKER_TOPICS, watch=watch))
        except NoNodeError:
            return set()

    def get_topic_assignments(
        self, topics: Iterable[str], watch_of: Callable[[str], WatchCallback] | None = None
    ) -> Reads[str, TopicAssignment]:
        """The replica assignments of `topics`, read pipelined; `watch_of(topic)` arms a
        data watch on each topic znode read (new partitions, Kafka's PartitionModifications)."""
        return read_many(
            self._zk, topics, paths.topic, lambda data, _: TopicZNode.decode(data), watch_of
        )

    def topics_in_creation_order(self, topics: Iterable[str]) -> list[str]:
        """`topics` ordered by when their `/brokers/topics/T` was created (czxid), read
        pipelined; topics whose znode is gone are left out."""
        pending = [(t, self._zk.exists_async(paths.topic(t))) for t in topics]
        found = [(stat.czxid, t) for t, result in pending if (stat := result.get()) is not None]
        return [t for _, t in sorted(found)]

    def get_topic_configs(self, topics: Iterable[str]) -> Reads[str, TopicConfig]:
        """Per-topic config overrides (`/config/topics/T`), read pipelined."""
        return read_many(
            self._zk, topics, paths.topic_config, lambda data, _: TopicConfigZNode.decode(data)
        )

    def get_partition_states(
        self, partitions: Iterable[TopicPartition], readers: StateReaders | None = None
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Leader, ISR and epochs of `partitions` with their zkVersions, read pipelined
        (with `readers`, a large read by helper processes as well). Fields the project does
        not use are remembered for the next write."""
        reads = (
            read_states(self._zk, partitions)
            if readers is None
            else readers.read(list(partitions), functools.partial(read_states, self._zk))
        )
        for tp, (state, unknown) in reads.found.items():
            self._kept.saw(_state_path(tp), state.leader_and_isr.zk_version, unknown)
        return Reads({tp: found[0] for tp, found in reads.found.items()}, reads.malformed)

    def create_topic(
        self, topic: str, assignment: TopicAssignment, config: TopicConfig | None = None
    ) -> None:
        """Write a new topic as Kafka's admin tools do: its config (if any) then its
        assignment znode. Raises `TopicExistsError` if the topic exists."""
        if config is not None and config.config:
            data = TopicConfigZNode.encode(config)
            try:
                self._zk.retry(self._zk.create, paths.topic_config(topic), data, makepath=True)
            except NodeExistsError:
                self._zk.retry(self._zk.set, paths.topic_config(topic), data)
        try:
            self._zk.retry(
                self._zk.create, paths.topic(topic), TopicZNode.encode(assignment), makepath=True
            )
        except NodeExistsError:
            raise TopicExistsError(f"Topic '{topic}' already exists.") from None

    def create_partition_states(
        self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Create the state znodes of new partitions, epoch-fenced and batched.

        The empty parents (`.../partitions`, `.../partitions/P`) are created first, in
        fenced multis as well (a multi whose parent exists is redone one create at a time);
        an existing parent is fine. An existing state znode is reported as
        `NodeExistsError` for that partition.
        """
        parents = sorted({paths.topic_partitions(tp.topic) for tp in states})
        parents += [paths.topic_partition(tp.topic, tp.partition) for tp in states]
        for result in self._fenced.write([Create(p, b"") for p in parents], epoch_zk_version):
            if isinstance(result, Exception) and not isinstance(result, NodeExistsError):
                raise result
        order = list(states)
        ops = [
            Create(
                paths.partition_state(tp.topic, tp.partition),
                TopicPartitionStateZNode.encode(states[tp]),
            )
            for tp in order
        ]
        return dict(zip(order, self._fenced.write(ops, epoch_zk_version), strict=True))

    def update_leader_and_isr(
        self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Write new leaderships, each conditional on the zkVersion it carries, all
        epoch-fenced. A result is the new zkVersion, or `BadVersionError` (someone else
        wrote the partition: re-read and re-decide) or another kazoo error."""
        order = list(states)
        at = [_state_path(tp) for tp in order]
        versions = [states[tp].leader_and_isr.zk_version for tp in order]
        kept = self._kept.for_writes(dict(zip(at, versions, strict=True)))
        encode = TopicPartitionStateZNode.encode
        ops = [
            SetData(path, encode(states[tp], kept[path]), version)
            for tp, path, version in zip(order, at, versions, strict=True)
        ]
        outcomes = self._fenced.write(ops, epoch_zk_version)
        self._kept.after_writes(
            (path, _written_version(outcome), kept[path])
            for path, outcome in zip(at, outcomes, strict=True)
        )
        return dict(zip(order, outcomes, strict=True))

    # -- ISR changes by partition leaders (the broker's `IsrChangeSink`) -----------------

    def update_partition_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> int | None:
        """A leader writes its new ISR: conditional on `expected_version`; returns the new
        zkVersion, or None when the znode changed (BADVERSION) or vanished meanwhile. Fields
        of the replaced version that the project does not use are kept."""
        path = _state_path(tp)
        kept = self._kept.for_writes({path: expected_version})[path]
        try:
            stat = self._zk.retry(
                self._zk.set,
                path,
                TopicPartitionStateZNode.encode(state, kept),
                version=expected_version,
            )
        except (BadVersionError, NoNodeError):  # changed or deleted meanwhile
            self._kept.forget([path])
            return None
        self._kept.saw(path, int(stat.version), kept)
        return int(stat.version)

    def create_isr_change_notification(self, partitions: Iterable[TopicPartition]) -> str:
        """Record partitions whose ISR changed, for the controller; returns the new node.
        The controller reads and removes them with `zkdata.isr_change_notifications`."""
        data = IsrChangeNotificationSequenceZNode.encode(tuple(sorted(partitions)))
        path: str = self._zk.retry(
            self._zk.create,
            IsrChangeNotificationSequenceZNode.path_prefix(),
            data,
            sequence=True,
            makepath=True,
        )
        return path

    def propagate_log_dir_event(self, broker_id: int) -> str:
        """Kafka's `propagateLogDirEvent`: record that `broker_id` lost a log directory,
        for the controller, as a persistent sequential node; returns its path. The
        controller reads and removes them with `zkdata.log_dir_event_notifications`."""
        path: str = self._zk.retry(
            self._zk.create,
            LogDirEventNotificationSequenceZNode.path_prefix(),
            LogDirEventNotificationSequenceZNode.encode(broker_id),
            sequence=True,
            makepath=True,
        )
        return path

    # -- watches -------------------------------------------------------------------------

    def watch_exists(self, path: str, callback: WatchCallback) -> bool:
        """Arm a one-shot exists-watch on `path`; return whether the node exists now."""
        return self._zk.retry(self._zk.exists, path, watch=callback) is not None

    def watch_children(self, path: str, callback: WatchCallback | None) -> list[str]:
        """Arm a one-shot child watch on `path` (created if missing; no watch when
        `callback` is None); return the children."""
        self._zk.retry(self._zk.ensure_path, path)
        return list(self._zk.retry(self._zk.get_children, path, watch=callback))


def _state_path(tp: TopicPartition) -> str:
    return paths.partition_state(tp.topic, tp.partition)


def _written_version(result: object) -> int | None:
    """The zkVersion a write's result names, or None when the write failed."""
    if isinstance(result, int) and not isinstance(result, bool):
        return result
    return None
