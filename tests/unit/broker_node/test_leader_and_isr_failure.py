"""A LeaderAndIsr whose application fails (the replica manager raised: a lost ZooKeeper
connection while reading a new topic's overrides) leaves nothing of it behind: the
controller's next request at the same leader epochs is applied, not refused as already
seen. A soak of the fixed build stalled a reassignment there: the new replica recorded
the epoch, never followed, and refused the resend."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import pytest
from kazoo.exceptions import ConnectionLoss

from broker_node.control_requests import ControlRequestHandler
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

BROKER = 3
HEADER = m.ControlHeader(2, 68, 100)
HELD, NEW = TopicPartition("orders", 0), TopicPartition("side", 2)


class FlakyConfigs:
    """Topic overrides read from ZooKeeper; the read after `fail_next` is set fails with
    ConnectionLoss."""

    def __init__(self) -> None:
        self.fail_next = False

    def __call__(self, topics: Collection[str]) -> Mapping[str, dict[str, str]]:
        if self.fail_next:
            self.fail_next = False
            raise ConnectionLoss()
        return {}


def _follow(tp: TopicPartition, epoch: int) -> m.LeaderAndIsrPartitionState:
    """Broker 3 follows broker 1 in `tp` at leader epoch `epoch`."""
    return m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 68, 1, epoch, (1, 3), 0, (1, 3))


def _request(*states: m.LeaderAndIsrPartitionState) -> m.LeaderAndIsrRequest:
    return m.LeaderAndIsrRequest(HEADER, states, (m.LiveLeader(1, "broker1", 9092),))


def _no_shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)


def test_a_failed_leader_and_isr_is_not_recorded_and_its_resend_is_applied(
    tmp_path: Path,
) -> None:
    configs = FlakyConfigs()
    events = RecordingEventLog("broker3")
    replicas = ReplicaManager(
        BROKER, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), events, configs
    )
    control = ControlRequestHandler(BROKER, lambda: 100, events, _no_shutdown, replicas)
    control.on_registered()
    control.leader_and_isr(_request(_follow(HELD, 4)))  # held before, at epoch 4
    configs.fail_next = True
    with pytest.raises(ConnectionLoss):
        control.leader_and_isr(_request(_follow(HELD, 5), _follow(NEW, 1)))
    answer = control.leader_and_isr(_request(_follow(HELD, 5), _follow(NEW, 1)))
    assert answer.error is Errors.NONE
    assert {r.topic_partition: r.error for r in answer.partition_errors} == {
        HELD: Errors.NONE,
        NEW: Errors.NONE,
    }
    try:
        assert replicas.partition(NEW) is not None
        assert replicas.fetchers.leader_of(NEW) == 1  # it follows broker 1 now
    finally:
        replicas.fetchers.shutdown()
