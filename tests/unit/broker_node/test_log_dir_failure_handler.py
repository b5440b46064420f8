"""A log directory failing at runtime (KIP-112): the real filesystem's `OSError` reaches
the `LogDirFailureChannel`, the handler takes every replica offline, and then halts or
notifies the controller, as `--on-log-dir-failure` says."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from broker_node import log_dir_failure
from broker_node.log_dir_failure import (
    LogDirFailureAction,
    LogDirFailureChannel,
    LogDirFailureHandler,
)
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore, FakeLogDirEventSink
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors

LED, FOLLOWED = TopicPartition("orders", 0), TopicPartition("orders", 1)


def state(tp: TopicPartition, leader: int) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 1, leader, 1, (1, 2), 0, (1, 2))


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[ReplicaManager]:
    """Broker 1 leading orders-0 (ISR [1,2]) and following orders-1 (leader 2, unknown
    endpoint: no fetcher)."""
    manager = ReplicaManager(
        1,
        ReplicationConfig(data_dir=tmp_path),
        FakeIsrStore(),
        RecordingEventLog("b1"),
        lambda _t: {},
    )
    assert manager.become_leader_or_follower([state(LED, 1), state(FOLLOWED, 2)], []) == {}
    yield manager
    manager.shutdown()


def produce(replicas: ReplicaManager, tp: TopicPartition) -> m.PartitionProduceResult:
    request = m.ProduceRequest.single(tp.topic, tp.partition, (m.ProducedRecord(None, b"v"),), 1)
    return replicas.produce(request).result(timeout=5).only


def fetch_error(replicas: ReplicaManager, tp: TopicPartition) -> Errors:
    request = m.FetchRequest((m.FetchPartition(tp.topic, tp.partition, 0),), -1, 0)
    [fetched] = replicas.fetch(request).partitions
    return fetched.error


def break_checkpoint(directory: Path) -> None:
    """Replace the log's high-watermark checkpoint by a non-empty directory: replacing it
    again fails with EISDIR, whoever the writer is (root too)."""
    checkpoint = directory / "hw-checkpoint"
    if checkpoint.is_dir():
        shutil.rmtree(checkpoint)
    checkpoint.unlink(missing_ok=True)
    (checkpoint / "blocker").mkdir(parents=True)


def test_the_first_io_error_is_kept_and_marks_the_directory_offline(tmp_path: Path) -> None:
    channel = LogDirFailureChannel(tmp_path)
    assert not channel.offline
    assert channel.wait(0) is None
    channel.report(IsADirectoryError(21, "Is a directory"))
    channel.report(OSError(28, "No space left on device"))
    assert channel.offline
    assert channel.wait(0) == "IsADirectoryError: [Errno 21] Is a directory"


def test_a_failed_checkpoint_write_reaches_the_channel(replicas: ReplicaManager) -> None:
    """The write fails on the real filesystem; until the handler runs, the failed log
    already answers reads and appends with KAFKA_STORAGE_ERROR."""
    assert produce(replicas, LED).error is Errors.NONE
    partition = replicas.partition(LED)
    assert partition is not None
    break_checkpoint(partition.log.directory)
    assert not replicas.log_dir_failures.offline
    with pytest.raises(IsADirectoryError):
        partition.log.set_high_watermark(1)  # the first rise is written at once
    assert replicas.log_dir_failures.offline
    assert (replicas.log_dir_failures.wait(0) or "").startswith("IsADirectoryError")
    assert fetch_error(replicas, LED) is Errors.KAFKA_STORAGE_ERROR
    assert produce(replicas, LED).error is Errors.KAFKA_STORAGE_ERROR
    session_read = partition.read_if_changed(m.FetchPartition("orders", 0, 1), 2, 0, 0)
    assert session_read is not None
    assert session_read.error is Errors.KAFKA_STORAGE_ERROR


def handler(
    replicas: ReplicaManager,
    action: LogDirFailureAction,
    sink: FakeLogDirEventSink,
    events: RecordingEventLog,
    halt: Callable[[], None] = lambda: None,
) -> LogDirFailureHandler:
    return LogDirFailureHandler(1, replicas.log_dir_failures, replicas, sink, events, action, halt)


def test_notify_takes_every_replica_offline_and_writes_the_notification(
    replicas: ReplicaManager,
) -> None:
    assert produce(replicas, LED).error is Errors.NONE
    sink, events = FakeLogDirEventSink(), RecordingEventLog("b1")
    replicas.log_dir_failures.report(OSError(5, "Input/output error"))
    handler(replicas, LogDirFailureAction.NOTIFY, sink, events).handle("OSError: EIO")

    assert sink.notified == [1]
    [failed] = events.of_kind(EventKind.LOG_DIR_FAILED)
    assert failed["partitions"] == ["orders-0", "orders-1"]
    assert (failed["action"], failed["reason"]) == ("notify", "OSError: EIO")
    assert replicas.partitions() == []
    for tp in (LED, FOLLOWED):
        assert produce(replicas, tp).error is Errors.KAFKA_STORAGE_ERROR
        assert fetch_error(replicas, tp) is Errors.KAFKA_STORAGE_ERROR
    epochs = replicas.offsets_for_leader_epoch(
        m.OffsetsForLeaderEpochRequest((m.EpochPartition(LED.topic, LED.partition, 1, 1),), 2)
    )
    assert epochs.partitions[0].error is Errors.KAFKA_STORAGE_ERROR
    new = TopicPartition("orders", 2)
    answered = replicas.become_leader_or_follower([state(LED, 1), state(new, 1)], [])
    assert answered == {LED: Errors.KAFKA_STORAGE_ERROR, new: Errors.KAFKA_STORAGE_ERROR}
    assert replicas.partition(new) is None


def test_halt_stops_without_notifying(replicas: ReplicaManager) -> None:
    sink, events, halted = FakeLogDirEventSink(), RecordingEventLog("b1"), []
    handler(replicas, LogDirFailureAction.HALT, sink, events, lambda: halted.append(1)).handle(
        "OSError: EIO"
    )
    assert halted == [1]
    assert sink.notified == []
    [failed] = events.of_kind(EventKind.LOG_DIR_FAILED)
    assert failed["action"] == "halt"
    assert produce(replicas, LED).error is Errors.KAFKA_STORAGE_ERROR


def test_the_thread_notifies_once_zookeeper_takes_the_write(
    replicas: ReplicaManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_dir_failure, "NOTIFY_RETRY_S", 0.01)
    sink, events = FakeLogDirEventSink(failures=2), RecordingEventLog("b1")
    thread = handler(replicas, LogDirFailureAction.NOTIFY, sink, events)
    thread.start()
    try:
        assert sink.attempts == 0
        replicas.log_dir_failures.report(OSError(28, "No space left on device"))
        wait_until(lambda: sink.notified == [1], 10, "the notification was never written")
        assert sink.attempts == 3
        [failed] = events.of_kind(EventKind.LOG_DIR_FAILED)
        assert failed["reason"] == "OSError: [Errno 28] No space left on device"
    finally:
        thread.stop()
