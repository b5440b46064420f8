"""The controller logs each multi of its fenced writes that committed, in the epoch it
holds, with the zxid ZooKeeper gave it (`zkdata.fenced_writes.observe_commits`)."""

from __future__ import annotations

from typing import cast

from controller import KafkaController
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient
from zkdata.fenced_writes import Committed, Delete, SetData


def test_a_committed_multi_is_logged_with_the_controller_epoch_and_its_zxid() -> None:
    events = RecordingEventLog("broker2")
    controller = KafkaController(2, cast(KafkaZkClient, None), events, lambda: 0)
    controller.context.epoch = 7
    ops = (
        SetData("/brokers/topics/t", b"{}", 3),
        Delete("/admin/reassign_partitions"),
        Delete("/isr_change_notification/isr_change_0000000004"),
        Delete("/isr_change_notification/isr_change_0000000005"),
    )
    controller.writes_committed(Committed(ops, 12, 0x30000002A))
    (event,) = events.of_kind("controller_writes_committed")
    assert event["controller_id"] == 2
    assert event["controller_epoch"] == 7
    assert event["epoch_zk_version"] == 12
    assert event["zxid"] == 0x30000002A
    assert event["writes"] == 4
    assert event["paths"] == [op.path for op in ops[:3]]
