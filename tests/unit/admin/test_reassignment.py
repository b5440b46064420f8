"""`admin.reassignment`: which targets are usable, a partition's current target, the
proposal of `reassign generate` (properties by hypothesis) and why a request would be
rejected."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admin import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    current_replicas,
    propose_assignment,
    reassignment_problems,
    target_error,
)
from domain import TopicPartition
from zkdata.model import PartitionReassignment, ReplicaAssignment, TopicAssignment

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
LIVE_BROKERS = frozenset({1, 2, 3, 4})

# -- target checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ((), "empty"),
        ((1, 2, 1), "names broker(s) [1] twice"),
        ((1, -1), "invalid broker id(s) [-1]"),
        ((1, 9), "broker(s) [9] of the target [1,9] are not registered"),
    ],
)
def test_bad_targets_are_explained(target: tuple[int, ...], fragment: str) -> None:
    reason = target_error(target, LIVE_BROKERS)
    assert reason is not None
    assert fragment in reason


def test_a_target_of_live_brokers_is_fine() -> None:
    assert target_error((3, 1), LIVE_BROKERS) is None


# -- generate -----------------------------------------------------------------------------


def _topic(*replicas: tuple[int, ...]) -> TopicAssignment:
    return TopicAssignment({p: ReplicaAssignment(r) for p, r in enumerate(replicas)})


@given(
    partitions=st.lists(st.integers(0, 50), min_size=1, max_size=12, unique=True),
    replication_factor=st.integers(1, 4),
    brokers=st.lists(st.integers(0, 20), min_size=4, max_size=8, unique=True),
    seed=st.integers(0, 2**32),
)
def test_proposal_keeps_partitions_and_replication_factor_on_listed_brokers(
    partitions: list[int], replication_factor: int, brokers: list[int], seed: int
) -> None:
    current = TopicAssignment(
        {p: ReplicaAssignment(tuple(range(100, 100 + replication_factor))) for p in partitions}
    )
    proposal = propose_assignment({"t": current}, brokers, random.Random(seed))
    assert sorted(proposal) == [TopicPartition("t", p) for p in sorted(partitions)]
    for replicas in proposal.values():
        assert len(replicas) == replication_factor
        assert set(replicas) <= set(brokers)
        assert len(set(replicas)) == len(replicas)


def test_proposal_covers_every_topic_with_its_own_replication_factor() -> None:
    topics = {"a": _topic((1, 2), (2, 3)), "b": _topic((1,), (2,), (3,))}
    proposal = propose_assignment(topics, [4, 5, 6], random.Random(1))
    assert {tp: len(r) for tp, r in proposal.items()} == {
        TopicPartition("a", 0): 2,
        TopicPartition("a", 1): 2,
        TopicPartition("b", 0): 1,
        TopicPartition("b", 1): 1,
        TopicPartition("b", 2): 1,
    }
    # Kafka's round robin: each broker leads one of b's three partitions
    assert Counter(r[0] for tp, r in proposal.items() if tp.topic == "b") == {4: 1, 5: 1, 6: 1}


def test_proposal_uses_the_target_of_a_partition_being_moved() -> None:
    moving = TopicAssignment({0: ReplicaAssignment((3, 1, 2), (3,), (2,))})
    proposal = propose_assignment({"t": moving}, [1, 2, 3], random.Random(0))
    assert len(proposal[T0]) == 2


def test_proposal_refuses_more_replicas_than_brokers() -> None:
    with pytest.raises(InvalidReplicationFactorError) as info:
        propose_assignment({"t": _topic((1, 2, 3))}, [1, 2], random.Random(0))
    assert str(info.value) == "topic t: Replication factor: 3 larger than available brokers: 2."


def test_proposal_refuses_a_topic_without_partitions() -> None:
    with pytest.raises(InvalidPartitionsError, match="topic t has no partitions"):
        propose_assignment({"t": TopicAssignment()}, [1], random.Random(0))


def test_current_replicas_leave_out_those_being_added() -> None:
    assert current_replicas(ReplicaAssignment((1, 2))) == (1, 2)
    assert current_replicas(ReplicaAssignment((3, 1, 2), (3,), (2,))) == (1, 2)


# -- execute's checks ---------------------------------------------------------------------

TOPICS = {"t": _topic((1, 2), (2, 3))}
LIVE = frozenset({1, 2, 3})


def test_a_valid_reassignment_has_no_problems() -> None:
    requests = [PartitionReassignment(T0, (3, 1)), PartitionReassignment(T1, (1,))]
    assert reassignment_problems(requests, TOPICS, LIVE) == []


@pytest.mark.parametrize(
    ("requests", "problems"),
    [
        pytest.param([], ["the reassignment lists no partition"], id="nothing"),
        pytest.param(
            [PartitionReassignment(U0, (1,))], ["u-0: topic u does not exist"], id="unknown-topic"
        ),
        pytest.param(
            [PartitionReassignment(TopicPartition("t", 2), (1,))],
            ["t-2: topic t has no partition 2"],
            id="unknown-partition",
        ),
        pytest.param(
            [PartitionReassignment(T0, ())],
            ["t-0: the target replica list is empty"],
            id="empty-target",
        ),
        pytest.param(
            [PartitionReassignment(T0, (1, 1))],
            ["t-0: the target replica list [1,1] names broker(s) [1] twice"],
            id="repeated-broker",
        ),
        pytest.param(
            [PartitionReassignment(T0, (1, 7))],
            [
                "t-0: broker(s) [7] of the target [1,7] are not registered (dead or unknown); "
                "live brokers: [1,2,3]"
            ],
            id="unregistered-broker",
        ),
        pytest.param(
            [PartitionReassignment(T0, (1,)), PartitionReassignment(T0, (2,))],
            ["t-0 is listed 2 times"],
            id="listed-twice",
        ),
        pytest.param(
            [PartitionReassignment(U0, (1,)), PartitionReassignment(T1, (9,))],
            [
                "u-0: topic u does not exist",
                "t-1: broker(s) [9] of the target [9] are not registered (dead or unknown); "
                "live brokers: [1,2,3]",
            ],
            id="every-problem-is-named",
        ),
    ],
)
def test_reassignment_problems(requests: list[PartitionReassignment], problems: list[str]) -> None:
    assert reassignment_problems(requests, TOPICS, LIVE) == problems


def test_a_replica_the_partition_already_has_may_be_down() -> None:
    # Kafka's validateReassignment asks only the replicas being added to be live
    down = frozenset({1, 3})  # broker 2, a replica of both partitions, is down
    keep = [PartitionReassignment(T0, (2, 1)), PartitionReassignment(T1, (3, 2))]
    assert reassignment_problems(keep, TOPICS, down) == []
    add = [PartitionReassignment(T0, (2, 1)), PartitionReassignment(T1, (1, 4))]
    assert reassignment_problems(add, TOPICS, down) == [
        "t-1: broker(s) [4] of the target [1,4] are not registered (dead or unknown); "
        "live brokers: [1,3]"
    ]
