"""`ReplicaManager.maybe_propagate_isr_changes`: ISR changes are batched into
`/isr_change_notification` the way Kafka 2.x's `maybePropagateIsrChanges` does.

Setup: broker 1 hosts "orders" partitions as leader with replicas (1, 2), logs under
`tmp_path`, a `FakeIsrStore` for ZooKeeper; the ISR threads are not started, the test calls
`maybe_propagate_isr_changes` itself. An ISR change is real: the controller makes broker 1
leader with ISR (1,) and follower 2 fetches the log end, which expands the ISR to (1, 2)
and records the change.

Time: the ISR threads (`broker_node.isr_maintenance`) and the Fetch path
(`broker_node.fetch_serving`) read `time.monotonic()` from their modules; each test
monkeypatches both modules' `time` with a `FakeTime` whose `monotonic()` the test moves
(whole seconds or at least a millisecond past a boundary, so float milliseconds compare
exactly). Partitions keep their real clock; nothing here depends on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.exceptions import ConnectionLoss

from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m

BLACKOUT_MS = 5_000
MAX_DELAY_MS = 60_000
START_MS = 1_000_000
TOPIC = "orders"


class FakeTime:
    """Stands in for the `time` module inside `broker_node.replica_manager` and
    `broker_node.fetch_reads`."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def monotonic(self) -> float:
        """Seconds, as `time.monotonic` answers."""
        return self.now_ms / 1000

    def at(self, ms: int) -> None:
        """Move to `START_MS + ms`."""
        assert START_MS + ms >= self.now_ms, "time only moves forward"
        self.now_ms = START_MS + ms


class Broker:
    """A `ReplicaManager` for broker 1 and the means to change ISRs through it."""

    def __init__(self, data_dir: Path, clock: FakeTime) -> None:
        self.clock = clock
        self.store = FakeIsrStore()
        self.events = RecordingEventLog("broker-1")
        self.manager = ReplicaManager(
            1,
            ReplicationConfig(
                data_dir=data_dir,
                isr_change_blackout_ms=BLACKOUT_MS,
                isr_change_max_delay_ms=MAX_DELAY_MS,
            ),
            self.store,
            self.events,
            lambda _topics: {},
        )
        self._epochs: dict[TopicPartition, int] = {}

    def isr_change(self, partition: int, at_ms: int) -> TopicPartition:
        """At `START_MS + at_ms`, expand the ISR of `partition` from (1,) to (1, 2)."""
        self.clock.at(at_ms)
        tp = TopicPartition(TOPIC, partition)
        epoch = self._epochs.get(tp, 0) + 1
        self._epochs[tp] = epoch
        zk_version = 10 * epoch
        self.store.put_state(
            tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, epoch, (1,)), 1), zk_version
        )
        state = m.LeaderAndIsrPartitionState(
            TOPIC, partition, 1, 1, epoch, (1,), zk_version, (1, 2)
        )
        self.manager.become_leader_or_follower([state], [])
        fetch = m.FetchPartition(TOPIC, partition, 0, epoch)
        self.manager.fetch(m.FetchRequest((fetch,), replica_id=2, max_wait_ms=0))
        hosted = self.manager.partition(tp)
        assert hosted is not None
        assert hosted.isr == (1, 2)
        return tp

    def propagate_at(self, ms: int) -> list[tuple[TopicPartition, ...]]:
        """At `START_MS + ms`, run one propagation check; the notifications so far."""
        self.clock.at(ms)
        self.manager.maybe_propagate_isr_changes()
        return self.store.notifications


@pytest.fixture
def broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Broker]:
    clock = FakeTime(START_MS)
    monkeypatch.setattr("broker_node.isr_maintenance.time", clock)
    monkeypatch.setattr("broker_node.fetch_serving.time", clock)
    # a fetch's deadline is made by the manager's clock and read by the long poll's: the
    # two must agree, or a fetch waits until the real clock reaches the fake one
    monkeypatch.setattr("broker_node.long_poll.time", clock)
    broker = Broker(tmp_path, clock)
    yield broker
    broker.manager.shutdown()


def tps(*partitions: int) -> tuple[TopicPartition, ...]:
    """Partitions of `TOPIC`, in order."""
    return tuple(TopicPartition(TOPIC, p) for p in partitions)


def test_nothing_pending_writes_nothing(broker: Broker) -> None:
    assert broker.propagate_at(10 * MAX_DELAY_MS) == []
    assert broker.events.of_kind(EventKind.ISR_CHANGE_PROPAGATED) == []


def test_a_change_waits_for_the_blackout(broker: Broker) -> None:
    broker.isr_change(0, at_ms=10_000)
    assert broker.propagate_at(10_000) == []
    assert broker.propagate_at(10_000 + BLACKOUT_MS) == []  # not yet: strictly after it
    assert broker.propagate_at(10_000 + BLACKOUT_MS + 1) == [tps(0)]
    assert broker.propagate_at(30_000) == [tps(0)]  # nothing pending any more


