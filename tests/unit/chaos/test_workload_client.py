"""The workload client against an in-process cluster (`chaos.testing.FakeBrokers`):
bootstrap and address mapping, leader moves, and every outcome written honestly to the
history (acknowledged, definitely failed, unknown). Time is a `FakeClock`; nothing sleeps."""

from __future__ import annotations

import pytest

from chaos.checker import check, final_read_from_history
from chaos.cluster import (
    ClientLike,
    Cluster,
    ClusterUnavailable,
    PollFailed,
    parse_address,
    parse_address_map,
)
from chaos.consumer import Consumer
from chaos.producer import (
    REJECTED_BEFORE_APPEND,
    AttemptKind,
    Producer,
    classify_produce,
)
from chaos.testing import FakeBrokers, FakeClock, ProduceFault, RecordingHistory
from rpc import messages as m
from rpc.errors import Errors
from zkdata.model import TopicPartition

ADVERTISED = {1: "broker1:9092", 2: "broker2:9092", 3: "broker3:9092"}
REACHABLE = {1: "127.0.0.1:9091", 2: "127.0.0.1:9092", 3: "127.0.0.1:9093"}
ADDRESS_MAP = {ADVERTISED[b]: REACHABLE[b] for b in ADVERTISED}


@pytest.fixture
def brokers() -> FakeBrokers:
    """Three brokers reached through an address map; broker 1 leads both partitions."""
    return FakeBrokers("t", 2, ADVERTISED, REACHABLE, leader=1)


@pytest.fixture
def clock() -> FakeClock:
    """Time for deadlines and history lines."""
    return FakeClock()


@pytest.fixture
def cluster(brokers: FakeBrokers) -> Cluster:
    """A cluster view bootstrapped from broker 2."""
    return Cluster([REACHABLE[2]], topics=("t",), address_map=ADDRESS_MAP, connect=brokers.connect)


def _producer(cluster: Cluster, clock: FakeClock, timeout_ms: int = 5000) -> Producer:
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


def _consumer(cluster: Cluster, clock: FakeClock, process: str = "consumer") -> Consumer:
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


# -- cluster -----------------------------------------------------------------------------


def test_cluster_maps_advertised_addresses_and_finds_leaders(
    cluster: Cluster, brokers: FakeBrokers
) -> None:
    cluster.refresh()
    assert cluster.leader_of(TopicPartition("t", 0)) == 1
    assert cluster.address_of(1) == "127.0.0.1:9091"
    assert cluster.address_of(3) == "127.0.0.1:9093"
    assert cluster.partitions_of("t") == (0, 1)
    assert cluster.leader_of(TopicPartition("t", 9)) is None


def test_cluster_refreshes_on_first_use_and_caches_one_client_per_address(
    brokers: FakeBrokers,
) -> None:
    made: list[str] = []

    def connect(address: str) -> ClientLike:
        made.append(address)
        return brokers.connect(address)

    cluster = Cluster([REACHABLE[2]], address_map=ADDRESS_MAP, connect=connect)
    assert cluster.leader_of(TopicPartition("t", 1)) == 1
    cluster.refresh()
    cluster.client(REACHABLE[2])
    assert made == [REACHABLE[2]]


def test_cluster_bootstraps_from_any_reachable_broker(brokers: FakeBrokers) -> None:
    brokers.down.add(1)
    cluster = Cluster(
        ["127.0.0.1:9999", REACHABLE[1], REACHABLE[3]],
        address_map=ADDRESS_MAP,
        connect=brokers.connect,
    )
    response = cluster.refresh()
    assert {b.id for b in response.brokers} == {2, 3}
    assert ("127.0.0.1:9093", "metadata") in brokers.calls


def test_a_broker_that_failed_is_asked_last_and_each_refresh_starts_further_on(
    brokers: FakeBrokers,
) -> None:
    cluster = Cluster(list(REACHABLE.values()), address_map=ADDRESS_MAP, connect=brokers.connect)
    brokers.down.add(1)
    for _ in range(3):
        cluster.refresh()
    asked = [a for a, method in brokers.calls if method == "metadata"]
    assert asked == [REACHABLE[1], REACHABLE[2], REACHABLE[3], REACHABLE[2]]


def test_cluster_without_a_reachable_broker_says_so(brokers: FakeBrokers) -> None:
    brokers.down.update({1, 2, 3})
    cluster = Cluster([REACHABLE[1], REACHABLE[2]], connect=brokers.connect)
    with pytest.raises(ClusterUnavailable, match=r"UNAVAILABLE from 127\.0\.0\.1:9091"):
        cluster.refresh()


def test_cluster_close_closes_every_client(cluster: Cluster) -> None:
    cluster.refresh()
    client = cluster.client(REACHABLE[2])
    cluster.close()
    assert getattr(client, "closed", False)


