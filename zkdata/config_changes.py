"""Dynamic config changes through ZooKeeper, in Kafka 2.x's terms: an administrator
rewrites `/config/topics/T` and announces it with a sequential
`/config/changes/config_change_<seq>` (`AdminZkClient.changeTopicConfig`); every broker
follows those notifications in sequence order (`ZkNodeChangeNotificationListener`) and
purges the ones older than the expiration.

Blocks the calling thread: the CLI's main thread for `change_topic_config`, the broker's
`config-change-listener` thread for the rest. Writes are not epoch-fenced: neither side
is the controller acting on partitions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass

from kazoo.exceptions import NodeExistsError, NoNodeError

from zkdata import paths
from zkdata.admin_znodes import ConfigChangeNotificationZNode, TopicConfigZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.errors import ZnodeFormatError
from zkdata.model import TopicConfig

#: Kafka's `changeExpirationMs`: notifications older than this are purged.
CHANGE_EXPIRATION_MS = 15 * 60 * 1000


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """One notification: its child name, sequence number, creation time and what changed
    (`entity` is None when the notification does not decode; `error` then says why)."""

    child: str
    sequence: int
    ctime_ms: int
    entity: tuple[str, str] | None
    error: ZnodeFormatError | None = None


def sequence_of(child: str) -> int | None:
    """The sequence number of `config_change_0000000042`, or None for another name."""
    digits = child.removeprefix(paths.CONFIG_CHANGE_PREFIX)
    if digits == child or not (digits.isascii() and digits.isdigit()):
        return None
    return int(digits)


class ConfigChangesZk:
    """Config change notifications on one `KafkaZkClient`'s session."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self._client = zk
        self._zk = zk.kazoo

    def change_topic_config(self, topic: str, config: TopicConfig) -> str:
        """Replace the overrides of `topic` (`/config/topics/T`, created if missing), then
        announce the change; returns the notification's path."""
        data = TopicConfigZNode.encode(config)
        path = paths.topic_config(topic)
        try:
            self._zk.retry(self._zk.create, path, data, makepath=True)
        except NodeExistsError:
            self._zk.retry(self._zk.set, path, data)
        created: str = self._zk.retry(
            self._zk.create,
            ConfigChangeNotificationZNode.path_prefix(),
            ConfigChangeNotificationZNode.encode("topics", topic),
            sequence=True,
            makepath=True,
        )
        return created

    def list_changes(self, watch: WatchCallback | None = None) -> list[str]:
        """The notification children in sequence order (others are skipped); `watch` arms
        a one-shot child watch. `/config/changes` is created if missing."""
        children = self._client.watch_children(paths.CONFIG_CHANGES, watch)
        numbered = [(seq, c) for c in children if (seq := sequence_of(c)) is not None]
        return [child for _, child in sorted(numbered)]

    def read_changes(self, children: Iterable[str]) -> list[ConfigChange]:
        """Read notifications, pipelined, in the order given; vanished ones are skipped."""
        pending = [
            (child, self._zk.get_async(paths.config_change_notification(child)))
            for child in children
        ]
        out = []
        for child, result in pending:
            try:
                data, stat = result.get()
            except NoNodeError:
                continue
            sequence = sequence_of(child)
            assert sequence is not None, child
            try:
                entity: tuple[str, str] | None = ConfigChangeNotificationZNode.decode(data)
                error = None
            except ZnodeFormatError as exc:
                entity = None
                error = ZnodeFormatError(exc.reason, paths.config_change_notification(child))
            out.append(ConfigChange(child, sequence, int(stat.ctime), entity, error))
        return out

    def delete_changes(self, children: Iterable[str]) -> None:
        """Remove notifications, pipelined; ones already gone are fine (every broker purges)."""
        pending = [
            self._zk.delete_async(paths.config_change_notification(child)) for child in children
        ]
        for result in pending:
            with contextlib.suppress(NoNodeError):
                result.get()
