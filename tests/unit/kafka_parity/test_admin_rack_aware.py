"""Kafka 2.8's `AdminRackAwareTest` as data: each case id is the Kafka test method it
mirrors, and the checks are those of Kafka's `RackAwareTest.checkReplicaDistribution`
(no broker twice in a partition; every partition on as many racks as it has replicas;
even preferred-leader and replica counts per broker), switched on or off as the Kafka
test does. Cases that use a random start index run under many seeds."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from admin import (
    AdminOperationError,
    assign_replicas_to_brokers,
    rack_alternated_brokers,
)

_SIX = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
_SEEDS = range(25)


@dataclass(frozen=True)
class RackCase:
    """One Kafka test: the brokers' racks, the request and the checks it makes."""

    racks: Mapping[int, str]
    partitions: int
    replication_factor: int
    fixed_start_index: int = -1
    start_partition_id: int = -1
    rack_aware: bool = True
    even_leaders: bool = True
    even_replicas: bool = True
    racks_per_partition: int | None = None
    leaders_per_broker: int | None = None


CASES = [
    pytest.param(
        RackCase(_SIX, 6, 3, fixed_start_index=2, start_partition_id=0),
        id="testAssignmentWithRackAware",
    ),
    pytest.param(RackCase(_SIX, 6, 3), id="testAssignmentWithRackAwareWithRandomStartIndex"),
    pytest.param(
        RackCase(
            _SIX,
            13,
            3,
            fixed_start_index=0,
            start_partition_id=0,
            even_leaders=False,
            even_replicas=False,
        ),
        id="testAssignmentWithRackAwareWithUnevenReplicas",
    ),
    pytest.param(
        RackCase(
            {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
            12,
            3,
            even_replicas=False,
        ),
        id="testAssignmentWithRackAwareWithUnevenRacks",
    ),
    pytest.param(RackCase(_SIX, 12, 2), id="testAssignmentWith2ReplicasRackAware"),
    pytest.param(
        RackCase({b + 6: r for b, r in _SIX.items()}, 12, 2, start_partition_id=12),
        id="testRackAwareExpansion",
    ),
    pytest.param(RackCase(_SIX, 6, 2), id="testAssignmentWith2ReplicasRackAwareWith6Partitions"),
    pytest.param(
        RackCase({0: "rack1", 1: "rack2", 4: "rack3"}, 3, 2),
        id="testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers",
    ),
    pytest.param(
        RackCase(
            {**_SIX, 6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"},
            96,
            3,
        ),
        id="testLargeNumberPartitionsAssignment",
    ),
    pytest.param(
        RackCase(
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"},
            6,
            5,
            rack_aware=False,
            even_leaders=False,
            even_replicas=False,
            racks_per_partition=3,
        ),
        id="testMoreReplicasThanRacks",
    ),
    pytest.param(
        RackCase(
            {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"},
            6,
            2,
            rack_aware=False,
            even_leaders=False,
            even_replicas=False,
            racks_per_partition=2,
        ),
        id="testLessReplicasThanRacks",
    ),
    pytest.param(
        RackCase(
            dict.fromkeys(range(6), "rack1"),
            6,
            3,
            rack_aware=False,
            even_leaders=False,
            even_replicas=False,
            racks_per_partition=1,
            leaders_per_broker=1,
        ),
        id="testSingleRack",
    ),
    pytest.param(
        RackCase(
            {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"},
            6,
            4,
            fixed_start_index=2,
            rack_aware=False,
            even_leaders=False,
            even_replicas=False,
        ),
        id="testSkipBrokerWithReplicaAlreadyAssigned",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_kafka_rack_aware_case(case: RackCase) -> None:
    seeds = _SEEDS if case.fixed_start_index < 0 else range(1)
    for seed in seeds:
        assignment = assign_replicas_to_brokers(
            case.partitions,
            case.replication_factor,
            dict(case.racks),
            fixed_start_index=case.fixed_start_index,
            start_partition_id=case.start_partition_id,
            rng=random.Random(seed),
        )
        _check_distribution(assignment, case)


def _check_distribution(assignment: dict[int, tuple[int, ...]], case: RackCase) -> None:
    first = max(0, case.start_partition_id)
    assert sorted(assignment) == list(range(first, first + case.partitions))
    brokers = sorted(case.racks)
    leaders = Counter(replicas[0] for replicas in assignment.values())
    replicas_per_broker = Counter(b for replicas in assignment.values() for b in replicas)
    for partition, replicas in assignment.items():
        assert len(replicas) == case.replication_factor, partition
        assert len(set(replicas)) == len(replicas), f"broker twice in partition {partition}"
        racks = {case.racks[b] for b in replicas}
        if case.rack_aware:
            assert len(racks) == case.replication_factor, f"rack twice in {partition}"
        if case.racks_per_partition is not None:
            assert len(racks) == case.racks_per_partition, partition
    if case.even_leaders:
        assert [leaders[b] for b in brokers] == [case.partitions // len(brokers)] * len(brokers)
    if case.leaders_per_broker is not None:
        assert [leaders[b] for b in brokers] == [case.leaders_per_broker] * len(brokers)
    if case.even_replicas:
        per_broker = case.partitions * case.replication_factor // len(brokers)
        assert [replicas_per_broker[b] for b in brokers] == [per_broker] * len(brokers)


@pytest.mark.parametrize(
    ("racks", "expected"),
    [
        pytest.param(
            {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"},
            [0, 3, 1, 5, 4, 2],
            id="testGetRackAlternatedBrokerListAndAssignReplicasToBrokers-six",
        ),
        pytest.param(
            {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2"},
            [0, 3, 1, 4, 2],
            id="testGetRackAlternatedBrokerListAndAssignReplicasToBrokers-without-5",
        ),
    ],
)
def test_rack_alternated_broker_list(racks: dict[int, str], expected: list[int]) -> None:
    assert rack_alternated_brokers(racks) == expected


def test_kafka_exact_rack_aware_assignment() -> None:
    """testGetRackAlternatedBrokerListAndAssignReplicasToBrokers: Kafka's exact table for 7
    partitions, replication factor 3, start index 0."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert assign_replicas_to_brokers(7, 3, racks, fixed_start_index=0, start_partition_id=0) == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }


def test_some_brokers_without_rack_are_refused() -> None:
    """Kafka's `assignReplicasToBrokers` refuses racks known for only some brokers."""
    with pytest.raises(AdminOperationError, match="broker\\(s\\) 2 have none"):
        assign_replicas_to_brokers(3, 2, {0: "a", 1: "b", 2: None})


def test_no_rack_at_all_is_the_rack_unaware_rule() -> None:
    """Brokers given as a mapping with no rack assign exactly as the plain id list does."""
    unaware = assign_replicas_to_brokers(10, 3, [0, 1, 2, 3, 4], fixed_start_index=0)
    assert assign_replicas_to_brokers(10, 3, dict.fromkeys(range(5)), fixed_start_index=0) == (
        unaware
    )
