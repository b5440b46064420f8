"""Topic creation inputs as Kafka 2.8 decides them: topic-name rules, the exact
rack-unaware assignment for fixed start indices (tables worked out by hand from
`AdminUtils.assignReplicasToBrokers`, the first one being Kafka's own test expectation),
Kafka's error messages, and hypothesis properties of the assignment."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from admin import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    assign_replicas_to_brokers,
    validate_replica_assignment,
)

# --- the assignment for fixed start indices ------------------------------------------------


@pytest.mark.parametrize(
    ("partitions", "rf", "brokers", "start_index", "start_partition", "expected"),
    [
        pytest.param(
            10,
            3,
            [0, 1, 2, 3, 4],
            0,
            -1,
            {
                0: (0, 1, 2),
                1: (1, 2, 3),
                2: (2, 3, 4),
                3: (3, 4, 0),
                4: (4, 0, 1),
                5: (0, 2, 3),
                6: (1, 3, 4),
                7: (2, 4, 0),
                8: (3, 0, 1),
                9: (4, 1, 2),
            },
            id="kafka-5-brokers-10-partitions-rf3",
        ),
        pytest.param(
            6,
            3,
            [0, 1, 2],
            0,
            -1,
            {
                0: (0, 1, 2),
                1: (1, 2, 0),
                2: (2, 0, 1),
                3: (0, 2, 1),
                4: (1, 0, 2),
                5: (2, 1, 0),
            },
            id="3-brokers-rf3-second-round-reverses-followers",
        ),
        pytest.param(
            4,
            2,
            [40, 10, 30, 20],
            2,
            -1,
            {0: (30, 20), 1: (40, 30), 2: (10, 40), 3: (20, 10)},
            id="brokers-sorted-start-index-2",
        ),
        pytest.param(
            3,
            3,
            [0, 1, 2, 3, 4],
            0,
            10,
            {10: (0, 2, 3), 11: (1, 3, 4), 12: (2, 4, 0)},
            id="added-partitions-start-at-id-and-shift",
        ),
        pytest.param(
            7,
            2,
            [0, 1, 2],
            1,
            -1,
            {
                0: (1, 0),
                1: (2, 1),
                2: (0, 2),
                3: (1, 2),
                4: (2, 0),
                5: (0, 1),
                6: (1, 0),
            },
            id="shift-wraps-every-len-minus-one-rounds",
        ),
        pytest.param(
            3, 1, [7, 5], 0, -1, {0: (5,), 1: (7,), 2: (5,)}, id="rf1-round-robin-leaders"
        ),
        pytest.param(2, 1, [9], 0, -1, {0: (9,), 1: (9,)}, id="single-broker"),
        pytest.param(
            2, 2, [0, 1, 2], 4, -1, {0: (1, 2), 1: (2, 0)}, id="start-index-beyond-brokers-wraps"
        ),
        pytest.param(
            2, 2, [3, 1, 3, 2], 0, -1, {0: (1, 2), 1: (2, 3)}, id="duplicate-broker-ids-ignored"
        ),
    ],
)
def test_fixed_start_assignment(
    partitions: int,
    rf: int,
    brokers: list[int],
    start_index: int,
    start_partition: int,
    expected: dict[int, tuple[int, ...]],
) -> None:
    actual = assign_replicas_to_brokers(
        partitions, rf, brokers, fixed_start_index=start_index, start_partition_id=start_partition
    )
    assert actual == expected
    assert list(actual) == sorted(actual)


class ScriptedRandom(random.Random):
    """Hands out the given values for `randrange`, in order, and records the bounds asked."""

    def __init__(self, *values: int) -> None:
        super().__init__(0)
        self.values = list(values)
        self.bounds: list[int] = []

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        assert stop is None
        self.bounds.append(start)
        return self.values.pop(0)


def test_random_start_index_is_drawn_before_the_shift() -> None:
    rng = ScriptedRandom(1, 3)
    actual = assign_replicas_to_brokers(5, 3, [0, 1, 2, 3, 4], rng=rng)
    assert actual == {0: (1, 0, 2), 1: (2, 1, 3), 2: (3, 2, 4), 3: (4, 3, 0), 4: (0, 4, 1)}
    assert rng.bounds == [5, 5]


def test_fixed_start_index_ignores_rng() -> None:
    rng = ScriptedRandom()
    assign_replicas_to_brokers(4, 2, [0, 1, 2], fixed_start_index=0, rng=rng)
    assert rng.bounds == []


def test_without_rng_the_assignment_is_still_valid() -> None:
    actual = assign_replicas_to_brokers(6, 2, [1, 2, 3])
    assert sorted(actual) == list(range(6))
    assert all(len(set(replicas)) == 2 for replicas in actual.values())


# --- errors --------------------------------------------------------------------------------

PARTITIONS = InvalidPartitionsError
RF = InvalidReplicationFactorError
NO_PARTITIONS = "Number of partitions must be larger than 0."
NO_RF = "Replication factor must be larger than 0."


def rf_too_large(rf: int, brokers: int) -> str:
    """Kafka's message for a replication factor above the broker count."""
    return f"Replication factor: {rf} larger than available brokers: {brokers}."