def test_pending_changes_go_in_one_notification(broker: Broker) -> None:
    broker.isr_change(2, at_ms=10_000)
    broker.isr_change(0, at_ms=11_000)
    broker.isr_change(1, at_ms=12_000)
    assert broker.propagate_at(16_000) == []  # 4 s after the last change
    assert broker.propagate_at(17_001) == [tps(0, 1, 2)]
    [event] = broker.events.of_kind(EventKind.ISR_CHANGE_PROPAGATED)
    assert event["partitions"] == 3
    assert event["notification"].startswith("/isr_change_notification/isr_change_")
    assert event["node"] == broker.events.node  # the envelope is not overwritten


def test_a_partition_changing_twice_is_named_once(broker: Broker) -> None:
    broker.isr_change(0, at_ms=10_000)
    broker.isr_change(0, at_ms=11_000)
    assert broker.propagate_at(17_000) == [tps(0)]


def test_a_new_change_restarts_the_blackout(broker: Broker) -> None:
    broker.isr_change(0, at_ms=10_000)
    broker.isr_change(1, at_ms=14_000)
    assert broker.propagate_at(16_000) == []
    assert broker.propagate_at(19_000) == []
    assert broker.propagate_at(19_001) == [tps(0, 1)]


def test_continuous_changes_are_propagated_after_the_max_delay(broker: Broker) -> None:
    """A change every 2 s never leaves the blackout quiet; at least every 60 s anyway."""
    seen: list[tuple[TopicPartition, ...]] = []
    for i in range(1, 40):
        broker.isr_change(i % 4, at_ms=i * 2_000)
        seen = broker.propagate_at(i * 2_000 + 1_000)
        if i * 2_000 + 1_000 <= MAX_DELAY_MS:
            assert seen == [], i
    assert seen[0] == tps(0, 1, 2, 3)
    assert len(seen) == 1
    overdue_ms = 61_000  # the first check past 60 s since the manager started
    # the next overdue notification comes a max delay after the first, not earlier
    broker.isr_change(0, at_ms=overdue_ms + MAX_DELAY_MS - 1_500)
    assert broker.propagate_at(overdue_ms + MAX_DELAY_MS - 1_000) == seen
    broker.isr_change(1, at_ms=overdue_ms + MAX_DELAY_MS + 500)
    assert broker.propagate_at(overdue_ms + MAX_DELAY_MS + 1_000) == [*seen, tps(0, 1, 2, 3)]


def test_after_a_quiet_max_delay_a_change_goes_out_at_the_next_check(broker: Broker) -> None:
    """As in Kafka, the max delay counts from the last propagation (or the start): a lone
    change after a minute without any is overdue at once and skips the blackout."""
    broker.isr_change(0, at_ms=MAX_DELAY_MS + 10_000)
    assert broker.propagate_at(MAX_DELAY_MS + 10_000) == [tps(0)]


def test_a_failed_create_keeps_the_changes_for_the_next_round(broker: Broker) -> None:
    broker.isr_change(0, at_ms=10_000)
    broker.store.fail_next_notification(ConnectionLoss())
    assert broker.propagate_at(16_000) == []
    assert broker.events.of_kind(EventKind.ISR_CHANGE_PROPAGATED) == []
    broker.isr_change(1, at_ms=17_000)
    assert broker.propagate_at(20_000) == []  # 3 s after the new change
    assert broker.propagate_at(22_001) == [tps(0, 1)]
    assert len(broker.events.of_kind(EventKind.ISR_CHANGE_PROPAGATED)) == 1


def test_a_failed_create_is_retried_at_once_when_overdue(broker: Broker) -> None:
    """Kafka sets `lastIsrPropagationMs` only after `propagateIsrChanges` succeeded, so a
    failed overdue write is retried at the next check while changes keep coming.

    BUG (broker_node/isr_maintenance.py `maybe_propagate_isr_changes`): the
    propagation time is stamped before the create; after a failure the max-delay clock
    restarts, and under continuous ISR churn the controller hears nothing for up to a
    further 60 s (120 s since the last notification)."""
    for i in range(1, 31):  # a change every 2 s up to 60 s
        broker.isr_change(i % 2, at_ms=i * 2_000)
    broker.store.fail_next_notification(ConnectionLoss())
    assert broker.propagate_at(MAX_DELAY_MS + 1_000) == []  # overdue, but the create fails
    broker.isr_change(0, at_ms=MAX_DELAY_MS + 2_000)  # still not quiet
    assert broker.propagate_at(MAX_DELAY_MS + 3_500) == [tps(0, 1)]
