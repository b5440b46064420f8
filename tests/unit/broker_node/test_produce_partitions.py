"""A Produce naming several partitions, on a real `ReplicaManager` with logs on disk behind
the `ClientApi`: each partition is appended and answered on its own (an unknown topic, a
partition led elsewhere or a refused entry fails only itself), and acks=all waits for
every appended partition's ISR together, within the request's one timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from broker_node.client_api import ClientApi
from broker_node.metadata_cache import MetadataCache
from broker_node.replica_manager import ReplicaManager
from broker_node.replication_config import ReplicationConfig
from broker_node.testing import FakeIsrStore
from domain import TopicPartition
from eventlog import EventKind
from eventlog.testing import RecordingEventLog
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors

LED_A, FOLLOWED, LED_B = (TopicPartition("orders", p) for p in range(3))
RECORDS = (m.ProducedRecord(None, b"a"), m.ProducedRecord(None, b"b"))


def state(tp: TopicPartition, leader: int) -> m.LeaderAndIsrPartitionState:
    return m.LeaderAndIsrPartitionState(tp.topic, tp.partition, 1, leader, 1, (1, 2), 0, (1, 2))


def entry(
    tp: TopicPartition, records: tuple[m.ProducedRecord, ...] = RECORDS
) -> m.PartitionRecords:
    return m.PartitionRecords(tp.topic, tp.partition, records)


@pytest.fixture
def events() -> RecordingEventLog:
    return RecordingEventLog("b1")


@pytest.fixture
def replicas(tmp_path: Path, events: RecordingEventLog) -> Iterator[ReplicaManager]:
    """Broker 1 leading orders-0 and orders-2 (ISR [1,2]) and following orders-1 (leader 2,
    unknown endpoint: no fetcher)."""
    manager = ReplicaManager(
        1, ReplicationConfig(data_dir=tmp_path), FakeIsrStore(), events, lambda _t: {}
    )
    states = [state(LED_A, 1), state(FOLLOWED, 2), state(LED_B, 1)]
    assert manager.become_leader_or_follower(states, []) == {}
    yield manager
    manager.shutdown()


@pytest.fixture
def api(replicas: ReplicaManager, events: RecordingEventLog) -> ClientApi:
    return ClientApi(MetadataCache(), replicas, events)


def follower_caught_up(replicas: ReplicaManager, tp: TopicPartition, offset: int) -> None:
    """Broker 2 fetches `tp` from `offset` (its log end): the leader's high watermark moves."""
    fetch = m.FetchRequest((m.FetchPartition(tp.topic, tp.partition, offset),), replica_id=2)
    assert replicas.fetch(fetch).partitions[0].error is Errors.NONE


def errors_of(response: m.ProduceResponse) -> list[tuple[int, Errors]]:
    return [(p.partition, p.error) for p in response.partitions]


def test_each_partition_is_answered_on_its_own_in_the_order_asked(api: ClientApi) -> None:
    unknown = TopicPartition("payments", 0)
    request = m.ProduceRequest(
        (entry(LED_B), entry(unknown), entry(FOLLOWED), entry(LED_A)), acks=1
    )
    answer = api.produce(request).result(5)
    assert [(p.topic, p.partition, p.error) for p in answer.partitions] == [
        ("orders", 2, Errors.NONE),
        ("payments", 0, Errors.UNKNOWN_TOPIC_OR_PARTITION),
        ("orders", 1, Errors.NOT_LEADER_OR_FOLLOWER),
        ("orders", 0, Errors.NONE),
    ]
    assert [(p.base_offset, p.last_offset) for p in answer.partitions] == [
        (0, 1),
        (-1, -1),
        (-1, -1),
        (0, 1),
    ]


