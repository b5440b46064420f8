"""The active controller's side of ISR change notifications, in Kafka's terms: reading the
`/isr_change_notification/isr_change_<seq>` children that partition leaders wrote
(`getAllIsrChangeNotifications`, `getPartitionsFromIsrChangeNotifications`) and removing
the handled ones (`deleteIsrChangeNotifications`), epoch-fenced.

Leaders write them with `KafkaZkClient.create_isr_change_notification`, the broker's
`IsrChangeSink`. Both functions block the calling thread, the controller event thread;
the child watch they arm fires on kazoo's event thread, where it may only enqueue.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain import TopicPartition
from zkdata import paths
from zkdata.admin_znodes import IsrChangeNotificationSequenceZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.fenced_writes import Delete, FencedWriter
from zkdata.pipelined_reads import Reads, read_many


def read_isr_change_notifications(
    zk: KafkaZkClient, watch: WatchCallback | None = None
) -> Reads[str, tuple[TopicPartition, ...]]:
    """Every pending notification (child name -> partitions), read pipelined; `watch` arms
    a one-shot child watch on `/isr_change_notification` (created if missing)."""
    children = (
        zk.watch_children(paths.ISR_CHANGE_NOTIFICATION, watch)
        if watch
        else list(zk.kazoo.retry(zk.kazoo.get_children, paths.ISR_CHANGE_NOTIFICATION))
    )
    return read_many(
        zk.kazoo,
        sorted(children),
        paths.isr_change_notification,
        lambda data, _: IsrChangeNotificationSequenceZNode.decode(data),
    )


def delete_isr_change_notifications(
    zk: KafkaZkClient, children: Iterable[str], epoch_zk_version: int
) -> None:
    """Remove handled notifications (epoch-fenced; already gone is fine)."""
    FencedWriter(zk.kazoo).write(
        [Delete(paths.isr_change_notification(c)) for c in children], epoch_zk_version
    )
