"""Preferred election triage and auto-rebalance candidates, as Kafka 2.8 decides them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.leader_balance import (
    ElectionType,
    failure_error,
    rebalance_candidates,
    triage,
)
from domain import LeaderAndIsr, TopicPartition
from rpc.errors import Errors

T0, T1, T2, T3 = (TopicPartition("t", p) for p in range(4))
ASSIGNMENT = {T0: (1, 2), T1: (2, 1), T2: (1, 3), T3: (3, 1)}


def run_triage(
    election: ElectionType,
    leaders: dict[TopicPartition, int],
    deleting: frozenset[str] = frozenset(),
) -> tuple[tuple[TopicPartition, ...], dict[TopicPartition, Errors]]:
    result = triage(
        [*ASSIGNMENT, TopicPartition("ghost", 0)],
        election,
        lambda tp: ASSIGNMENT.get(tp, ()),
        lambda tp: LeaderAndIsr(leaders[tp], 1, (1, 2, 3)) if tp in leaders else None,
        lambda topic: topic in deleting,
        lambda broker: broker in {1, 2},
    )
    return result.to_elect, result.answered


def test_preferred_triage_answers_unknown_and_not_needed() -> None:
    to_elect, answered = run_triage(ElectionType.PREFERRED, {T0: 2, T1: 2, T2: 1, T3: 1})
    assert to_elect == (T0, T3)
    assert answered == {
        T1: Errors.ELECTION_NOT_NEEDED,
        T2: Errors.ELECTION_NOT_NEEDED,
        TopicPartition("ghost", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
    }


def test_a_topic_being_deleted_is_refused_before_a_missing_leadership_is_looked_at() -> None:
    """Kafka's order: a partition of a topic being deleted is INVALID_TOPIC_EXCEPTION with
    or without a leadership; a known partition without one, where Kafka's event fails and
    answers nothing, is UNKNOWN_TOPIC_OR_PARTITION."""
    for election in ElectionType:
        _, answered = run_triage(election, {T0: 2}, deleting=frozenset({"t"}))
        assert set(answered.values()) - {Errors.UNKNOWN_TOPIC_OR_PARTITION} == {
            Errors.INVALID_TOPIC_EXCEPTION
        }
        assert answered[T1] is Errors.INVALID_TOPIC_EXCEPTION
        to_elect, answered = run_triage(election, {T0: 2})
        assert answered[T1] is Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert T1 not in to_elect


def test_unclean_triage_elects_only_partitions_without_a_live_leader() -> None:
    to_elect, answered = run_triage(ElectionType.UNCLEAN, {T0: 3, T1: -1, T2: 1, T3: 2})
    assert to_elect == (T0, T1)
    assert answered[T2] is Errors.ELECTION_NOT_NEEDED
    assert answered[T3] is Errors.ELECTION_NOT_NEEDED


def test_topics_being_deleted_are_refused() -> None:
    _, answered = run_triage(ElectionType.PREFERRED, {T0: 2, T1: 1, T2: 3, T3: 1}, frozenset({"t"}))
    assert {answered[tp] for tp in ASSIGNMENT} == {Errors.INVALID_TOPIC_EXCEPTION}


@pytest.mark.parametrize(
    ("election", "error"),
    [
        (ElectionType.PREFERRED, Errors.PREFERRED_LEADER_NOT_AVAILABLE),
        (ElectionType.UNCLEAN, Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE),
    ],
)
def test_failed_elections_get_kafkas_error(election: ElectionType, error: Errors) -> None:
    assert failure_error(election) is error


def test_rebalance_moves_partitions_of_brokers_above_the_threshold_only() -> None:
    leaders = {T0: 2, T1: 2, T2: 1, T3: 1}
    isrs: dict[TopicPartition, tuple[int, ...]] = dict.fromkeys(ASSIGNMENT, (1, 2, 3))
    assert rebalance_candidates(ASSIGNMENT, leaders, isrs, {1, 2, 3}, 10, False) == [T0, T3]
    assert rebalance_candidates(ASSIGNMENT, leaders, isrs, {1, 2, 3}, 60, False) == [T3]
    assert rebalance_candidates(ASSIGNMENT, leaders, isrs, {1, 2}, 10, False) == [T0]
    assert rebalance_candidates(ASSIGNMENT, leaders, isrs, {1, 2, 3}, 10, True) == []
    isrs[T3] = (1,)
    assert rebalance_candidates(ASSIGNMENT, leaders, isrs, {1, 2, 3}, 10, False) == [T0]


@given(
    st.dictionaries(
        st.integers(0, 20),
        st.permutations([1, 2, 3]).map(tuple),
        min_size=1,
    ),
    st.data(),
)
def test_rebalance_candidates_always_return_to_a_live_in_sync_preferred_replica(
    assignment: dict[int, tuple[int, ...]], data: st.DataObject
) -> None:
    assignments = {TopicPartition("p", k): v for k, v in assignment.items()}
    leaders = {tp: data.draw(st.sampled_from(r)) for tp, r in assignments.items()}
    isrs = {
        tp: tuple(sorted(set(data.draw(st.lists(st.sampled_from(r), min_size=1)))))
        for tp, r in assignments.items()
    }
    live = data.draw(st.sets(st.sampled_from([1, 2, 3])))
    chosen = rebalance_candidates(assignments, leaders, isrs, live, 10, False)
    for tp in chosen:
        preferred = assignments[tp][0]
        assert leaders[tp] != preferred
        assert preferred in live
        assert preferred in isrs[tp]
