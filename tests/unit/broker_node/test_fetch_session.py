"""`FetchSessionCache`, the leader's incremental fetch sessions (KIP-227), as pure state:
opening, updating, forgetting and closing sessions, the epoch check, what an incremental
answer names, and eviction. The clock is a number the test passes."""

from __future__ import annotations

import random

import pytest

from broker_node.fetch_session import FetchSessionCache
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

A = TopicPartition("orders", 0)
B = TopicPartition("orders", 1)
C = TopicPartition("payments", 0)


def ask(tp: TopicPartition, offset: int = 0, epoch: int = 3) -> m.FetchPartition:
    return m.FetchPartition(tp.topic, tp.partition, offset, epoch)


def read(
    tp: TopicPartition, hw: int = 0, records: int = 0, error: Errors = Errors.NONE
) -> m.FetchedPartition:
    return m.FetchedPartition(
        tp.topic,
        tp.partition,
        error,
        high_watermark=hw,
        log_start_offset=0,
        log_end_offset=hw + records,
        records=tuple(m.FetchedRecord(hw + i, 3, 0, None, b"v") for i in range(records)),
    )


def full(
    *asks: m.FetchPartition, session_id: int = 0, epoch: int = m.INITIAL_EPOCH
) -> m.FetchRequest:
    return m.FetchRequest(asks, replica_id=2, session_id=session_id, session_epoch=epoch)


def incremental(
    session_id: int,
    epoch: int,
    *asks: m.FetchPartition,
    forgotten: tuple[TopicPartition, ...] = (),
) -> m.FetchRequest:
    return m.FetchRequest(
        asks, replica_id=2, session_id=session_id, session_epoch=epoch, forgotten=forgotten
    )


@pytest.fixture
def cache() -> FetchSessionCache:
    return FetchSessionCache(max_sessions=2, eviction_s=100, rng=random.Random(7))


def open_session(cache: FetchSessionCache, *asks: m.FetchPartition, now: float = 0.0) -> int:
    context = cache.context(full(*asks), now)
    cache.answer(context, [read(a.topic_partition) for a in asks])
    assert context.session is not None
    return context.session_id


def test_a_full_fetch_at_epoch_0_opens_a_session_holding_its_partitions(
    cache: FetchSessionCache,
) -> None:
    context = cache.context(full(ask(A), ask(B)), 0.0)
    assert context.error is Errors.NONE
    assert context.full
    assert [f.topic_partition for f in context.reads] == [A, B]
    assert context.session_id > 0
    answered = cache.answer(context, [read(A), read(B)])
    assert [p.topic_partition for p in answered] == [A, B]  # a full answer names all
    session = cache.session(context.session_id)
    assert session is not None
    assert set(session.partitions) == {A, B}
    assert session.next_epoch == 1


def test_a_sessionless_fetch_opens_nothing_and_closes_the_session_it_names(
    cache: FetchSessionCache,
) -> None:
    session_id = open_session(cache, ask(A))
    context = cache.context(full(ask(A), session_id=session_id, epoch=m.FINAL_EPOCH), 0.0)
    assert context.session is None
    assert context.session_id == m.NO_SESSION_ID
    assert cache.session(session_id) is None
    assert len(cache) == 0


def test_a_consumer_fetch_without_session_fields_is_sessionless(cache: FetchSessionCache) -> None:
    context = cache.context(m.FetchRequest((ask(A),)), 0.0)
    assert context.session is None
    assert len(cache) == 0


def test_an_incremental_fetch_reads_every_partition_of_the_session(
    cache: FetchSessionCache,
) -> None:
    session_id = open_session(cache, ask(A, 5), ask(B, 7))
    context = cache.context(incremental(session_id, 1, ask(B, 9)), 1.0)
    assert not context.full
    assert {f.topic_partition: f.fetch_offset for f in context.reads} == {A: 5, B: 9}


def test_an_incremental_fetch_adds_and_forgets_partitions(cache: FetchSessionCache) -> None:
    session_id = open_session(cache, ask(A), ask(B))
    context = cache.context(incremental(session_id, 1, ask(C), forgotten=(A,)), 1.0)
    assert {f.topic_partition for f in context.reads} == {B, C}


