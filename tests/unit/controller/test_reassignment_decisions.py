"""Reassignment decisions as Kafka 2.4+ makes them: RS/AR/RR arithmetic, the checks that
reject a request, and when a reassignment in flight is complete."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from controller.reassignment_decisions import (
    ReassignmentPlan,
    is_reassignment_complete,
    plan_reassignments,
)
from domain import TopicPartition
from rpc.errors import Errors
from zkdata.model import PartitionReassignment, ReplicaAssignment

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
LIVE = frozenset({1, 2, 3, 4})

brokers = st.lists(st.integers(0, 8), min_size=1, max_size=5, unique=True).map(tuple)


# -- RS, AR, RR ----------------------------------------------------------------------------


def test_reassign_to_puts_the_target_first_and_names_adding_and_removing() -> None:
    moving = ReplicaAssignment((1, 2, 3)).reassign_to((4, 2, 5))
    assert moving == ReplicaAssignment((4, 2, 5, 1, 3), (4, 5), (1, 3))
    assert moving.origin_replicas == (2, 1, 3)
    assert moving.target_replicas == (4, 2, 5)


def test_reassign_to_the_same_replicas_moves_nothing() -> None:
    assert ReplicaAssignment((1, 2)).reassign_to((1, 2)) == ReplicaAssignment((1, 2))


def test_a_changed_target_keeps_the_origin() -> None:
    """A second request while the first is in flight: the origin stays [1,2]; 3, added by
    the first target, is now being removed."""
    first = ReplicaAssignment((1, 2)).reassign_to((2, 3))
    second = first.reassign_to((2, 4))
    assert set(second.origin_replicas) == {1, 2}
    assert second.target_replicas == (2, 4)
    assert set(second.removing_replicas) == {1}
    assert set(second.adding_replicas) == {4}
    assert 3 not in second.replicas


@given(brokers, brokers)
def test_reassign_to_properties(origin: tuple[int, ...], target: tuple[int, ...]) -> None:
    moving = ReplicaAssignment(origin).reassign_to(target)
    assert moving.target_replicas == target
    assert set(moving.origin_replicas) == set(origin)
    assert set(moving.replicas) == set(origin) | set(target)
    assert len(set(moving.replicas)) == len(moving.replicas)
    assert set(moving.adding_replicas) == set(target) - set(origin)
    assert set(moving.removing_replicas) == set(origin) - set(target)
    assert moving.is_being_reassigned == (set(origin) != set(target))


@given(brokers, brokers, brokers)
def test_retargeting_never_forgets_the_origin(
    origin: tuple[int, ...], first: tuple[int, ...], second: tuple[int, ...]
) -> None:
    moving = ReplicaAssignment(origin).reassign_to(first).reassign_to(second)
    assert set(moving.origin_replicas) == set(origin)
    assert moving.target_replicas == second


# -- plans -------------------------------------------------------------------------------


def plan(
    *requests: tuple[TopicPartition, tuple[int, ...]],
    current: dict[TopicPartition, ReplicaAssignment] | None = None,
    deleting: frozenset[str] = frozenset(),
    redo: bool = False,
) -> ReassignmentPlan:
    assignments = current or {T0: ReplicaAssignment((1, 2)), T1: ReplicaAssignment((2, 3))}
    return plan_reassignments(
        [PartitionReassignment(tp, r) for tp, r in requests],
        lambda tp: assignments.get(tp, ReplicaAssignment(())),
        lambda topic: topic in deleting,
        LIVE,
        redo,
    )


def test_valid_requests_start_in_request_order() -> None:
    result = plan((T1, (3, 4)), (T0, (2, 3)))
    assert list(result.start) == [T1, T0]
    assert result.start[T0] == ReplicaAssignment((2, 3, 1), (3,), (1,))
    assert result.rejected == ()


def test_each_bad_request_is_rejected_with_its_error_and_the_others_start() -> None:
    result = plan(
        (T0, (1, 1)),
        (TopicPartition("t", 9), (1, 2)),
        (TopicPartition("ghost", 0), (1,)),
        (T1, (2, 4)),
    )
    errors = {r.topic_partition: r.error for r in result.rejected}
    assert errors == {
        T0: Errors.INVALID_REPLICA_ASSIGNMENT,
        TopicPartition("t", 9): Errors.UNKNOWN_TOPIC_OR_PARTITION,
        TopicPartition("ghost", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert list(result.start) == [T1]


def test_a_partition_listed_twice_is_rejected_twice() -> None:
    result = plan((T0, (2, 3)), (T0, (3, 4)))
    assert [r.error for r in result.rejected] == [Errors.INVALID_REQUEST] * 2
    assert result.start == {}


def test_a_topic_being_deleted_is_not_reassigned() -> None:
    result = plan((T0, (2, 3)), deleting=frozenset({"t"}))
    [rejection] = result.rejected
    assert rejection.error is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert "being deleted" in rejection.reason


def test_the_target_in_flight_is_not_redone_unless_resuming() -> None:
    moving = ReplicaAssignment((1, 2)).reassign_to((2, 3))
    current = {T0: moving}
    assert plan((T0, (2, 3)), current=current).in_flight == (T0,)
    assert plan((T0, (2, 3)), current=current, redo=True).start == {T0: moving}
    changed = plan((T0, (2, 4)), current=current).start[T0]
    assert changed.target_replicas == (2, 4)


# -- completion ------------------------------------------------------------------------------


def test_complete_once_every_target_replica_is_in_the_isr() -> None:
    moving = ReplicaAssignment((1, 2)).reassign_to((2, 3))
    assert not is_reassignment_complete(moving, (1, 2))
    assert is_reassignment_complete(moving, (1, 2, 3))
    assert is_reassignment_complete(moving, (3, 2))
    assert not is_reassignment_complete(moving, None)


def test_nothing_in_flight_is_complete() -> None:
    assert is_reassignment_complete(ReplicaAssignment((1, 2)), None)


def test_a_replica_the_partition_already_has_may_be_down() -> None:
    # Kafka's validateReassignment asks only the replicas being added to be live: a new
    # controller finding a request whose target its predecessor already wrote, one of
    # its brokers down, completes it rather than rejecting it
    current = {T0: ReplicaAssignment((5, 3))}  # broker 5 is not live
    result = plan((T0, (5, 3)), current=current, redo=True)
    assert result.rejected == ()
    assert list(result.start) == [T0]
    [rejection] = plan((T0, (5, 6)), current=current).rejected  # 6 would be added
    assert rejection.error is Errors.INVALID_REPLICA_ASSIGNMENT
    assert rejection.reason.startswith("broker(s) [6] of the target [5,6] are not registered")
