"""`broker_changes_for`: a `BrokerChanges` over a test's context and ZooKeeper double, with
real state machines on a recording request batch and every other duty stubbed, for unit
tests of broker failure and startup handling (STYLE rule 13). Not thread-safe: the test
thread plays the controller event thread; call `channels.shutdown()` when done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any, cast

from bugs import BugSwitches
from controller import events as ev
from controller.broker_changes import BrokerChanges
from controller.channel_manager import ControllerChannelManager
from controller.context import ControllerContext
from controller.partition_state_machine import PartitionStateMachine
from controller.replica_state_machine import ReplicaStateMachine
from controller.request_batch import RequestBatch
from controller.testing.brokers import FakeChannels, RecordingSend
from controller.watchers import Watchers
from domain import TopicPartition
from eventlog.testing import RecordingEventLog
from zkdata.client import KafkaZkClient

__all__ = ["broker_changes_for"]

#: What `BrokerChanges` calls to send UpdateMetadata: `(brokers, partitions)`.
UpdateMetadata = Callable[[Iterable[int], Iterable[TopicPartition]], None]


def broker_changes_for(
    ctx: ControllerContext,
    zk: Any,
    events: RecordingEventLog,
    switches: BugSwitches,
    *,
    update_metadata: UpdateMetadata = lambda _brokers, _partitions: None,
    enqueue: Callable[[ev.ControllerEvent], None] = lambda _event: None,
) -> tuple[BrokerChanges, ControllerChannelManager]:
    """The `BrokerChanges` under test and its channel manager (to shut down)."""
    batch = RequestBatch(9, ctx, RecordingSend())
    channels = ControllerChannelManager(events, FakeChannels())
    changes = BrokerChanges(
        ctx,
        cast(KafkaZkClient, zk),
        channels,
        PartitionStateMachine(ctx, zk, batch, events),
        ReplicaStateMachine(ctx, zk, batch, events),
        cast(Any, SimpleNamespace(on_replicas_offline=lambda _replicas: None)),
        cast(Any, SimpleNamespace(on_broker_startup=lambda _ids: None)),
        events,
        Watchers(enqueue),
        update_metadata,
        switches,
    )
    return changes, channels
