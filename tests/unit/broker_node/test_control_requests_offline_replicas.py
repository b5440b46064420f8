"""Replicas of a failed log directory (KIP-112) are offline, Kafka 2.8's
`HostedPartition.Offline`: LeaderAndIsr and StopReplica answer KAFKA_STORAGE_ERROR for
them whatever their leader epoch, before any epoch check, and change nothing (Kafka's
`becomeLeaderOrFollower` and `stopReplicas`). The other partitions of the same request
are applied as usual. First the control request handler alone, then with the real
replica manager and log-dir failure handler on a real directory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from broker_node.control_requests import ControlRequestHandler
from broker_node.log_dir_failure import LogDirFailureAction, LogDirFailureHandler
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore, FakeLogDirEventSink
from domain import EPOCH_DURING_DELETE, TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from rpc import messages as m
from rpc.errors import Errors

BROKER = 1
HEADER = m.ControlHeader(2, 5, 100)
P0, P1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
#: a partition the broker has not hosted since it started
NEW = TopicPartition("orders", 2)


def _no_shutdown(_: m.ControlledShutdownRequest) -> m.ControlledShutdownResponse:
    return m.ControlledShutdownResponse(Errors.NOT_CONTROLLER)


def handler(
    replicas: ReplicaManager | None = None, events: RecordingEventLog | None = None
) -> ControlRequestHandler:
    control = ControlRequestHandler(
        BROKER, lambda: 100, events or RecordingEventLog("b1"), _no_shutdown, replicas
    )
    control.on_registered()
    return control


def lead(tp: TopicPartition, leader_epoch: int) -> m.LeaderAndIsrPartitionState:
    """Broker 1 leads `tp` at `leader_epoch`, replicas and ISR [1, 2]."""
    return m.LeaderAndIsrPartitionState(
        tp.topic, tp.partition, 5, BROKER, leader_epoch, (1, 2), 0, (1, 2)
    )


def leader_and_isr(
    control: ControlRequestHandler, *states: m.LeaderAndIsrPartitionState
) -> dict[TopicPartition, Errors]:
    answer = control.leader_and_isr(m.LeaderAndIsrRequest(HEADER, states))
    assert answer.error is Errors.NONE
    return {r.topic_partition: r.error for r in answer.partition_errors}


def stop_replica(
    control: ControlRequestHandler, *entries: tuple[TopicPartition, int, bool]
) -> dict[TopicPartition, Errors]:
    """StopReplica of (partition, leader epoch, delete) entries."""
    states = tuple(
        m.StopReplicaPartitionState(tp.topic, tp.partition, e, d) for tp, e, d in entries
    )
    answer = control.stop_replica(m.StopReplicaRequest(HEADER, states))
    assert answer.error is Errors.NONE
    return {r.topic_partition: r.error for r in answer.partition_errors}


@dataclass(frozen=True)
class Case:
    """A control request naming P0, offline, and P1, online (both led at leader epoch 5
    before P0 went offline), and what P1 is answered."""

    name: str
    offline_entry: tuple[int, bool]
    online_entry: tuple[int, bool]
    online_answer: Errors


STOP_CASES = [
    Case("stop at a newer epoch", (6, False), (6, False), Errors.NONE),
    Case("delete at a newer epoch", (6, True), (6, True), Errors.NONE),
    Case("delete during topic deletion", (EPOCH_DURING_DELETE, True), (6, True), Errors.NONE),
    Case("stop at the same epoch", (5, False), (5, False), Errors.FENCED_LEADER_EPOCH),
    Case("stop at an older epoch", (1, False), (1, True), Errors.FENCED_LEADER_EPOCH),
]


@pytest.mark.parametrize("case", STOP_CASES, ids=[c.name for c in STOP_CASES])
def test_stop_replica_answers_an_offline_replica_storage_error_and_leaves_it(case: Case) -> None:
    control = handler()
    assert leader_and_isr(control, lead(P0, 5), lead(P1, 5)) == {
        P0: Errors.NONE,
        P1: Errors.NONE,
    }
    control.take_offline([P0])
    answers = stop_replica(control, (P0, *case.offline_entry), (P1, *case.online_entry))
    assert answers == {P0: Errors.KAFKA_STORAGE_ERROR, P1: case.online_answer}
    assert control.offline_partitions() == {P0}
    assert P0 not in control.hosted_partitions()


@pytest.mark.parametrize(
    ("leader_epoch", "online_answer"),
    [(6, Errors.NONE), (5, Errors.STALE_CONTROLLER_EPOCH), (0, Errors.STALE_CONTROLLER_EPOCH)],
    ids=["newer", "same", "older"],
)
def test_leader_and_isr_answers_an_offline_replica_storage_error_at_any_epoch(
    leader_epoch: int, online_answer: Errors
) -> None:
    control = handler()
    leader_and_isr(control, lead(P0, 5), lead(P1, 5))
    control.take_offline([P0])
    answers = leader_and_isr(control, lead(P0, leader_epoch), lead(P1, leader_epoch))
    assert answers == {P0: Errors.KAFKA_STORAGE_ERROR, P1: online_answer}
    assert P0 not in control.hosted_partitions()


def test_an_offline_replica_refused_is_counted_in_request_accepted_not_as_fenced() -> None:
    events = RecordingEventLog("b1")
    control = handler(events=events)
    leader_and_isr(control, lead(P0, 5))
    control.take_offline([P0])
    stop_replica(control, (P0, 6, True))
    accepted = events.of_kind(EventKind.REQUEST_ACCEPTED)[-1]
    assert (accepted["api"], accepted["partitions"], accepted["partition_errors"]) == (
        "StopReplica",
        1,
        1,
    )
    assert events.of_kind(EventKind.PARTITION_FENCED) == []


# -- with the real replica manager ---------------------------------------------------------


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[ControlRequestHandler, ReplicaManager]]:
    """Broker 1 leading P0 and P1, one record each, then its log directory fails
    (`--on-log-dir-failure notify`): both go offline."""
    replicas = ReplicaManager(
        BROKER,
        ReplicationConfig(data_dir=tmp_path),
        FakeIsrStore(),
        RecordingEventLog("b1"),
        lambda _topics: {},
    )
    control = handler(replicas)
    assert leader_and_isr(control, lead(P0, 5), lead(P1, 5)) == {
        P0: Errors.NONE,
        P1: Errors.NONE,
    }
    for tp in (P0, P1):
        partition = replicas.partition(tp)
        assert partition is not None
        partition.log.append_as_leader([(b"k", b"v", 5)], 5)
    replicas.log_dir_failures.report(OSError(5, "Input/output error"))
    failure = LogDirFailureHandler(
        BROKER,
        replicas.log_dir_failures,
        replicas,
        FakeLogDirEventSink(),
        RecordingEventLog("b1"),
        LogDirFailureAction.NOTIFY,
        lambda: None,
        control.take_offline,
    )
    failure.handle("OSError: EIO")
    yield control, replicas
    replicas.shutdown()


def test_the_failed_directorys_replicas_are_offline_on_the_handler(
    broker: tuple[ControlRequestHandler, ReplicaManager],
) -> None:
    control, _ = broker
    assert control.offline_partitions() == {P0, P1}
    assert control.hosted_partitions() == {}


def test_stop_replica_with_delete_answers_storage_error_and_keeps_the_files(
    broker: tuple[ControlRequestHandler, ReplicaManager], tmp_path: Path
) -> None:
    control, replicas = broker
    answers = stop_replica(control, (P0, EPOCH_DURING_DELETE, True), (P1, 6, False), (NEW, 0, True))
    assert answers == {
        P0: Errors.KAFKA_STORAGE_ERROR,
        P1: Errors.KAFKA_STORAGE_ERROR,
        NEW: Errors.NONE,  # Kafka's HostedPartition.None: nothing to stop
    }
    assert (tmp_path / "orders-0").is_dir()
    assert replicas.partition(P0) is not None


def test_a_partition_never_opened_keeps_its_files_in_the_offline_directory(
    broker: tuple[ControlRequestHandler, ReplicaManager], tmp_path: Path
) -> None:
    """Files left by an earlier run of the broker: its logs are no longer known once the
    directory failed, so deleting the partition removes nothing."""
    left = tmp_path / f"{NEW.topic}-{NEW.partition}"
    left.mkdir()
    control, _ = broker
    assert stop_replica(control, (NEW, EPOCH_DURING_DELETE, True)) == {NEW: Errors.NONE}
    assert left.is_dir()


def test_leader_and_isr_answers_storage_error_for_offline_and_new_replicas(
    broker: tuple[ControlRequestHandler, ReplicaManager],
) -> None:
    control, replicas = broker
    answers = leader_and_isr(control, lead(P0, 9), lead(NEW, 0))
    assert answers == {
        P0: Errors.KAFKA_STORAGE_ERROR,
        NEW: Errors.KAFKA_STORAGE_ERROR,
    }
    assert replicas.partition(NEW) is None
    assert control.hosted_partitions() == {}
