"""ZooKeeper operations of topic deletion, in Kafka's terms: the requests under
`/admin/delete_topics` (Kafka's `getTopicDeletions`, `deleteTopicDeletions` and
`createDeleteTopicPath`) and the removal of a deleted topic's znodes (`deleteTopicZNode`,
`deleteTopicConfigs`).

The controller's writes are epoch-fenced and batched (`FencedWriter`): a failed check of
`/controller_epoch` raises `ControllerMovedError`. Reads are pipelined (kazoo `*_async`).
Every method blocks the calling thread: the controller event thread, or the CLI's main
thread for `mark_topic_for_deletion`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent

from zkdata import paths
from zkdata.client import KafkaZkClient
from zkdata.fenced_writes import Delete, FencedWriter, OpResult


class TopicDeletionZk:
    """Deletion requests and topic removal on one `KafkaZkClient`'s session."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self._zk = zk.kazoo
        self._fenced = FencedWriter(zk.kazoo)

    # -- requests (admin tools write them, the controller reads and removes them) ----------

    def get_topic_deletions(self, watch: Callable[[WatchedEvent], None] | None = None) -> list[str]:
        """The topics with a deletion request (children of `/admin/delete_topics`, which is
        created if missing), sorted; `watch` arms a one-shot child watch."""
        self._zk.retry(self._zk.ensure_path, paths.DELETE_TOPICS)
        return sorted(self._zk.retry(self._zk.get_children, paths.DELETE_TOPICS, watch=watch))

    def mark_topic_for_deletion(self, topic: str) -> bool:
        """Request the deletion of `topic` as `kafka-topics.sh --delete --zookeeper` does:
        create `/admin/delete_topics/T` (and its parents). False if it was already marked."""
        try:
            self._zk.retry(self._zk.create, paths.delete_topic(topic), b"", makepath=True)
        except NodeExistsError:
            return False
        return True

    def delete_topic_deletions(
        self, topics: Iterable[str], epoch_zk_version: int
    ) -> dict[str, OpResult]:
        """Remove the requests of `topics`, epoch-fenced and batched. Per topic: True, or the
        kazoo error (`NoNodeError`: already gone)."""
        order = list(topics)
        if not order:
            return {}
        ops = [Delete(paths.delete_topic(topic)) for topic in order]
        return dict(zip(order, self._fenced.write(ops, epoch_zk_version), strict=True))

    # -- removal of a deleted topic ----------------------------------------------------------

    def delete_topic(self, topic: str, epoch_zk_version: int) -> dict[str, OpResult]:
        """Remove what ZooKeeper holds about a deleted topic: `/brokers/topics/T` with every
        descendant (`partitions`, `partitions/P`, `partitions/P/state`), `/config/topics/T`
        and `/admin/delete_topics/T`, children before parents, in one fenced, batched write.

        The tree is listed first (pipelined, level by level), so that the write names only
        znodes that exist. Returns one result per path written: True, or the kazoo error
        (`NoNodeError`: gone meanwhile; `NotEmptyError`: a child appeared meanwhile).
        """
        doomed = self._existing_tree(paths.topic(topic))
        doomed.reverse()  # deepest first: every child goes before its parent
        doomed += self._existing([paths.topic_config(topic), paths.delete_topic(topic)])
        if not doomed:
            return {}
        results = self._fenced.write([Delete(path) for path in doomed], epoch_zk_version)
        return dict(zip(doomed, results, strict=True))

    def _existing_tree(self, root: str) -> list[str]:
        """`root` and its descendants that exist, parents before children (breadth first)."""
        found: list[str] = []
        level = [root]
        while level:
            pending = [(path, self._zk.get_children_async(path)) for path in level]
            level = []
            for path, result in pending:
                try:
                    children = result.get()
                except NoNodeError:
                    continue
                found.append(path)
                level.extend(f"{path}/{child}" for child in sorted(children))
        return found

    def _existing(self, candidates: list[str]) -> list[str]:
        """The `candidates` that exist, in order (pipelined)."""
        pending = [(path, self._zk.exists_async(path)) for path in candidates]
        return [path for path, result in pending if result.get() is not None]
