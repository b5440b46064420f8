"""The workload client against an in-process cluster (`client.testing.FakeBrokers`):
bootstrap and address mapping, leader moves, and every outcome written honestly to the
history (acknowledged, definitely failed, unknown). Time is a `FakeClock`; nothing sleeps."""

from __future__ import annotations

import pytest

from chaos.client.consumer import Consumer, PollFailed
from chaos.client.producer import (
    REJECTED_BEFORE_APPEND,
    AttemptKind,
    Producer,
    classify_produce,
)
from chaos.testing import FakeClock, RecordingHistory
from client import Client
from client.testing import ADDRESS_MAP, REACHABLE, FakeBrokers, ProduceFault, three_brokers
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors
from rundir.checker import check, final_read_from_history


@pytest.fixture
def brokers() -> FakeBrokers:
    """Three brokers reached through an address map; broker 1 leads both partitions."""
    return three_brokers()


@pytest.fixture
def clock() -> FakeClock:
    """Time for deadlines and history lines."""
    return FakeClock()


@pytest.fixture
def cluster(brokers: FakeBrokers) -> Client:
    """A client bootstrapped from broker 2."""
    return Client([REACHABLE[2]], topics=("t",), address_map=ADDRESS_MAP, connect=brokers.connect)


def _producer(cluster: Client, clock: FakeClock, timeout_ms: int = 5000) -> Producer:
    history = RecordingHistory("producer-0", clock)
    return Producer(
        cluster,
        "t",
        "producer-0",
        history,
        -1,
        timeout_ms,
        retry_backoff_ms=100,
        clock=clock.monotonic,
        sleep=clock.sleep,
    )


def _consumer(cluster: Client, clock: FakeClock, process: str = "consumer") -> Consumer:
    history = RecordingHistory(process, clock)
    return Consumer(
        cluster,
        "t",
        process,
        history,
        timeout_ms=5000,
        retry_backoff_ms=100,
        clock=clock.monotonic,
        sleep=clock.sleep,
    )


def _lines(client: Producer | Consumer) -> list[tuple[str, int | None, str | None]]:
    history = client._history
    assert isinstance(history, RecordingHistory)
    return [(op.type, op.offset, op.value) for op in history.ops]


def _ops(client: Producer | Consumer) -> RecordingHistory:
    assert isinstance(client._history, RecordingHistory)
    return client._history


# -- classification ----------------------------------------------------------------------


@pytest.mark.parametrize("error", list(Errors))
def test_every_error_code_is_classified(error: Errors) -> None:
    without_offset = classify_produce(m.PartitionProduceResult("t", 0, error))
    with_offset = classify_produce(m.PartitionProduceResult("t", 0, error, 4, 5))
    if error is Errors.NONE:
        assert without_offset.kind is with_offset.kind is AttemptKind.ACKED
        assert with_offset.base_offset == 4
    else:
        expected = AttemptKind.REJECTED if error in REJECTED_BEFORE_APPEND else AttemptKind.UNKNOWN
        assert without_offset.kind is expected
        assert with_offset.kind is AttemptKind.UNKNOWN  # appended, then went wrong
        assert with_offset.base_offset == 4
        assert without_offset.error == error.name


def test_not_enough_replicas_after_append_and_timeouts_are_unknown() -> None:
    for error in (Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT):
        assert classify_produce(m.PartitionProduceResult("t", 0, error)).kind is AttemptKind.UNKNOWN


# -- producer ----------------------------------------------------------------------------


