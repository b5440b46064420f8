"""`client.Client`'s retried calls against an in-process cluster (`client.testing`):
Produce and Fetch follow leader moves, retry what is retriable, stop at a final error or
after `max_attempts`, and name every failed attempt; ElectLeaders finds the controller,
follows NOT_CONTROLLER and gives up on an unreachable one. Time is a `FakeClock`."""

from __future__ import annotations

import pytest

from chaos.testing import FakeClock
from client import (
    Client,
    ControlLike,
    FetchFailed,
    Produced,
    ProduceFailed,
    TransportError,
)
from client.testing import FakeBrokers, ProduceFault
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors, RpcUnavailable

REACHABLE = {1: "127.0.0.1:9091", 2: "127.0.0.1:9092", 3: "127.0.0.1:9093"}
ADVERTISED = {b: f"broker{b}:9092" for b in REACHABLE}
ADDRESS_MAP = {ADVERTISED[b]: REACHABLE[b] for b in REACHABLE}
TP0 = TopicPartition("t", 0)


def _records(*values: str) -> list[m.ProducedRecord]:
    return [m.ProducedRecord(None, v.encode()) for v in values]


@pytest.fixture
def brokers() -> FakeBrokers:
    """Three brokers reached through an address map; broker 1 leads both partitions."""
    return FakeBrokers("t", 2, ADVERTISED, REACHABLE, leader=1)


@pytest.fixture
def client(brokers: FakeBrokers) -> Client:
    """A client whose sleeps move a fake clock (so refreshes are never rate-limited away)."""
    clock = FakeClock()
    return Client(
        [REACHABLE[2]],
        topics=("t",),
        address_map=ADDRESS_MAP,
        max_attempts=4,
        backoff_s=0.2,
        connect=brokers.connect,
        sleep=clock.sleep,
        clock=clock.monotonic,
    )


def test_an_acknowledged_produce_returns_its_offsets(client: Client, brokers: FakeBrokers) -> None:
    produced = client.produce("t", 0, _records("a", "b"), acks=-1)
    assert (produced.base_offset, produced.last_offset, produced.attempt_errors) == (0, 1, ())
    assert brokers.values(0) == ["a", "b"]


def test_produce_follows_a_leader_move(client: Client, brokers: FakeBrokers) -> None:
    client.refresh()
    brokers.move_leader(0, 3)
    produced = client.produce("t", 0, _records("a"))
    assert produced.attempt_errors == ("NOT_LEADER_OR_FOLLOWER",)
    assert (REACHABLE[3], "produce") in brokers.calls


def _batch(partition: int, *values: str) -> m.PartitionRecords:
    return m.PartitionRecords("t", partition, tuple(_records(*values)))


def test_batches_for_one_leader_go_in_one_request(client: Client, brokers: FakeBrokers) -> None:
    results = client.produce_batches([_batch(1, "x"), _batch(0, "a", "b")], acks=1)
    assert results == [Produced(0, 0), Produced(0, 1)]
    assert [c for c in brokers.calls if c[1] == "produce"] == [(REACHABLE[1], "produce")]
    assert (brokers.values(0), brokers.values(1)) == (["a", "b"], ["x"])


def test_only_the_partitions_that_failed_are_sent_again(
    client: Client, brokers: FakeBrokers
) -> None:
    client.refresh()
    brokers.move_leader(1, 3)  # the client still thinks broker 1 leads it
    results = client.produce_batches([_batch(0, "a"), _batch(1, "x"), _batch(7, "z")])
    assert results[:2] == [Produced(0, 0), Produced(0, 0, ("NOT_LEADER_OR_FOLLOWER",))]
    assert isinstance(results[2], ProduceFailed)
    assert results[2].attempt_errors == ("UNKNOWN_TOPIC_OR_PARTITION",) * 4
    assert (brokers.values(0), brokers.values(1)) == (["a"], ["x"])
    assert (REACHABLE[3], "produce") in brokers.calls


def test_a_transport_failure_retries_every_partition_of_its_request(
    client: Client, brokers: FakeBrokers
) -> None:
    brokers.inject(REACHABLE[1], ProduceFault(transport=True))
    results = client.produce_batches([_batch(0, "a"), _batch(1, "x")])
    retried = ("transport:DEADLINE_EXCEEDED",)
    assert results == [Produced(0, 0, retried), Produced(0, 0, retried)]