def test_refused_entries_fail_alone_and_the_rest_are_appended(
    api: ClientApi, replicas: ReplicaManager, events: RecordingEventLog
) -> None:
    late = (m.ProducedRecord(None, b"x", -5),)
    request = m.ProduceRequest(
        (
            entry(LED_A),
            entry(TopicPartition("orders", -1)),
            entry(LED_B, late),
            entry(TopicPartition("../x", 0)),
            entry(LED_A),
        ),
        acks=1,
    )
    answer = api.produce(request).result(5)
    assert errors_of(answer) == [
        (0, Errors.INVALID_REQUEST),
        (-1, Errors.UNKNOWN_TOPIC_OR_PARTITION),
        (2, Errors.INVALID_TIMESTAMP),
        (0, Errors.INVALID_TOPIC_EXCEPTION),
        (0, Errors.INVALID_REQUEST),
    ]
    assert all(p.error_message for p in answer.partitions)
    assert answer.partitions[0].error_message == "partition named twice in one request"
    ends = {p.tp: p.log.log_end_offset for p in replicas.partitions()}
    assert ends == {LED_A: 0, FOLLOWED: 0, LED_B: 0}
    (invalid,) = events.of_kind(EventKind.REQUEST_INVALID)
    assert (invalid["entries"], invalid["invalid_entries"]) == (5, 4)

    mixed = m.ProduceRequest((entry(TopicPartition("orders", -1)), entry(LED_B)), acks=1)
    assert errors_of(api.produce(mixed).result(5)) == [
        (-1, Errors.UNKNOWN_TOPIC_OR_PARTITION),
        (2, Errors.NONE),
    ]


def test_a_request_refused_as_a_whole_answers_every_partition(api: ClientApi) -> None:
    request = m.ProduceRequest((entry(LED_A), entry(LED_B)), acks=2)
    answer = api.produce(request).result(5)
    assert errors_of(answer) == [
        (0, Errors.INVALID_REQUIRED_ACKS),
        (2, Errors.INVALID_REQUIRED_ACKS),
    ]
    assert api.produce(m.ProduceRequest((), acks=1)).result(5) == m.ProduceResponse(())


def test_acks_all_waits_for_every_partition_together(
    api: ClientApi, replicas: ReplicaManager
) -> None:
    request = m.ProduceRequest(
        (entry(LED_A), entry(FOLLOWED), entry(LED_B)), acks=-1, timeout_ms=30_000
    )
    answer = api.produce(request)
    assert not answer.done()
    follower_caught_up(replicas, LED_A, 2)
    assert not answer.done(), "orders-2 is not yet on the ISR"
    follower_caught_up(replicas, LED_B, 2)
    wait_until(answer.done, 5, "the last partition's ISR caught up")
    assert [(p.error, p.base_offset, p.last_offset) for p in answer.result().partitions] == [
        (Errors.NONE, 0, 1),
        (Errors.NOT_LEADER_OR_FOLLOWER, -1, -1),
        (Errors.NONE, 0, 1),
    ]
    assert replicas.purgatory.waiting() == 0


def test_acks_all_times_out_once_for_the_request(api: ClientApi, replicas: ReplicaManager) -> None:
    replicas.purgatory.start()  # its timer answers what the ISR does not
    request = m.ProduceRequest((entry(LED_A), entry(LED_B)), acks=-1, timeout_ms=50)
    answer = api.produce(request)
    follower_caught_up(replicas, LED_A, 2)
    result = answer.result(5)
    assert [(p.error, p.base_offset) for p in result.partitions] == [
        (Errors.NONE, 0),
        (Errors.REQUEST_TIMED_OUT, 0),
    ]


def test_thousands_of_partitions_in_one_request_are_each_answered(api: ClientApi) -> None:
    absent = tuple(entry(TopicPartition("absent", p)) for p in range(5000))
    answer = api.produce(m.ProduceRequest((*absent, entry(LED_A)), acks=1)).result(5)
    assert len(answer.partitions) == 5001
    assert {p.error for p in answer.partitions[:-1]} == {Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert (answer.partitions[-1].error, answer.partitions[-1].last_offset) == (Errors.NONE, 1)
