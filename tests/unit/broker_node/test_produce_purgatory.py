"""The produce purgatory: a parked acks=all Produce holds no thread and is answered by
whoever can decide it (a check after the ISR caught up or leadership moved), by its
timeout, or at shutdown, exactly once. A scripted judge stands in for the partition."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from broker_node.purgatory import ProducePurgatory
from domain import TopicPartition
from harness.waiting import wait_until
from rpc import messages as m
from rpc.errors import Errors

TP = TopicPartition("t", 0)
OTHER = TopicPartition("t", 1)


class Judge:
    """Decides nothing until told: `outcome` is what `acks_outcome` answers."""

    def __init__(self) -> None:
        self.outcome: Errors | None = None
        self.asked: list[tuple[int, int]] = []

    def acks_outcome(self, last_offset: int, leadership_term: int) -> Errors | None:
        self.asked.append((last_offset, leadership_term))
        return self.outcome


@pytest.fixture
def purgatory() -> Iterator[ProducePurgatory]:
    p = ProducePurgatory()
    p.start()
    yield p
    p.shutdown()


def test_an_undecided_request_parks_without_an_answer(purgatory: ProducePurgatory) -> None:
    judge = Judge()
    future = purgatory.park(TP, judge, 0, 9, 1, time.monotonic() + 30.0)
    assert not future.done()
    assert purgatory.waiting() == 1
    assert judge.asked == [(9, 1)]


def test_only_partitions_with_a_parked_request_are_named(purgatory: ProducePurgatory) -> None:
    judge = Judge()
    assert purgatory.parked_partitions() == set()
    purgatory.park(TP, judge, 0, 9, 1, time.monotonic() + 30.0)
    purgatory.park(TP, judge, 10, 19, 1, time.monotonic() + 30.0)
    assert purgatory.parked_partitions() == {TP}
    judge.outcome = Errors.NONE
    purgatory.check(TP, judge)
    assert purgatory.parked_partitions() == set()


def test_a_check_after_the_isr_caught_up_answers_with_the_offsets(
    purgatory: ProducePurgatory,
) -> None:
    judge = Judge()
    future = purgatory.park(TP, judge, 0, 9, 1, time.monotonic() + 30.0)
    purgatory.check(OTHER, judge)  # another partition's progress decides nothing here
    assert not future.done()
    judge.outcome = Errors.NONE
    purgatory.check(TP, judge)
    assert future.result(0) == m.PartitionProduceResult(TP.topic, TP.partition, Errors.NONE, 0, 9)
    assert purgatory.waiting() == 0


def test_a_request_decided_at_parking_is_answered_at_once(purgatory: ProducePurgatory) -> None:
    judge = Judge()
    judge.outcome = Errors.NOT_LEADER_OR_FOLLOWER
    future = purgatory.park(TP, judge, 3, 4, 2, time.monotonic() + 30.0)
    assert future.result(0) == m.PartitionProduceResult(
        TP.topic, TP.partition, Errors.NOT_LEADER_OR_FOLLOWER, 3, 4
    )
    assert purgatory.waiting() == 0


def test_the_timer_answers_request_timed_out(purgatory: ProducePurgatory) -> None:
    judge = Judge()
    late = purgatory.park(TP, judge, 0, 0, 1, time.monotonic() + 30.0)
    soon = purgatory.park(TP, judge, 1, 1, 1, time.monotonic() + 0.05)
    assert soon.result(5).error is Errors.REQUEST_TIMED_OUT
    assert not late.done()
    judge.outcome = Errors.NONE
    purgatory.check(TP, judge)
    assert late.result(0).error is Errors.NONE


def test_each_request_is_answered_once(purgatory: ProducePurgatory) -> None:
    judge = Judge()
    future = purgatory.park(TP, judge, 0, 0, 1, time.monotonic() + 0.05)
    wait_until(future.done, 5, "the timer never answered")
    judge.outcome = Errors.NONE
    purgatory.check(TP, judge)  # a late check finds nothing to answer
    assert future.result(0).error is Errors.REQUEST_TIMED_OUT


def test_shutdown_answers_every_parked_request() -> None:
    purgatory = ProducePurgatory()
    purgatory.start()
    futures = [purgatory.park(TP, Judge(), i, i, 1, time.monotonic() + 30.0) for i in range(3)]
    purgatory.shutdown()
    assert [f.result(0).error for f in futures] == [Errors.NOT_LEADER_OR_FOLLOWER] * 3
    after = purgatory.park(TP, Judge(), 5, 5, 1, time.monotonic() + 30.0)
    assert after.result(0).error is Errors.NOT_LEADER_OR_FOLLOWER
