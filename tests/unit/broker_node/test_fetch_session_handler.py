"""`FetchSessionHandler`, a follower's side of an incremental fetch session (KIP-227), as
pure state: the first fetch is full, later ones name only what changed and what was
dropped, and every kind of failure makes the next fetch full again. The last test runs it
against the leader's `FetchSessionCache` for a few rounds."""

from __future__ import annotations

import pytest

from broker_node.fetch_session import FetchSessionCache
from broker_node.fetch_session_handler import FetchSessionHandler
from domain import TopicPartition
from rpc import messages as m
from rpc.errors import Errors

A = TopicPartition("orders", 0)
B = TopicPartition("orders", 1)
C = TopicPartition("orders", 2)
SESSION = 42


def ask(tp: TopicPartition, offset: int = 0, epoch: int = 3) -> m.FetchPartition:
    return m.FetchPartition(tp.topic, tp.partition, offset, epoch)


def wanted(*asks: m.FetchPartition) -> dict[TopicPartition, m.FetchPartition]:
    return {a.topic_partition: a for a in asks}


def established(*asks: m.FetchPartition) -> FetchSessionHandler:
    """A handler whose first (full) fetch of `asks` opened session `SESSION`."""
    handler = FetchSessionHandler(replica_id=1, max_wait_ms=500)
    handler.build(wanted(*asks))
    assert handler.handle_response(m.FetchResponse(Errors.NONE, (), SESSION))
    return handler


def test_the_first_fetch_is_full_and_asks_for_a_session() -> None:
    handler = FetchSessionHandler(replica_id=1, max_wait_ms=500)
    request = handler.build(wanted(ask(A), ask(B)))
    assert request.is_full
    assert request.session_epoch == m.INITIAL_EPOCH
    assert request.session_id == m.NO_SESSION_ID
    assert [p.topic_partition for p in request.partitions] == [A, B]
    assert (request.replica_id, request.max_wait_ms) == (1, 500)


def test_the_next_fetch_names_only_changed_and_added_partitions() -> None:
    handler = established(ask(A, 5), ask(B, 7))
    request = handler.build(wanted(ask(A, 5), ask(B, 9), ask(C)))
    assert (request.session_id, request.session_epoch) == (SESSION, 1)
    assert [(p.topic_partition, p.fetch_offset) for p in request.partitions] == [(B, 9), (C, 0)]
    assert request.forgotten == ()


def test_named_changes_are_the_only_partitions_compared() -> None:
    """A fetcher that names what may have changed: only those are compared with the
    session (B moved but was not named, so it is not sent), a named partition no longer
    wanted is forgotten, and the session after the answer holds exactly what was sent."""
    handler = established(ask(A, 5), ask(B, 7), ask(C, 1))
    request = handler.build(wanted(ask(A, 6), ask(B, 8)), changed={A, C})
    assert [(p.topic_partition, p.fetch_offset) for p in request.partitions] == [(A, 6)]
    assert request.forgotten == (C,)
    assert handler.handle_response(m.FetchResponse(Errors.NONE, (), SESSION))
    assert dict(handler.partitions) == wanted(ask(A, 6), ask(B, 7))
    again = handler.build(wanted(ask(A, 6), ask(B, 8)), changed=set())
    assert (again.partitions, again.forgotten) == ((), ())
    assert handler.handle_response(m.FetchResponse(Errors.NONE, (), SESSION))
    handler.handle_error()  # a lost answer: the next fetch is full whatever is named
    full = handler.build(wanted(ask(A, 6), ask(B, 8)), changed=set())
    assert full.is_full
    assert [(p.topic_partition, p.fetch_offset) for p in full.partitions] == [(A, 6), (B, 8)]


def test_a_new_leader_epoch_is_a_change() -> None:
    handler = established(ask(A, 5, epoch=3))
    request = handler.build(wanted(ask(A, 5, epoch=4)))
    assert [p.current_leader_epoch for p in request.partitions] == [4]


