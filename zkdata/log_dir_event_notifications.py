"""The active controller's side of log-directory event notifications (KIP-112), in
Kafka's terms: reading the `/log_dir_event_notification/log_dir_event_<seq>` children that
brokers wrote when a log directory failed (`getAllLogDirEventNotifications`,
`getBrokerIdsFromLogDirEvents`) and removing them (`deleteLogDirEventNotifications`),
epoch-fenced.

Brokers write them with `KafkaZkClient.propagate_log_dir_event`. Both functions block the
calling thread, the controller event thread; the child watch they arm fires on kazoo's
event thread, where it may only enqueue.
"""

from __future__ import annotations

from collections.abc import Iterable

from zkdata import paths
from zkdata.admin_znodes import LogDirEventNotificationSequenceZNode
from zkdata.client import KafkaZkClient, WatchCallback
from zkdata.pipelined_reads import Reads
from zkdata.sequence_notifications import delete_notifications, read_notifications


def read_log_dir_event_notifications(zk: KafkaZkClient, watch: WatchCallback) -> Reads[str, int]:
    """Every pending notification (child name -> broker id), read pipelined, after arming
    a one-shot child watch on `/log_dir_event_notification` (created if missing)."""
    return read_notifications(
        zk,
        paths.LOG_DIR_EVENT_NOTIFICATION,
        paths.log_dir_event_notification,
        LogDirEventNotificationSequenceZNode.decode,
        watch,
    )


def delete_log_dir_event_notifications(
    zk: KafkaZkClient, children: Iterable[str], epoch_zk_version: int
) -> None:
    """Remove notifications (epoch-fenced; already gone is fine)."""
    delete_notifications(zk, paths.log_dir_event_notification, children, epoch_zk_version)
