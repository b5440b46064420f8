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
from zkdata.pipelined_reads import Reads
from zkdata.sequence_notifications import delete_notifications, read_notifications


def read_isr_change_notifications(
    zk: KafkaZkClient, watch: WatchCallback | None = None
) -> Reads[str, tuple[TopicPartition, ...]]:
    """Every pending notification (child name -> partitions), read pipelined; `watch` arms
    a one-shot child watch on `/isr_change_notification` (created if missing)."""
    return read_notifications(
        zk,
        paths.ISR_CHANGE_NOTIFICATION,
        paths.isr_change_notification,
        IsrChangeNotificationSequenceZNode.decode,
        watch,
    )


def delete_isr_change_notifications(
    zk: KafkaZkClient, children: Iterable[str], epoch_zk_version: int
) -> None:
    """Remove handled notifications (epoch-fenced; already gone is fine)."""
    delete_notifications(zk, paths.isr_change_notification, children, epoch_zk_version)
