"""ZooKeeper doubles for unit tests of the controller: the state znodes the state machines
write through and the znodes topic deletion removes (STYLE rule 13).

- `FakePartitionZk` is the `PartitionZk` the state machines write through: state znodes in
  a dict, the same results `KafkaZkClient` returns, epoch fencing, and hooks to inject a
  concurrent write or a failure. Every call is recorded as a `ZkCall`.
- `FakeDeletionZk` is the `DeletionZk` of `controller.topic_deletion`: topic, config and
  deletion-request znodes as sets, with epoch fencing and injected removal failures. Every
  write is recorded as a `DeletionCall`.

Not thread-safe: only the thread that plays the controller event thread (in unit tests,
the test's own thread) may use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from zkdata import paths
from zkdata.errors import ControllerMovedError, ZnodeFormatError
from zkdata.fenced_writes import ANY_EPOCH_VERSION, NewVersion, OpResult
from zkdata.pipelined_reads import Reads
from zkdata.znodes import TopicPartitionStateZNode

__all__ = ["DeletionCall", "FakeDeletionZk", "FakePartitionZk", "ZkCall"]

ZkMethod = Literal["get_partition_states", "create_partition_states", "update_leader_and_isr"]


def _check_epoch(stored: int, given: int) -> None:
    """Raise `ControllerMovedError` unless a write's fencing zkVersion is the stored one or
    ZooKeeper's any-version (-1), as the check op of a real multi does."""
    if given not in (stored, ANY_EPOCH_VERSION):
        raise ControllerMovedError(
            f"/controller_epoch is at zkVersion {stored}, "
            f"not {given}: another controller was elected"
        )


@dataclass(frozen=True, slots=True)
class ZkCall:
    """One call made to a `FakePartitionZk`: the method, the partitions asked for (in the
    caller's order), the states written and the fencing zkVersion (None for reads)."""

    method: ZkMethod
    partitions: tuple[TopicPartition, ...]
    states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    epoch_zk_version: int | None = None


@dataclass(slots=True)
class _StateZnode:
    state: LeaderIsrAndControllerEpoch | None  # None: the bytes do not decode
    version: int
    malformed_reason: str = ""