@pytest.mark.parametrize(
    ("partitions", "rf", "brokers", "error", "message"),
    [
        pytest.param(0, 1, [0], PARTITIONS, NO_PARTITIONS, id="zero-partitions"),
        pytest.param(-1, 1, [0], PARTITIONS, NO_PARTITIONS, id="negative-partitions"),
        pytest.param(0, 0, [0], PARTITIONS, NO_PARTITIONS, id="partitions-checked-first"),
        pytest.param(10, 0, [0, 1, 2, 3, 4], RF, NO_RF, id="zero-rf"),
        pytest.param(10, -3, [0, 1], RF, NO_RF, id="negative-rf"),
        pytest.param(10, 6, [0, 1, 2, 3, 4], RF, rf_too_large(6, 5), id="rf-above-brokers"),
        pytest.param(1, 3, [1, 2], RF, rf_too_large(3, 2), id="rf3-two-brokers"),
        pytest.param(1, 1, [], RF, rf_too_large(1, 0), id="no-brokers"),
        pytest.param(1, 2, [4, 4], RF, rf_too_large(2, 1), id="duplicates-count-once"),
    ],
)
def test_assignment_errors(
    partitions: int,
    rf: int,
    brokers: list[int],
    error: type[ValueError],
    message: str,
) -> None:
    with pytest.raises(error) as caught:
        assign_replicas_to_brokers(partitions, rf, brokers, fixed_start_index=0)
    assert str(caught.value) == message


def test_replication_factor_message_is_kafkas() -> None:
    with pytest.raises(InvalidReplicationFactorError) as caught:
        assign_replicas_to_brokers(1, 3, [1, 2])
    assert str(caught.value) == "Replication factor: 3 larger than available brokers: 2."


@pytest.mark.parametrize(
    "error",
    [
        InvalidTopicError,
        InvalidPartitionsError,
        InvalidReplicationFactorError,
        InvalidReplicaAssignmentError,
    ],
)
def test_errors_are_value_errors(error: type[Exception]) -> None:
    assert issubclass(error, ValueError)


# --- explicit assignments ------------------------------------------------------------------

LIVE = frozenset({0, 1, 2, 3, 4})


@pytest.mark.parametrize(
    "assignment",
    [
        pytest.param({0: [0]}, id="one-partition-one-replica"),
        pytest.param({0: [4, 3], 1: [3, 2], 2: [1, 0]}, id="two-replicas-each"),
        pytest.param({2: (2, 0, 1), 0: (0, 1, 2), 1: (1, 2, 0)}, id="keys-in-any-order"),
    ],
)
def test_valid_replica_assignments(assignment: Mapping[int, Sequence[int]]) -> None:
    validate_replica_assignment(assignment, LIVE)


@pytest.mark.parametrize(
    ("assignment", "live", "message"),
    [
        pytest.param({}, LIVE, "The replica assignment has no partitions.", id="no-partitions"),
        pytest.param(
            {1: [0], 2: [1]},
            LIVE,
            "partitions should be a consecutive 0-based integer sequence, got partitions [1, 2]",
            id="not-0-based",
        ),
        pytest.param(
            {0: [0], 2: [1]},
            LIVE,
            "partitions should be a consecutive 0-based integer sequence, got partitions [0, 2]",
            id="gap",
        ),
        pytest.param(
            {-1: [0], 0: [1]},
            LIVE,
            "partitions should be a consecutive 0-based integer sequence, got partitions [-1, 0]",
            id="negative-id",
        ),
        pytest.param(
            {0: [0], 1: []},
            LIVE,
            "Cannot have replication factor of 0 for partition id 1.",
            id="empty-replicas",
        ),
        pytest.param(
            {0: [0, 0]},
            LIVE,
            "Duplicate brokers not allowed in replica assignment: 0, 0 for partition id 0.",
            id="duplicate-broker",
        ),
        pytest.param(
            {0: [0, 1], 1: [2, 9]},
            LIVE,
            "Some brokers specified for partition id 1 are not available. "
            "Specified brokers: 2, 9, available brokers: 0, 1, 2, 3, 4.",
            id="unknown-broker",
        ),
        pytest.param(
            {0: [0]},
            frozenset(),
            "Some brokers specified for partition id 0 are not available. "
            "Specified brokers: 0, available brokers: .",
            id="no-live-brokers",
        ),
        pytest.param(
            {0: [0, 1], 1: [1], 2: [2, 3], 3: [3, 4, 0]},
            LIVE,
            "Inconsistent replication factor between partitions, partition 0 has 2 while "
            "partitions [1, 3] have replication factors [1, 3], respectively.",
            id="inconsistent-rf",
        ),
        pytest.param(
            {0: [0, 1], 1: [1, 1, 2]},
            LIVE,
            "Duplicate brokers not allowed in replica assignment: 1, 1, 2 for partition id 1.",
            id="per-partition-checks-before-rf",
        ),
    ],
)
def test_invalid_replica_assignments(
    assignment: Mapping[int, Sequence[int]], live: AbstractSet[int], message: str
) -> None:
    with pytest.raises(InvalidReplicaAssignmentError) as caught:
        validate_replica_assignment(assignment, live)
    assert str(caught.value) == message