def test_partitions_no_longer_wanted_are_forgotten() -> None:
    handler = established(ask(A), ask(B))
    request = handler.build(wanted(ask(B)))
    assert request.partitions == ()
    assert request.forgotten == (A,)


def test_epochs_count_up_with_each_answered_fetch() -> None:
    handler = established(ask(A))
    for epoch in (1, 2, 3):
        assert handler.build(wanted(ask(A))).session_epoch == epoch
        assert handler.handle_response(m.FetchResponse(Errors.NONE, (), SESSION))


def test_no_session_granted_means_full_fetches_again() -> None:
    handler = FetchSessionHandler(replica_id=1, max_wait_ms=500)
    handler.build(wanted(ask(A)))
    assert handler.handle_response(m.FetchResponse(Errors.NONE, (), m.NO_SESSION_ID))
    request = handler.build(wanted(ask(A)))
    assert request.is_full
    assert [p.topic_partition for p in request.partitions] == [A]


def test_an_unknown_session_is_replaced_by_a_new_one() -> None:
    handler = established(ask(A), ask(B))
    handler.build(wanted(ask(A), ask(B)))
    assert not handler.handle_response(m.FetchResponse(Errors.FETCH_SESSION_ID_NOT_FOUND))
    request = handler.build(wanted(ask(A), ask(B)))
    assert (request.session_id, request.session_epoch) == (m.NO_SESSION_ID, m.INITIAL_EPOCH)
    assert [p.topic_partition for p in request.partitions] == [A, B]


@pytest.mark.parametrize("error", [Errors.INVALID_FETCH_SESSION_EPOCH, Errors.INVALID_REQUEST])
def test_other_request_errors_close_the_session_with_a_full_fetch(error: Errors) -> None:
    handler = established(ask(A))
    handler.build(wanted(ask(A)))
    assert not handler.handle_response(m.FetchResponse(error))
    request = handler.build(wanted(ask(A)))
    assert (request.session_id, request.session_epoch) == (SESSION, m.INITIAL_EPOCH)
    assert request.partitions == (ask(A),)


def test_a_failed_call_makes_the_next_fetch_full() -> None:
    handler = established(ask(A, 5))
    handler.build(wanted(ask(A, 6)))
    handler.handle_error()
    request = handler.build(wanted(ask(A, 6)))
    assert request.is_full
    assert request.partitions == (ask(A, 6),)


def test_an_answer_without_a_request_is_a_bug() -> None:
    handler = FetchSessionHandler(replica_id=1, max_wait_ms=500)
    with pytest.raises(RuntimeError, match="without a request"):
        handler.handle_response(m.FetchResponse(Errors.NONE))


def test_handler_and_cache_agree_over_several_rounds() -> None:
    """Setup: a handler fetching A and B from a leader's cache. Steps: open the session,
    advance A, drop B, add C, lose the session. Validate: the leader reads what the
    follower wants each round."""
    cache = FetchSessionCache()
    handler = FetchSessionHandler(replica_id=1, max_wait_ms=0)
    rounds = [
        wanted(ask(A, 0), ask(B, 0)),
        wanted(ask(A, 4), ask(B, 0)),
        wanted(ask(A, 4)),
        wanted(ask(A, 4), ask(C, 2)),
    ]
    for now, want in enumerate(rounds):
        context = cache.context(handler.build(want), float(now))
        assert {f.topic_partition: f for f in context.reads} == want
        assert handler.handle_response(
            m.FetchResponse(Errors.NONE, cache.answer(context, []), context.session_id)
        )
    cache.remove(handler.session_id)  # evicted
    context = cache.context(handler.build(rounds[-1]), 9.0)
    assert context.error is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert not handler.handle_response(m.FetchResponse(context.error))
    context = cache.context(handler.build(rounds[-1]), 10.0)
    assert context.full
    assert {f.topic_partition: f for f in context.reads} == rounds[-1]