def test_a_final_error_is_not_retried(client: Client, brokers: FakeBrokers) -> None:
    brokers.inject(REACHABLE[1], ProduceFault(Errors.CORRUPT_MESSAGE))
    with pytest.raises(ProduceFailed, match="CORRUPT_MESSAGE") as raised:
        client.produce("t", 0, _records("a"))
    assert raised.value.attempt_errors == ("CORRUPT_MESSAGE",)
    assert [c for c in brokers.calls if c[1] == "produce"] == [(REACHABLE[1], "produce")]


def test_produce_gives_up_after_max_attempts_naming_each(
    client: Client, brokers: FakeBrokers
) -> None:
    client.refresh()
    brokers.inject(REACHABLE[1], *[ProduceFault(transport=True)] * 4)
    with pytest.raises(ProduceFailed) as raised:
        client.produce("t", 0, _records("a"))
    assert raised.value.attempt_errors == ("transport:DEADLINE_EXCEEDED",) * 4
    assert brokers.values(0) == []


def test_no_leader_is_retried_without_sending(client: Client, brokers: FakeBrokers) -> None:
    brokers.move_leader(1, -1)
    with pytest.raises(ProduceFailed, match="LEADER_NOT_AVAILABLE") as raised:
        client.produce("t", 1, _records("a"))
    assert len(raised.value.attempt_errors) == 4
    assert not [c for c in brokers.calls if c[1] == "produce"]


def test_fetch_reads_from_the_leader_and_follows_a_move(
    client: Client, brokers: FakeBrokers
) -> None:
    client.produce("t", 0, _records("a", "b", "c"))
    brokers.move_leader(0, 2)
    fetched = client.fetch(TP0, 1)
    assert [r.value for r in fetched.records] == [b"b", b"c"]
    assert fetched.high_watermark == 3
    assert (REACHABLE[2], "fetch") in brokers.calls


def test_fetch_of_an_unknown_partition_fails_after_retries(client: Client) -> None:
    with pytest.raises(FetchFailed, match="UNKNOWN_TOPIC_OR_PARTITION"):
        client.fetch(TopicPartition("t", 7), 0)


class _Controller:
    """A `ControlLike` answering ElectLeaders with scripted errors, then NONE."""

    def __init__(self, address: str, script: list[Errors | None]) -> None:
        self.address = address
        self.script = script
        self.requests: list[m.ElectLeadersRequest] = []

    def elect_leaders(self, request: m.ElectLeadersRequest) -> m.ElectLeadersResponse:
        self.requests.append(request)
        step = self.script.pop(0) if self.script else Errors.NONE
        if step is None:
            raise TransportError(RpcUnavailable(self.address, "UNAVAILABLE"))
        return m.ElectLeadersResponse(step, ())

    def close(self) -> None:
        pass


def _with_controllers(
    brokers: FakeBrokers, scripts: dict[str, list[Errors | None]]
) -> tuple[Client, dict[str, _Controller]]:
    controllers = {a: _Controller(a, s) for a, s in scripts.items()}

    def connect_control(address: str) -> ControlLike:
        return controllers.setdefault(address, _Controller(address, []))

    client = Client(
        [REACHABLE[2]],
        address_map=ADDRESS_MAP,
        connect=brokers.connect,
        connect_control=connect_control,
        sleep=lambda _s: None,
    )
    return client, controllers


def test_elect_leaders_goes_to_the_controller_metadata_names(brokers: FakeBrokers) -> None:
    client, controllers = _with_controllers(brokers, {})
    response = client.elect_leaders(0, [TP0])
    assert response.error is Errors.NONE
    # FakeBrokers names the lowest broker id as the controller
    [request] = controllers[REACHABLE[1]].requests
    assert request.partitions == (TP0,)


def test_not_controller_is_asked_again(brokers: FakeBrokers) -> None:
    client, controllers = _with_controllers(brokers, {REACHABLE[1]: [Errors.NOT_CONTROLLER]})
    assert client.elect_leaders(1).error is Errors.NONE
    assert len(controllers[REACHABLE[1]].requests) == 2


def test_an_unreachable_controller_raises_the_transport_error(brokers: FakeBrokers) -> None:
    client, controllers = _with_controllers(brokers, {"10.0.0.9:9092": [None, None, None]})
    with pytest.raises(TransportError, match=r"UNAVAILABLE from 10\.0\.0\.9:9092"):
        client.elect_leaders(0, controller="10.0.0.9:9092")
    assert len(controllers["10.0.0.9:9092"].requests) == 3