class FakePartitionZk:
    """An in-memory `PartitionZk` (see `controller.partition_state_machine`).

    State znodes are kept as decoded values with a zkVersion. Results match
    `KafkaZkClient`: a create answers the znode's path or a `NodeExistsError` instance per
    partition; an update answers the new zkVersion or a `BadVersionError` (the zkVersion
    carried in `leader_and_isr.zk_version` is not the stored one) or `NoNodeError`
    instance; a new zkVersion is a `NewVersion` whose `zxid` counts this fake's successful
    updates from `first_zxid` up, as ZooKeeper's transaction ids grow. Both writes raise
    `ControllerMovedError`, writing nothing, when their `epoch_zk_version` differs from
    the `epoch_zk_version` attribute (the version of `/controller_epoch` in this fake
    ZooKeeper). Every call is appended to `calls`.
    `kazoo` is None: an `ActiveController` built over this fake hands it to the clients of
    reassignment and deletion, which a test using it must not call.
    """

    kazoo = None

    def __init__(self, epoch_zk_version: int = 0, first_zxid: int = 0x100) -> None:
        self.epoch_zk_version = epoch_zk_version
        self._next_zxid = first_zxid
        self.calls: list[ZkCall] = []
        self._znodes: dict[TopicPartition, _StateZnode] = {}
        self._concurrent: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self._update_failures: dict[TopicPartition, Exception] = {}

    # -- set-up and inspection by tests ----------------------------------------------------

    def put_state(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, zk_version: int = 0
    ) -> None:
        """Store a state znode at `zk_version` (the `zk_version` inside `state` is ignored)."""
        self._znodes[tp] = _StateZnode(_with_version(state, zk_version), zk_version)

    def put_malformed(
        self, tp: TopicPartition, reason: str = "not JSON", zk_version: int = 0
    ) -> None:
        """Store a state znode whose bytes do not decode."""
        self._znodes[tp] = _StateZnode(None, zk_version, reason)

    def put_bytes(self, tp: TopicPartition, data: bytes, zk_version: int = 0) -> None:
        """Store a state znode as ZooKeeper would hold it: `data` goes through the real
        codec (`TopicPartitionStateZNode`), so it reads back decoded or malformed."""
        try:
            state = TopicPartitionStateZNode.decode(data, zk_version)
        except ZnodeFormatError as exc:
            self._znodes[tp] = _StateZnode(None, zk_version, exc.reason)
        else:
            self._znodes[tp] = _StateZnode(state, zk_version)

    def delete_state(self, tp: TopicPartition) -> None:
        """Remove a state znode (as topic deletion would)."""
        self._znodes.pop(tp, None)

    def state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """The stored state, with its zkVersion in `leader_and_isr.zk_version` (None when
        missing or malformed)."""
        znode = self._znodes.get(tp)
        return znode.state if znode is not None else None

    def zk_version(self, tp: TopicPartition) -> int | None:
        """The stored znode's zkVersion (None when missing)."""
        znode = self._znodes.get(tp)
        return znode.version if znode is not None else None

    def bump_version_once(self, tp: TopicPartition, new_state: LeaderIsrAndControllerEpoch) -> None:
        """Inject a concurrent write: right before the next `update_leader_and_isr` call
        (whatever it writes), `new_state` is stored at the next zkVersion, as a partition
        leader shrinking its ISR would. An update that carries the old version then gets
        `BadVersionError`."""
        self._concurrent[tp] = new_state

    def fail_next_update(self, tp: TopicPartition, error: Exception) -> None:
        """Answer `error` for `tp` in the next update that writes it (nothing is stored)."""
        self._update_failures[tp] = error

    def methods(self) -> list[ZkMethod]:
        """The methods called, in order."""
        return [call.method for call in self.calls]

    def calls_to(self, method: ZkMethod) -> list[ZkCall]:
        """The calls made to `method`, in order."""
        return [call for call in self.calls if call.method == method]

    # -- PartitionZk ---------------------------------------------------------------------------

    def get_partition_states(
        self, partitions: Iterable[TopicPartition], readers: object = None
    ) -> Reads[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Stored states of `partitions`; missing ones appear in neither map (`readers`,
        the real client's helper processes, are not used)."""
        asked = tuple(partitions)
        self.calls.append(ZkCall("get_partition_states", asked))
        found: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        malformed: dict[TopicPartition, ZnodeFormatError] = {}
        for tp in asked:
            znode = self._znodes.get(tp)
            if znode is None:
                continue
            if znode.state is None:
                path = paths.partition_state(tp.topic, tp.partition)
                malformed[tp] = ZnodeFormatError(znode.malformed_reason, path)
            else:
                found[tp] = znode.state
        return Reads(found, malformed)

    def create_partition_states(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Create state znodes at zkVersion 0: the path, or `NodeExistsError()`."""
        self.calls.append(
            ZkCall("create_partition_states", tuple(states), dict(states), epoch_zk_version)
        )
        self._check_epoch(epoch_zk_version)
        results: dict[TopicPartition, OpResult] = {}
        for tp, state in states.items():
            if tp in self._znodes:
                results[tp] = NodeExistsError()
                continue
            self._znodes[tp] = _StateZnode(_with_version(state, 0), 0)
            results[tp] = paths.partition_state(tp.topic, tp.partition)
        return results

    def update_leader_and_isr(
        self, states: dict[TopicPartition, LeaderIsrAndControllerEpoch], epoch_zk_version: int
    ) -> dict[TopicPartition, OpResult]:
        """Conditional sets: the new zkVersion, `BadVersionError()` or `NoNodeError()`."""
        self.calls.append(
            ZkCall("update_leader_and_isr", tuple(states), dict(states), epoch_zk_version)
        )
        self._apply_concurrent_writes()
        self._check_epoch(epoch_zk_version)
        results: dict[TopicPartition, OpResult] = {}
        for tp, state in states.items():
            injected = self._update_failures.pop(tp, None)
            znode = self._znodes.get(tp)
            if injected is not None:
                results[tp] = injected
            elif znode is None:
                results[tp] = NoNodeError()
            elif znode.version != state.leader_and_isr.zk_version:
                results[tp] = BadVersionError()
            else:
                version = znode.version + 1
                self._znodes[tp] = _StateZnode(_with_version(state, version), version)
                results[tp] = NewVersion(version, self._next_zxid)
                self._next_zxid += 1
        return results

    def _apply_concurrent_writes(self) -> None:
        for tp, state in self._concurrent.items():
            znode = self._znodes.get(tp)
            version = 0 if znode is None else znode.version + 1
            self._znodes[tp] = _StateZnode(_with_version(state, version), version)
        self._concurrent.clear()

    def _check_epoch(self, epoch_zk_version: int) -> None:
        _check_epoch(self.epoch_zk_version, epoch_zk_version)


def _with_version(state: LeaderIsrAndControllerEpoch, version: int) -> LeaderIsrAndControllerEpoch:
    lai = state.leader_and_isr
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(lai.leader, lai.leader_epoch, lai.isr, version), state.controller_epoch
    )


@dataclass(frozen=True, slots=True)
class DeletionCall:
    """One write made to a `FakeDeletionZk`: the method, the topics and the fencing
    zkVersion."""

    method: Literal["delete_topic_deletions", "delete_topic"]
    topics: tuple[str, ...]
    epoch_zk_version: int


class FakeDeletionZk:
    """An in-memory `controller.topic_deletion.DeletionZk` (`zkdata.deletion.TopicDeletionZk`).

    `topics` holds the topics whose `/brokers/topics/T` exists, `configs` those with a
    `/config/topics/T`, `requests` the children of `/admin/delete_topics`. Results match
    the real client: one per path written, True or a kazoo error instance; only existing
    znodes are written. Both writes raise `ControllerMovedError`, writing nothing, when
    their `epoch_zk_version` differs from the `epoch_zk_version` attribute. Every write
    is appended to `calls`. Not thread-safe: the thread playing the event thread only.
    """

    def __init__(
        self,
        epoch_zk_version: int = 0,
        topics: Iterable[str] = (),
        requests: Iterable[str] = (),
        configs: Iterable[str] = (),
    ) -> None:
        self.epoch_zk_version = epoch_zk_version
        self.topics = set(topics)
        self.requests = set(requests)
        self.configs = set(configs)
        self.calls: list[DeletionCall] = []
        self._failures: dict[str, Exception] = {}

    def fail_next_removal(self, path: str, error: Exception) -> None:
        """Answer `error` for `path` in the next `delete_topic` that writes it (the znode
        stays)."""
        self._failures[path] = error

    def delete_topic_deletions(
        self, topics: Iterable[str], epoch_zk_version: int
    ) -> dict[str, OpResult]:
        """Remove requests: True, or `NoNodeError()` for a request that is not there."""
        order = tuple(topics)
        self.calls.append(DeletionCall("delete_topic_deletions", order, epoch_zk_version))
        self._check_epoch(epoch_zk_version)
        results: dict[str, OpResult] = {}
        for topic in order:
            results[topic] = True if topic in self.requests else NoNodeError()
            self.requests.discard(topic)
        return results

    def delete_topic(self, topic: str, epoch_zk_version: int) -> dict[str, OpResult]:
        """Remove the topic's znodes that exist; per path True or the injected error."""
        self.calls.append(DeletionCall("delete_topic", (topic,), epoch_zk_version))
        self._check_epoch(epoch_zk_version)
        present = [
            (paths.topic(topic), self.topics),
            (paths.topic_config(topic), self.configs),
            (paths.delete_topic(topic), self.requests),
        ]
        results: dict[str, OpResult] = {}
        for path, holder in present:
            if topic not in holder:
                continue
            failure = self._failures.pop(path, None)
            if failure is not None:
                results[path] = failure
            else:
                holder.discard(topic)
                results[path] = True
        return results

    def writes(self, method: str) -> list[DeletionCall]:
        """The calls made to `method`, in order."""
        return [call for call in self.calls if call.method == method]

    def _check_epoch(self, epoch_zk_version: int) -> None:
        _check_epoch(self.epoch_zk_version, epoch_zk_version)