def test_an_acknowledged_send_writes_invoke_then_ok_with_its_offset(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    producer = _producer(cluster, clock)
    outcome = producer.send(0, "producer-0-0")
    assert (outcome.type, outcome.offset, outcome.attempts) == ("ok", 0, 1)
    assert _lines(producer) == [("invoke", None, "producer-0-0"), ("ok", 0, "producer-0-0")]
    assert brokers.values(0) == ["producer-0-0"]


def test_a_leader_move_is_followed_after_a_refresh(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    producer = _producer(cluster, clock)
    producer.send(0, "v0")
    brokers.move_leader(0, 2)

    outcome = producer.send(0, "v1")

    assert (outcome.type, outcome.offset) == ("ok", 1)
    assert (outcome.attempts, outcome.attempts_unknown) == (2, 0)
    assert [c for c in brokers.calls if c[1] == "produce"][-2:] == [
        (REACHABLE[1], "produce"),
        (REACHABLE[2], "produce"),
    ]
    assert brokers.values(0) == ["v0", "v1"]


def test_a_transport_error_then_success_is_ok_with_one_unknown_attempt(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.inject(REACHABLE[1], ProduceFault(transport=True, append=True))
    producer = _producer(cluster, clock)

    outcome = producer.send(0, "v0")

    assert (outcome.type, outcome.offset, outcome.attempts_unknown) == ("ok", 1, 1)
    assert brokers.values(0) == ["v0", "v0"]  # the first attempt did land
    history = _ops(producer).ops
    final = _consumer(cluster, clock, "final").final_read([0, 1])
    assert check(history, final).ok


def test_an_unknown_outcome_until_the_deadline_is_info(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.inject(REACHABLE[1], *[ProduceFault(transport=True)] * 100)
    producer = _producer(cluster, clock, timeout_ms=1000)

    outcome = producer.send(0, "v0")

    assert outcome.type == "info"
    assert outcome.attempts == outcome.attempts_unknown == 10  # one per 100 ms of backoff
    assert outcome.error is not None
    assert outcome.error.startswith("transport: DEADLINE_EXCEEDED")
    ((_, _, _), (kind, offset, _)) = _lines(producer)
    assert (kind, offset) == ("info", None)


def test_a_rejection_after_an_unknown_attempt_stays_info(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.inject(
        REACHABLE[1],
        ProduceFault(transport=True),
        ProduceFault(Errors.NOT_ENOUGH_REPLICAS),
    )
    outcome = _producer(cluster, clock).send(0, "v0")
    assert (outcome.type, outcome.attempts, outcome.attempts_unknown) == ("info", 2, 1)
    assert outcome.error == "NOT_ENOUGH_REPLICAS after 1 attempt(s) of unknown outcome"


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (ProduceFault(Errors.NOT_ENOUGH_REPLICAS), ("fail", None, "NOT_ENOUGH_REPLICAS")),
        (ProduceFault(Errors.INVALID_REQUIRED_ACKS), ("fail", None, "INVALID_REQUIRED_ACKS")),
        (
            ProduceFault(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, append=True),
            ("info", 0, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
        ),
        (ProduceFault(Errors.REQUEST_TIMED_OUT, append=True), ("info", 0, "REQUEST_TIMED_OUT")),
    ],
)
def test_non_retriable_answers_complete_at_once(
    cluster: Client,
    clock: FakeClock,
    brokers: FakeBrokers,
    fault: ProduceFault,
    expected: tuple[str, int | None, str],
) -> None:
    brokers.inject(REACHABLE[1], fault)
    outcome = _producer(cluster, clock).send(0, "v0")
    assert (outcome.type, outcome.offset, outcome.error) == expected
    assert outcome.attempts == 1


def test_lost_leadership_after_the_append_is_unknown_and_retried(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    cluster.refresh()
    brokers.inject(REACHABLE[1], ProduceFault(Errors.NOT_LEADER_OR_FOLLOWER, append=True))
    brokers.move_leader(0, 3)
    outcome = _producer(cluster, clock).send(0, "v0")
    assert (outcome.type, outcome.offset, outcome.attempts_unknown) == ("ok", 1, 1)


def test_no_leader_until_the_deadline_fails_without_sending(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.move_leader(0, -1)
    outcome = _producer(cluster, clock, timeout_ms=500).send(0, "v0")
    assert (outcome.type, outcome.attempts, outcome.error) == ("fail", 0, "LEADER_NOT_AVAILABLE")
    assert not [c for c in brokers.calls if c[1] == "produce"]


def test_a_batch_gives_each_value_its_op_and_offset(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    producer = _producer(cluster, clock)
    producer.send(1, "first")
    outcomes = producer.send_batch(1, ["a", "b", "c"])

    assert [o.offset for o in outcomes] == [1, 2, 3]
    ops = _ops(producer).ops[2:]
    assert [op.type for op in ops] == ["invoke"] * 3 + ["ok"] * 3
    assert [op.op_id for op in ops] == [1, 2, 3, 1, 2, 3]
    assert producer.send_batch(1, []) == []


def test_producer_refuses_a_history_of_another_process(cluster: Client) -> None:
    with pytest.raises(ValueError, match="belongs to 'x'"):
        Producer(cluster, "t", "producer-0", RecordingHistory("x"))


# -- consumer ----------------------------------------------------------------------------


def test_poll_reads_records_and_records_the_watermark(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].extend(["a", "b", "c"])
    consumer = _consumer(cluster, clock)

    assert consumer.poll(0, 1, 500) == [(1, "b"), (2, "c")]
    invoke, ok = _ops(consumer).ops
    assert (invoke.type, invoke.offset, ok.type, ok.offset) == ("invoke", 1, "ok", 3)
    assert ok.records == ((1, "b"), (2, "c"))


def test_poll_follows_a_leader_move(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[1].append("a")
    consumer = _consumer(cluster, clock)
    cluster.refresh()
    brokers.move_leader(1, 3)
    assert consumer.poll(1, 0) == [(0, "a")]
    assert _ops(consumer).ops[-1].attempts == 2


def test_a_poll_that_cannot_read_fails_and_raises(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.down.add(1)
    consumer = _consumer(cluster, clock)
    with pytest.raises(PollFailed, match="t-0 from 0"):
        consumer.poll(0, 0)
    last = _ops(consumer).ops[-1]
    assert last.type == "fail"
    assert last.error is not None


def test_read_all_pages_to_the_watermark_and_matches_the_history(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].extend(f"v{i}" for i in range(1200))
    consumer = _consumer(cluster, clock, "final")

    final = consumer.final_read([0, 1])

    assert [len(final.partitions[TopicPartition("t", p)]) for p in (0, 1)] == [1200, 0]
    polls = [op for op in _ops(consumer).ops if op.type == "ok"]
    assert len(polls) == 4  # 500 + 500 + 200, and one empty partition
    rebuilt = final_read_from_history(_ops(consumer).ops, "final")
    assert rebuilt.partitions == final.partitions
    assert final.started_ns <= rebuilt.started_ns  # the first poll's invoke


def test_read_all_leaves_out_a_partition_it_cannot_read(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].append("a")
    brokers.move_leader(1, -1)
    read = _consumer(cluster, clock).read_all([0, 1], timeout_s=2.0)
    assert read == {0: [(0, "a")]}


def test_transport_errors_are_retried_by_polls(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].append("a")
    cluster.refresh()
    brokers.down.add(1)
    brokers.move_leader(0, 2)
    assert _consumer(cluster, clock).poll(0, 0) == [(0, "a")]


def test_a_failed_log_dir_sends_producer_and_consumer_to_the_new_leader(
    cluster: Client, clock: FakeClock, brokers: FakeBrokers
) -> None:
    """As Kafka's clients take KAFKA_STORAGE_ERROR for stale metadata: the send is unknown
    (the leader may have appended before its directory failed), then retried on the new
    leader after a refresh; the poll follows too."""
    producer = _producer(cluster, clock)
    producer.send(0, "v0")
    brokers.offline.add(1)
    brokers.move_leader(0, 2)

    outcome = producer.send(0, "v1")
    polled = _consumer(cluster, clock).poll(0, 0)

    assert (outcome.type, outcome.attempts, outcome.attempts_unknown) == ("ok", 2, 1)
    assert polled == [(0, "v0"), (1, "v1")]
    assert polled[-1] == (outcome.offset, "v1")