def test_an_incremental_answer_names_only_changed_partitions(cache: FetchSessionCache) -> None:
    session_id = open_session(cache, ask(A), ask(B), ask(C))  # all answered at hw 0
    context = cache.context(incremental(session_id, 1), 1.0)
    answered = cache.answer(context, [read(A, hw=0), read(B, hw=4), read(C, records=2)])
    assert [p.topic_partition for p in answered] == [B, C]  # new hw; records
    # what was sent is remembered: the same state again is not sent again
    context = cache.context(incremental(session_id, 2), 2.0)
    assert cache.answer(context, [read(A), read(B, hw=4), read(C)]) == ()


def test_errors_are_answered_every_time(cache: FetchSessionCache) -> None:
    session_id = open_session(cache, ask(A))
    for epoch in (1, 2):
        context = cache.context(incremental(session_id, epoch), float(epoch))
        answered = cache.answer(context, [read(A, error=Errors.NOT_LEADER_OR_FOLLOWER)])
        assert [p.error for p in answered] == [Errors.NOT_LEADER_OR_FOLLOWER]


def test_a_partition_added_later_is_answered_in_full_once(cache: FetchSessionCache) -> None:
    session_id = open_session(cache, ask(A))
    context = cache.context(incremental(session_id, 1, ask(B)), 1.0)
    answered = cache.answer(context, [read(A), read(B)])
    assert [p.topic_partition for p in answered] == [B]  # nothing sent about B yet


def test_an_unknown_session_is_refused(cache: FetchSessionCache) -> None:
    context = cache.context(incremental(12345, 1, ask(A)), 0.0)
    assert context.error is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert context.reads == ()


@pytest.mark.parametrize("epoch", [2, 5])
def test_a_wrong_epoch_is_refused_and_the_session_kept(
    cache: FetchSessionCache, epoch: int
) -> None:
    session_id = open_session(cache, ask(A))
    context = cache.context(incremental(session_id, epoch), 0.0)
    assert context.error is Errors.INVALID_FETCH_SESSION_EPOCH
    assert cache.context(incremental(session_id, 1), 0.0).error is Errors.NONE


def test_a_replayed_epoch_is_refused(cache: FetchSessionCache) -> None:
    session_id = open_session(cache, ask(A))
    assert cache.context(incremental(session_id, 1), 0.0).error is Errors.NONE
    assert (
        cache.context(incremental(session_id, 1), 0.0).error is Errors.INVALID_FETCH_SESSION_EPOCH
    )


def test_a_full_fetch_at_epoch_0_naming_a_session_replaces_it(cache: FetchSessionCache) -> None:
    old = open_session(cache, ask(A))
    context = cache.context(full(ask(B), session_id=old), 0.0)
    assert context.session_id not in (old, m.NO_SESSION_ID)
    assert cache.ids() == [context.session_id]


def test_a_full_cache_evicts_the_least_recently_used_idle_session(cache: FetchSessionCache) -> None:
    first = open_session(cache, ask(A), now=0.0)
    second = open_session(cache, ask(B), now=50.0)
    cache.context(incremental(first, 1), 60.0)  # first used again: second is now the LRU
    third = open_session(cache, ask(C), now=160.0)  # second idle 110 s >= 100
    assert set(cache.ids()) == {first, third}
    assert cache.evictions == 1
    assert cache.context(incremental(second, 1), 160.0).error is (Errors.FETCH_SESSION_ID_NOT_FOUND)


def test_a_full_cache_of_busy_sessions_answers_without_a_session(cache: FetchSessionCache) -> None:
    open_session(cache, ask(A), now=0.0)
    open_session(cache, ask(B), now=0.0)
    context = cache.context(full(ask(C)), 10.0)
    assert context.session is None
    assert context.error is Errors.NONE
    assert [f.topic_partition for f in context.reads] == [C]  # served all the same
    assert len(cache) == 2


def test_a_follower_takes_the_slot_of_a_busy_consumer_session(cache: FetchSessionCache) -> None:
    consumer = cache.context(
        m.FetchRequest((ask(A),), replica_id=-1, session_epoch=m.INITIAL_EPOCH), 0.0
    ).session_id
    follower = open_session(cache, ask(B), now=0.0)
    newcomer = open_session(cache, ask(C), now=1.0)
    assert set(cache.ids()) == {follower, newcomer}
    assert consumer not in cache.ids()


def test_negative_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        FetchSessionCache(max_sessions=-1)
