"""ZooKeeper operations of partition reassignment, in Kafka's terms: the request znode
`/admin/reassign_partitions` (`getPartitionReassignment`, `createPartitionReassignment`,
`setOrCreatePartitionReassignment`, `deletePartitionReassignment`), one partition's
assignment inside `/brokers/topics/T` (`setTopicAssignment`), a whole topic's assignment
restored while it is being deleted, and the watch on a reassigned
partition's state znode.

The controller's writes are epoch-fenced (`FencedWriter`) and conditional on the zkVersion
just read, so that a request an administrator writes meanwhile is never overwritten: a
lost race re-reads and retries. A failed epoch check raises `ControllerMovedError`.
Every method blocks the calling thread: the controller event thread, or the CLI's main
thread for `create_reassignments`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkdata import paths
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.errors import ZkDataError, ZnodeFormatError
from zkdata.fenced_writes import Delete, FencedWriter, Op, SetData
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicPartition
from zkdata.znodes import TopicZNode

#: Attempts of a read-modify-write before giving up on a znode that keeps changing.
MAX_ATTEMPTS = 10


class ReassignmentInProgressError(ZkDataError):
    """`/admin/reassign_partitions` already exists: a reassignment is running."""


class ReassignmentZk:
    """Reassignment requests and assignments on one `KafkaZkClient`'s session."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self._zk = zk.kazoo
        self._fenced = FencedWriter(zk.kazoo)

    # -- the request znode -------------------------------------------------------------------

    def get_reassignments(
        self, watch: WatchCallback | None = None
    ) -> tuple[PartitionReassignment, ...] | None:
        """The requested reassignments, or None when there is no request. `watch` arms a
        one-shot exists watch first (fires on creation, change and deletion). Raises
        `ZnodeFormatError` when the request does not decode."""
        if (
            watch is not None
            and self._zk.retry(self._zk.exists, paths.REASSIGN_PARTITIONS, watch) is None
        ):
            return None
        read = self._read_request()
        return None if read is None else _decode(read[0])

    def create_reassignments(self, requests: Sequence[PartitionReassignment]) -> None:
        """Write a new request as `kafka-reassign-partitions.sh --execute --zookeeper` does.
        Raises `ReassignmentInProgressError` when one exists."""
        data = ReassignPartitionsZNode.encode(tuple(requests))
        try:
            self._zk.retry(self._zk.create, paths.REASSIGN_PARTITIONS, data, makepath=True)
        except NodeExistsError:
            raise ReassignmentInProgressError(
                f"There is an existing assignment running ({paths.REASSIGN_PARTITIONS} exists)."
            ) from None

    def remove_reassignments(
        self, should_remove: Callable[[PartitionReassignment], bool], epoch_zk_version: int
    ) -> tuple[PartitionReassignment, ...]:
        """Drop the requests `should_remove` selects, keeping the others (Kafka's
        `maybeRemoveFromZkReassignment`); the znode goes when nothing is left. Fenced and
        conditional on the version read. Returns what was removed. A request that does not
        decode, or lists nothing, is removed whole (`ZnodeFormatError` is not raised)."""
        for _ in range(MAX_ATTEMPTS):
            read = self._read_request()
            if read is None:
                return ()
            data, version = read
            try:
                requests = _decode(data)
            except ZnodeFormatError:
                requests = None
            if requests is None:
                removed: tuple[PartitionReassignment, ...] = ()
                op: Op = Delete(paths.REASSIGN_PARTITIONS, version)
            else:
                removed = tuple(r for r in requests if should_remove(r))
                kept = tuple(r for r in requests if not should_remove(r))
                if not removed and kept:
                    return ()
                rest = ReassignPartitionsZNode.encode(
                    kept, ReassignPartitionsZNode.unknown_fields(data)
                )
                op = (
                    SetData(paths.REASSIGN_PARTITIONS, rest, version)
                    if kept
                    else Delete(paths.REASSIGN_PARTITIONS, version)
                )
            [result] = self._fenced.write([op], epoch_zk_version)
            if not isinstance(result, BadVersionError | NoNodeError):
                if isinstance(result, Exception):
                    raise result
                return removed
        raise ZkDataError(
            f"{paths.REASSIGN_PARTITIONS} kept changing; gave up after {MAX_ATTEMPTS} tries"
        )

    def _read_request(self) -> tuple[bytes, int] | None:
        try:
            data, stat = self._zk.retry(self._zk.get, paths.REASSIGN_PARTITIONS)
        except NoNodeError:
            return None
        return data, int(stat.version)

    # -- assignments ----------------------------------------------------------------------

    def set_partition_assignment(
        self, tp: TopicPartition, assignment: ReplicaAssignment, epoch_zk_version: int
    ) -> bool:
        """Write one partition's replicas (with its adding and removing replicas) into
        `/brokers/topics/T`, keeping the other partitions, the topic id and any field this
        project does not use as they are in ZooKeeper. Fenced and conditional on the version
        read. False when the topic znode is gone; `ZnodeFormatError` when it does not
        decode."""
        return self._rewrite_topic(
            tp.topic, lambda partitions: {**partitions, tp.partition: assignment}, epoch_zk_version
        )

    def restore_topic_assignment(
        self, topic: str, partitions: Mapping[int, ReplicaAssignment], epoch_zk_version: int
    ) -> bool:
        """Write `/brokers/topics/T` back to exactly `partitions` (what the controller knows),
        dropping partitions an admin added meanwhile, keeping the topic id; Kafka's
        `restorePartitionReplicaAssignment` for a topic being deleted. Fenced and conditional
        on the version read. False when the topic znode is gone; `ZnodeFormatError` when it
        does not decode."""
        return self._rewrite_topic(topic, lambda _: dict(partitions), epoch_zk_version)

    def _rewrite_topic(
        self,
        topic: str,
        change: Callable[[dict[int, ReplicaAssignment]], dict[int, ReplicaAssignment]],
        epoch_zk_version: int,
    ) -> bool:
        """Read `/brokers/topics/T`, apply `change` to its partitions, write it back at the
        version read (fenced); a lost race reads again."""
        path = paths.topic(topic)
        for _ in range(MAX_ATTEMPTS):
            try:
                data, stat = self._zk.retry(self._zk.get, path)
            except NoNodeError:
                return False
            try:
                current = TopicZNode.decode(data)
            except ZnodeFormatError as exc:
                raise ZnodeFormatError(exc.reason, path) from None
            changed = replace(current, partitions=change(dict(current.partitions)))
            encoded = TopicZNode.encode(changed)
            [result] = self._fenced.write([SetData(path, encoded, stat.version)], epoch_zk_version)
            if isinstance(result, NoNodeError):
                return False
            if not isinstance(result, BadVersionError):
                if isinstance(result, Exception):
                    raise result
                return True
        raise ZkDataError(f"{path} kept changing; gave up after {MAX_ATTEMPTS} tries")

    def watch_partition_state(self, tp: TopicPartition, watch: WatchCallback) -> None:
        """Arm a one-shot exists watch on the partition's state znode: it fires when a
        leader changes the ISR (Kafka's `PartitionReassignmentIsrChangeHandler`)."""
        self._zk.retry(self._zk.exists, paths.partition_state(tp.topic, tp.partition), watch)


def _decode(data: bytes) -> tuple[PartitionReassignment, ...]:
    try:
        return ReassignPartitionsZNode.decode(data)
    except ZnodeFormatError as exc:
        raise ZnodeFormatError(exc.reason, paths.REASSIGN_PARTITIONS) from None
