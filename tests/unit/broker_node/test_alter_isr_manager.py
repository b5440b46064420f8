"""`AlterIsrManager` (`broker_node.alter_isr_manager`), after Kafka 2.8's
`AlterIsrManagerTest`: one item per partition, every unsent item in one request, one request
in flight, items kept and sent again after a request-level error or a transport failure,
each answered partition handed to its item's callback; and where it finds the controller.

Most tests drive `send_once` on the test's thread with a recording `send`; the one-in-flight
test runs the real `alter-isr-sender` thread and synchronises on events.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from broker_node.alter_isr_manager import (
    AlterIsrItem,
    AlterIsrManager,
    controller_address,
    started_alter_isr,
)
from broker_node.config import BrokerConfig
from broker_node.metadata_cache import MetadataSnapshot
from domain import EndPoint, LeaderAndIsr, TopicPartition
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors, RpcUnavailable

TP0 = TopicPartition("orders", 0)
TP1 = TopicPartition("orders", 1)
BROKER_EPOCH = 101


class Controller:
    """A recording `send`: answers each partition with `errors` (NONE by default) or the
    whole request with `top_level`; raises `failure` when set."""

    def __init__(self) -> None:
        self.requests: list[m.AlterIsrRequest] = []
        self.errors: dict[TopicPartition, Errors] = {}
        self.top_level = Errors.NONE
        self.failure: Exception | None = None
        self.omit: set[TopicPartition] = set()

    def __call__(self, request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        self.requests.append(request)
        if self.failure is not None:
            raise self.failure
        if self.top_level is not Errors.NONE:
            return m.AlterIsrResponse(self.top_level)
        results = []
        for p in request.partitions:
            if p.topic_partition in self.omit:
                continue
            error = self.errors.get(p.topic_partition, Errors.NONE)
            if error is Errors.NONE:
                result = m.AlterIsrPartitionResult(
                    p.topic_partition,
                    error,
                    1,
                    p.leader_epoch,
                    p.new_isr,
                    p.current_isr_version + 1,
                )
            else:
                result = m.AlterIsrPartitionResult(p.topic_partition, error)
            results.append(result)
        return m.AlterIsrResponse(Errors.NONE, tuple(results))


class Answers(list[tuple[TopicPartition, m.AlterIsrPartitionResult]]):
    """The answers items' callbacks received, in order."""


def item(tp: TopicPartition, answers: Answers, isr: tuple[int, ...] = (1, 2, 3)) -> AlterIsrItem:
    """Broker 1's proposal for `tp` at leader epoch 5, zkVersion 7; answers are recorded."""
    return AlterIsrItem(tp, LeaderAndIsr(1, 5, isr, 7), lambda r: answers.append((tp, r)))


def manager(controller: Callable[[m.AlterIsrRequest], m.AlterIsrResponse]) -> AlterIsrManager:
    """A manager of broker 1 whose thread is not started."""
    return AlterIsrManager(1, lambda: BROKER_EPOCH, controller, retry_backoff_s=0.01)


def test_basic_one_request_carries_the_proposal() -> None:
    """Kafka's testBasic."""
    controller, answers = Controller(), Answers()
    alter = manager(controller)
    assert alter.submit(item(TP0, answers))
    assert alter.send_once(list(alter._unsent.values()))
    (request,) = controller.requests
    assert request == m.AlterIsrRequest(
        1, BROKER_EPOCH, (m.AlterIsrPartition(TP0, 5, (1, 2, 3), 7),)
    )
    assert answers == [(TP0, m.AlterIsrPartitionResult(TP0, Errors.NONE, 1, 5, (1, 2, 3), 8))]
    assert alter.pending() == []


def test_overwrite_within_batch_is_refused() -> None:
    """Kafka's testOverwriteWithinBatch: a second item for a partition is not queued."""
    alter = manager(Controller())
    first, second = item(TP0, Answers()), item(TP0, Answers(), isr=(1,))
    assert alter.submit(first)
    assert not alter.submit(second)
    assert list(alter._unsent.values()) == [first]


def test_single_batch_sends_every_partition_in_one_request() -> None:
    """Kafka's testSingleBatch."""
    controller, answers = Controller(), Answers()
    alter = manager(controller)
    for tp in (TP0, TP1):
        alter.submit(item(tp, answers))
    alter.send_once(list(alter._unsent.values()))
    (request,) = controller.requests
    assert [p.topic_partition for p in request.partitions] == [TP0, TP1]
    assert sorted(tp for tp, _ in answers) == [TP0, TP1]


