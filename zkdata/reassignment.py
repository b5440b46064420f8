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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from domain import TopicPartition
from zkdata import paths
from zkdata.admin_znodes import ReassignPartitionsZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.errors import ZkDataError, ZnodeFormatError
from zkdata.fenced_writes import Delete, FencedWriter, Op, SetData
from zkdata.model import PartitionReassignment, ReplicaAssignment
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
        outcome = self.set_partition_assignments({tp: assignment}, epoch_zk_version)[tp.topic]
        if isinstance(outcome, ZnodeFormatError):
            raise outcome
        return outcome

    def set_partition_assignments(
        self, assignments: Mapping[TopicPartition, ReplicaAssignment], epoch_zk_version: int
    ) -> dict[str, bool | ZnodeFormatError]:
        """`set_partition_assignment` for many partitions at once: each topic znode is read
        and rewritten once for all its partitions, every topic in the same pipelined read
        and the same fenced multis. Per topic: True when written, False when its znode is
        gone, the `ZnodeFormatError` when it does not decode."""
        by_topic: dict[str, dict[int, ReplicaAssignment]] = {}
        for tp, assignment in assignments.items():
            by_topic.setdefault(tp.topic, {})[tp.partition] = assignment
        return self._rewrite_topics(
            {topic: _merged_with(new) for topic, new in by_topic.items()}, epoch_zk_version
        )

    def restore_topic_assignment(
        self, topic: str, partitions: Mapping[int, ReplicaAssignment], epoch_zk_version: int
    ) -> bool:
        """Write `/brokers/topics/T` back to exactly `partitions` (what the controller knows),
        dropping partitions an admin added meanwhile, keeping the topic id; Kafka's
        `restorePartitionReplicaAssignment` for a topic being deleted. Fenced and conditional
        on the version read. False when the topic znode is gone; `ZnodeFormatError` when it
        does not decode."""
        outcome = self._rewrite_topics({topic: lambda _: dict(partitions)}, epoch_zk_version)[topic]
        if isinstance(outcome, ZnodeFormatError):
            raise outcome
        return outcome

    def _rewrite_topics(
        self,
        changes: Mapping[
            str, Callable[[dict[int, ReplicaAssignment]], dict[int, ReplicaAssignment]]
        ],
        epoch_zk_version: int,
    ) -> dict[str, bool | ZnodeFormatError]:
        """Read each topic's `/brokers/topics/T` (pipelined), apply its change to the
        partitions, write them all back at the versions read (fenced multis); the topics
        that lost a race are read and written again, together."""
        outcome: dict[str, bool | ZnodeFormatError] = {}
        pending = sorted(changes)
        for _ in range(MAX_ATTEMPTS):
            if not pending:
                return outcome
            reads = [(topic, self._zk.get_async(paths.topic(topic))) for topic in pending]
            ops: list[tuple[str, SetData]] = []
            for topic, result in reads:
                path = paths.topic(topic)
                try:
                    data, stat = result.get()
                except NoNodeError:
                    outcome[topic] = False
                    continue
                try:
                    current = TopicZNode.decode(data)
                except ZnodeFormatError as exc:
                    outcome[topic] = ZnodeFormatError(exc.reason, path)
                    continue
                changed = replace(current, partitions=changes[topic](dict(current.partitions)))
                ops.append((topic, SetData(path, TopicZNode.encode(changed), stat.version)))
            results = self._fenced.write([op for _, op in ops], epoch_zk_version)
            pending = []
            for (topic, _), result in zip(ops, results, strict=True):
                if isinstance(result, BadVersionError):
                    pending.append(topic)
                elif isinstance(result, NoNodeError):
                    outcome[topic] = False
                elif isinstance(result, Exception):
                    raise result
                else:
                    outcome[topic] = True
        if pending:
            raise ZkDataError(
                f"{paths.topic(pending[0])} kept changing; gave up after {MAX_ATTEMPTS} tries"
            )
        return outcome

    def watch_partition_state(self, tp: TopicPartition, watch: WatchCallback) -> None:
        """Arm a one-shot exists watch on the partition's state znode: it fires when a
        leader changes the ISR (Kafka's `PartitionReassignmentIsrChangeHandler`)."""
        self._zk.retry(self._zk.exists, paths.partition_state(tp.topic, tp.partition), watch)

    def watch_partition_states(
        self,
        partitions: Iterable[TopicPartition],
        watch_of: Callable[[TopicPartition], WatchCallback],
    ) -> None:
        """`watch_partition_state` for many partitions: every exists watch issued, then
        every answer awaited (pipelined)."""
        pending = [
            self._zk.exists_async(paths.partition_state(tp.topic, tp.partition), watch_of(tp))
            for tp in partitions
        ]
        for result in pending:
            result.get()


def _merged_with(
    new: dict[int, ReplicaAssignment],
) -> Callable[[dict[int, ReplicaAssignment]], dict[int, ReplicaAssignment]]:
    """A topic change that replaces the assignments of the partitions in `new`."""
    return lambda partitions: {**partitions, **new}


def _decode(data: bytes) -> tuple[PartitionReassignment, ...]:
    try:
        return ReassignPartitionsZNode.decode(data)
    except ZnodeFormatError as exc:
        raise ZnodeFormatError(exc.reason, paths.REASSIGN_PARTITIONS) from None