# --- properties ----------------------------------------------------------------------------

PROPERTIES = settings(max_examples=300, deadline=None)


@st.composite
def requests(draw: st.DrawFn) -> tuple[int, int, list[int], int]:
    """Partitions, a replication factor that fits, distinct broker ids, a start partition."""
    brokers = draw(st.lists(st.integers(0, 1000), min_size=1, max_size=9, unique=True))
    rf = draw(st.integers(1, len(brokers)))
    partitions = draw(st.integers(1, 60))
    start_partition = draw(st.integers(-1, 50))
    return partitions, rf, brokers, start_partition


@PROPERTIES
@given(requests(), st.integers(0, 2**32))
def test_every_partition_gets_rf_distinct_known_brokers(
    request: tuple[int, int, list[int], int], seed: int
) -> None:
    partitions, rf, brokers, start_partition = request
    actual = assign_replicas_to_brokers(
        partitions, rf, brokers, start_partition_id=start_partition, rng=random.Random(seed)
    )
    first = max(0, start_partition)
    assert list(actual) == list(range(first, first + partitions))
    for replicas in actual.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= set(brokers)
    validate_replica_assignment(
        {p - first: replicas for p, replicas in actual.items()}, frozenset(brokers)
    )


@PROPERTIES
@given(requests(), st.integers(0, 2**32))
def test_leaders_spread_evenly(request: tuple[int, int, list[int], int], seed: int) -> None:
    partitions, rf, brokers, start_partition = request
    actual = assign_replicas_to_brokers(
        partitions, rf, brokers, start_partition_id=start_partition, rng=random.Random(seed)
    )
    leaders = Counter(replicas[0] for replicas in actual.values())
    counts = [leaders[broker] for broker in brokers]
    assert max(counts) - min(counts) <= 1
    if partitions % len(brokers) == 0:
        assert set(counts) == {partitions // len(brokers)}


@PROPERTIES
@given(requests(), st.integers(0, 2**32))
def test_whole_rounds_spread_every_replica_evenly(
    request: tuple[int, int, list[int], int], seed: int
) -> None:
    partitions, rf, brokers, _ = request
    rounds = max(1, partitions // len(brokers))
    actual = assign_replicas_to_brokers(rounds * len(brokers), rf, brokers, rng=random.Random(seed))
    replicas = Counter(broker for replica_set in actual.values() for broker in replica_set)
    assert set(replicas.values()) == {rounds * rf}
    assert set(replicas) == set(brokers)


@PROPERTIES
@given(requests(), st.integers(0, 2**32))
def test_seeded_rng_is_deterministic(request: tuple[int, int, list[int], int], seed: int) -> None:
    partitions, rf, brokers, start_partition = request

    def assign(order: list[int]) -> dict[int, tuple[int, ...]]:
        return assign_replicas_to_brokers(
            partitions, rf, order, start_partition_id=start_partition, rng=random.Random(seed)
        )

    assert assign(brokers) == assign(brokers) == assign(list(reversed(brokers)))


@PROPERTIES
@given(requests(), st.integers(0, 2**32))
def test_random_start_matches_the_fixed_start_it_drew(
    request: tuple[int, int, list[int], int], seed: int
) -> None:
    partitions, rf, brokers, start_partition = request
    draws = random.Random(seed)
    start_index, shift = draws.randrange(len(brokers)), draws.randrange(len(brokers))
    actual = assign_replicas_to_brokers(
        partitions, rf, brokers, start_partition_id=start_partition, rng=random.Random(seed)
    )
    leader_base = sorted(brokers)[(max(0, start_partition) + start_index) % len(brokers)]
    assert actual[max(0, start_partition)][0] == leader_base
    if start_index == shift:
        assert actual == assign_replicas_to_brokers(
            partitions, rf, brokers, start_index, start_partition
        )


@settings(max_examples=200, deadline=None)
@given(
    racks=st.dictionaries(
        st.integers(0, 40), st.sampled_from(["r1", "r2", "r3", "r4"]), min_size=1, max_size=12
    ),
    partitions=st.integers(1, 60),
    data=st.data(),
    seed=st.integers(0, 2**32),
)
def test_rack_aware_assignment_properties(
    racks: dict[int, str], partitions: int, data: st.DataObject, seed: int
) -> None:
    """Every partition gets `rf` distinct brokers on min(rf, racks) distinct racks, and
    when the partitions fill whole rounds every broker leads as many as any other."""
    rf = data.draw(st.integers(1, len(racks)))
    assignment = assign_replicas_to_brokers(partitions, rf, dict(racks), rng=random.Random(seed))
    assert sorted(assignment) == list(range(partitions))
    rack_count = len(set(racks.values()))
    for replicas in assignment.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= set(racks)
        assert len({racks[b] for b in replicas}) == min(rf, rack_count)
    if partitions % len(racks) == 0:
        leaders = Counter(replicas[0] for replicas in assignment.values())
        assert set(leaders) == set(racks)
        assert set(leaders.values()) == {partitions // len(racks)}