@pytest.mark.parametrize(
    "error", [Errors.STALE_BROKER_EPOCH, Errors.NOT_CONTROLLER, Errors.UNKNOWN_SERVER_ERROR]
)
def test_a_top_level_error_keeps_the_items_for_the_next_request(error: Errors) -> None:
    """Kafka's testStaleBrokerEpoch, testUnknownServer: nothing is answered, the items stay
    unsent and go out again."""
    controller, answers = Controller(), Answers()
    controller.top_level = error
    alter = manager(controller)
    alter.submit(item(TP0, answers))
    assert not alter.send_once(list(alter._unsent.values()))
    assert answers == []
    assert alter.pending() == [TP0]
    controller.top_level = Errors.NONE
    assert alter.send_once(list(alter._unsent.values()))
    assert [tp for tp, _ in answers] == [TP0]


def test_a_transport_failure_keeps_the_items() -> None:
    """Kafka's testRetryOnErrorResponse: the request did not reach the controller."""
    controller, answers = Controller(), Answers()
    controller.failure = RpcUnavailable("controller:9092", "UNAVAILABLE", "down")
    alter = manager(controller)
    alter.submit(item(TP0, answers))
    assert not alter.send_once(list(alter._unsent.values()))
    assert (answers, alter.pending()) == ([], [TP0])


@pytest.mark.parametrize(
    "error",
    [Errors.INVALID_UPDATE_VERSION, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.FENCED_LEADER_EPOCH],
)
def test_a_partition_error_goes_to_its_item(error: Errors) -> None:
    """Kafka's testInvalidUpdateVersion, testUnknownTopicPartition: the partition's error is
    the item's answer; the item leaves the manager (the leader decides what follows)."""
    controller, answers = Controller(), Answers()
    controller.errors[TP0] = error
    alter = manager(controller)
    alter.submit(item(TP0, answers))
    alter.submit(item(TP1, answers))
    assert alter.send_once(list(alter._unsent.values()))
    assert dict(answers)[TP0].error is error
    assert dict(answers)[TP1].error is Errors.NONE
    assert alter.pending() == []


def test_partition_missing_in_response_stays_for_the_next_request() -> None:
    """Kafka's testPartitionMissingInResponse."""
    controller, answers = Controller(), Answers()
    controller.omit = {TP1}
    alter = manager(controller)
    alter.submit(item(TP0, answers))
    alter.submit(item(TP1, answers))
    alter.send_once(list(alter._unsent.values()))
    assert [tp for tp, _ in answers] == [TP0]
    assert alter.pending() == [TP1]


def test_clear_pending_drops_the_unsent_item() -> None:
    alter = manager(Controller())
    alter.submit(item(TP0, Answers()))
    alter.clear_pending(TP0)
    assert alter.pending() == []
    assert alter.submit(item(TP0, Answers()))


def test_one_in_flight() -> None:
    """Kafka's testOneInFlight: while a request is unanswered no other is sent; an item
    submitted meanwhile goes in the next request."""
    controller = Controller()
    release = threading.Event()
    started = threading.Event()

    def slow(request: m.AlterIsrRequest) -> m.AlterIsrResponse:
        started.set()
        if len(controller.requests) == 0:
            release.wait(10)
        return controller(request)

    answers = Answers()
    alter = manager(slow)
    alter.start()
    try:
        alter.submit(item(TP0, answers))
        assert started.wait(10)
        assert alter.submit(item(TP1, answers))
        assert controller.requests == []  # the first is still in flight
        release.set()
        wait_until(lambda: len(answers) == 2, 10, "both partitions answered")
        first, second = controller.requests
        assert [p.topic_partition for p in first.partitions] == [TP0]
        assert [p.topic_partition for p in second.partitions] == [TP1]
    finally:
        release.set()
        alter.stop()


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    [
        (None, None),
        (MetadataSnapshot(controller_id=-1, controller_epoch=0), None),
        (
            MetadataSnapshot(
                controller_id=2,
                controller_epoch=4,
                live_brokers={2: m.LiveBroker(2, (EndPoint("broker2", 9093),))},
            ),
            "broker2:9093",
        ),
        (
            MetadataSnapshot(
                controller_id=3,
                controller_epoch=4,
                live_brokers={2: m.LiveBroker(2, (EndPoint("broker2", 9093),))},
            ),
            None,
        ),
    ],
)
def test_the_controller_is_the_one_the_metadata_cache_names(
    snapshot: MetadataSnapshot | None, expected: str | None
) -> None:
    assert controller_address(snapshot) == expected


def test_a_broker_has_an_alter_isr_manager_at_2_7_only(tmp_path: Path) -> None:
    base = BrokerConfig(broker_id=1, zk_connect="zk:2181", run_dir=tmp_path)
    assert started_alter_isr(base, lambda: 1, lambda: None, None) is None
    at_2_7 = dataclasses.replace(base, inter_broker_protocol="2.7")
    manager = started_alter_isr(at_2_7, lambda: 1, lambda: None, None)
    assert manager is not None
    try:
        assert manager.submit(item(TP0, Answers()))
        assert manager.pending() == [TP0]  # no controller known: kept for the next request
    finally:
        manager.stop()