@pytest.mark.parametrize("text", ["broker1", "broker1:", ":9092", "b:0", "b:65536", "a b:1"])
def test_bad_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        parse_address(text)


def test_address_maps_parse_and_refuse_malformed_items() -> None:
    assert parse_address_map("broker1:9092=127.0.0.1:9091, [::1]:1=h:2") == {
        "broker1:9092": "127.0.0.1:9091",
        "[::1]:1": "h:2",
    }
    with pytest.raises(ValueError, match="ADVERTISED=REACHABLE"):
        parse_address_map("broker1:9092")
    with pytest.raises(ValueError, match="host:port"):
        parse_address_map("broker1:9092=nowhere")


# -- classification ----------------------------------------------------------------------


@pytest.mark.parametrize("error", list(Errors))
def test_every_error_code_is_classified(error: Errors) -> None:
    without_offset = classify_produce(m.ProduceResponse(error))
    with_offset = classify_produce(m.ProduceResponse(error, 4, 5))
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
        assert classify_produce(m.ProduceResponse(error)).kind is AttemptKind.UNKNOWN


# -- producer ----------------------------------------------------------------------------


def test_an_acknowledged_send_writes_invoke_then_ok_with_its_offset(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    producer = _producer(cluster, clock)
    outcome = producer.send(0, "producer-0-0")
    assert (outcome.type, outcome.offset, outcome.attempts) == ("ok", 0, 1)
    assert _lines(producer) == [("invoke", None, "producer-0-0"), ("ok", 0, "producer-0-0")]
    assert brokers.values(0) == ["producer-0-0"]


def test_a_leader_move_is_followed_after_a_refresh(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
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
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
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
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
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
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
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
    cluster: Cluster,
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
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    cluster.refresh()
    brokers.inject(REACHABLE[1], ProduceFault(Errors.NOT_LEADER_OR_FOLLOWER, append=True))
    brokers.move_leader(0, 3)
    outcome = _producer(cluster, clock).send(0, "v0")
    assert (outcome.type, outcome.offset, outcome.attempts_unknown) == ("ok", 1, 1)


def test_no_leader_until_the_deadline_fails_without_sending(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.move_leader(0, -1)
    outcome = _producer(cluster, clock, timeout_ms=500).send(0, "v0")
    assert (outcome.type, outcome.attempts, outcome.error) == ("fail", 0, "LEADER_NOT_AVAILABLE")
    assert not [c for c in brokers.calls if c[1] == "produce"]


def test_a_batch_gives_each_value_its_op_and_offset(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    producer = _producer(cluster, clock)
    producer.send(1, "first")
    outcomes = producer.send_batch(1, ["a", "b", "c"])

    assert [o.offset for o in outcomes] == [1, 2, 3]
    ops = _ops(producer).ops[2:]
    assert [op.type for op in ops] == ["invoke"] * 3 + ["ok"] * 3
    assert [op.op_id for op in ops] == [1, 2, 3, 1, 2, 3]
    assert producer.send_batch(1, []) == []


def test_producer_refuses_a_history_of_another_process(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match="belongs to 'x'"):
        Producer(cluster, "t", "producer-0", RecordingHistory("x"))


# -- consumer ----------------------------------------------------------------------------


def test_poll_reads_records_and_records_the_watermark(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].extend(["a", "b", "c"])
    consumer = _consumer(cluster, clock)

    assert consumer.poll(0, 1, 500) == [(1, "b"), (2, "c")]
    invoke, ok = _ops(consumer).ops
    assert (invoke.type, invoke.offset, ok.type, ok.offset) == ("invoke", 1, "ok", 3)
    assert ok.records == ((1, "b"), (2, "c"))


def test_poll_follows_a_leader_move(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[1].append("a")
    consumer = _consumer(cluster, clock)
    cluster.refresh()
    brokers.move_leader(1, 3)
    assert consumer.poll(1, 0) == [(0, "a")]
    assert _ops(consumer).ops[-1].attempts == 2


def test_a_poll_that_cannot_read_fails_and_raises(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.down.add(1)
    consumer = _consumer(cluster, clock)
    with pytest.raises(PollFailed, match="t-0 from 0"):
        consumer.poll(0, 0)
    last = _ops(consumer).ops[-1]
    assert last.type == "fail"
    assert last.error is not None


def test_read_all_pages_to_the_watermark_and_matches_the_history(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
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
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].append("a")
    brokers.move_leader(1, -1)
    read = _consumer(cluster, clock).read_all([0, 1], timeout_s=2.0)
    assert read == {0: [(0, "a")]}


def test_transport_errors_are_retried_by_polls(
    cluster: Cluster, clock: FakeClock, brokers: FakeBrokers
) -> None:
    brokers.logs[0].append("a")
    cluster.refresh()
    brokers.down.add(1)
    brokers.move_leader(0, 2)
    assert _consumer(cluster, clock).poll(0, 0) == [(0, "a")]
