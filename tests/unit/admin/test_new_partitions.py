"""Adding partitions without ZooKeeper: where Kafka places added partitions (its start
index from partition 0's preferred replica, the replication factor of partition 0), the
checks on an explicit assignment and every refusal."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admin import (
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    TopicOperationError,
    assign_replicas_to_brokers,
)
from admin.topics import new_partitions
from zkdata.model import ReplicaAssignment


def _existing(replicas: Mapping[int, tuple[int, ...]]) -> dict[int, ReplicaAssignment]:
    return {p: ReplicaAssignment(r) for p, r in replicas.items()}


# -- Kafka's placement --------------------------------------------------------------------


def test_new_partitions_continue_the_round_robin_from_partition_0s_leader() -> None:
    """Partition 0 led by broker 1 (index 0): partitions 1 and 2 go on as a topic created
    with start index 0 would."""
    existing = _existing({0: (1, 2)})
    assert new_partitions("t", existing, 3, {1, 2, 3}) == {1: (2, 3), 2: (3, 1)}


def test_start_index_is_the_first_live_broker_at_or_above_partition_0s_leader() -> None:
    """Broker 2 (partition 0's leader) is gone: the start index is broker 3's, index 1."""
    existing = _existing({0: (2, 1)})
    assert new_partitions("t", existing, 2, {1, 3, 4}) == assign_replicas_to_brokers(
        1, 2, [1, 3, 4], fixed_start_index=1, start_partition_id=1
    )
    assert new_partitions("t", existing, 2, {1, 3, 4}) == {1: (4, 3)}


def test_start_index_is_0_when_every_live_broker_is_below_partition_0s_leader() -> None:
    existing = _existing({0: (9, 1)})
    assert new_partitions("t", existing, 2, {1, 2, 3}) == assign_replicas_to_brokers(
        1, 2, [1, 2, 3], fixed_start_index=0, start_partition_id=1
    )


def test_replication_factor_is_partition_0s() -> None:
    """Later partitions with other sizes do not matter: partition 0 has 3 replicas."""
    existing = _existing({0: (1, 2, 3), 1: (2,)})
    added = new_partitions("t", existing, 4, {1, 2, 3, 4})
    assert sorted(added) == [2, 3]
    assert all(len(r) == 3 for r in added.values())


def test_replication_factor_above_the_live_brokers_is_refused() -> None:
    existing = _existing({0: (1, 2, 3)})
    with pytest.raises(InvalidReplicationFactorError, match="larger than available brokers: 2"):
        new_partitions("t", existing, 2, {1, 2})


@given(
    brokers=st.lists(st.integers(0, 30), min_size=1, max_size=7, unique=True),
    data=st.data(),
)
def test_growing_a_small_topic_matches_creating_it_whole(
    brokers: list[int], data: st.DataObject
) -> None:
    """While the topic has no more partitions than there are brokers, Kafka's replica shift
    has not moved yet: growing it places the new partitions where creating the whole topic
    from the same start index would have."""
    ordered = sorted(brokers)
    start = data.draw(st.integers(0, len(ordered) - 1))
    rf = data.draw(st.integers(1, len(ordered)))
    current = data.draw(st.integers(1, len(ordered)))
    total = current + data.draw(st.integers(1, 20))
    whole = assign_replicas_to_brokers(total, rf, ordered, fixed_start_index=start)
    existing = _existing({p: whole[p] for p in range(current)})
    added = new_partitions("t", existing, total, set(brokers))
    assert added == {p: whole[p] for p in range(current, total)}


@given(
    brokers=st.lists(st.integers(0, 30), min_size=1, max_size=7, unique=True),
    data=st.data(),
)
def test_added_partitions_are_the_missing_ids_on_distinct_live_brokers(
    brokers: list[int], data: st.DataObject
) -> None:
    current = data.draw(st.integers(1, 30))
    first = tuple(data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=3, unique=True)))
    if len(first) > len(brokers):
        first = first[: len(brokers)]
    existing = _existing({0: first, **{p: (p,) for p in range(1, current)}})
    total = current + data.draw(st.integers(1, 20))
    added = new_partitions("t", existing, total, set(brokers))
    assert sorted(added) == list(range(current, total))
    for replicas in added.values():
        assert len(replicas) == len(first)
        assert len(set(replicas)) == len(replicas)
        assert set(replicas) <= set(brokers)


# -- an explicit assignment ---------------------------------------------------------------


def test_explicit_assignment_keeps_only_the_new_partitions() -> None:
    """Entries for existing partitions are dropped unchecked (broker 9 is not live)."""
    existing = _existing({0: (1, 2), 1: (2, 3)})
    requested = {0: (9, 9, 9), 1: (), 2: (3, 1), 3: (1, 2)}
    assert new_partitions("t", existing, 4, {1, 2, 3}, requested) == {2: (3, 1), 3: (1, 2)}


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        pytest.param(
            {0: (1, 2), 1: (2, 3)},
            "--replica-assignment lists 2 partitions but --partitions is 3; list every "
            "partition, existing ones included (they are ignored)",
            id="too-short",
        ),
        pytest.param(
            {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3)},
            "--replica-assignment lists 4 partitions but --partitions is 3; list every "
            "partition, existing ones included (they are ignored)",
            id="too-long",
        ),
        pytest.param(
            {0: (1, 2), 1: (2, 3), 2: (3, 3)},
            "Duplicate brokers not allowed in replica assignment: 3, 3 for partition id 2.",
            id="duplicate-broker",
        ),
        pytest.param(
            {0: (1, 2), 1: (2, 3), 2: (3, 7)},
            "Some brokers specified for partition id 2 are not available. Specified brokers: "
            "3, 7, available brokers: 1, 2, 3.",
            id="broker-not-live",
        ),
        pytest.param(
            {0: (1, 2), 1: (2, 3), 2: (3,)},
            "Inconsistent replication factor between partitions, partition 0 has 2 while "
            "partitions [2] have replication factors [1], respectively.",
            id="other-replication-factor",
        ),
        pytest.param(
            {0: (1, 2), 1: (2, 3), 2: ()},
            "Cannot have replication factor of 0 for partition id 2.",
            id="no-replica",
        ),
    ],
)
def test_bad_explicit_assignments_are_refused(
    requested: dict[int, tuple[int, ...]], message: str
) -> None:
    existing = _existing({0: (1, 2), 1: (2, 3)})
    with pytest.raises(InvalidReplicaAssignmentError) as info:
        new_partitions("t", existing, 3, {1, 2, 3}, requested)
    assert str(info.value) == message


def test_every_partition_with_another_replication_factor_is_named() -> None:
    existing = _existing({0: (1, 2)})
    requested = {0: (1, 2), 1: (1,), 2: (2, 3), 3: (1, 2, 3)}
    with pytest.raises(InvalidReplicaAssignmentError, match=r"\[1, 3\] have replication factors"):
        new_partitions("t", existing, 4, {1, 2, 3}, requested)


# -- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("partitions", [3, 2, 0, -1])
def test_the_partition_count_can_only_grow(partitions: int) -> None:
    existing = _existing({0: (1,), 1: (2,), 2: (3,)})
    with pytest.raises(TopicOperationError) as info:
        new_partitions("t", existing, partitions, {1, 2, 3})
    assert str(info.value) == (
        f"A topic's partition count can only grow: topic 't' has 3 partitions, so "
        f"--partitions {partitions} adds none"
    )


def test_a_reassignment_in_flight_is_refused() -> None:
    existing = {
        0: ReplicaAssignment((1, 2)),
        1: ReplicaAssignment((3, 2, 1), adding_replicas=(3,), removing_replicas=(1,)),
        2: ReplicaAssignment((2, 3), removing_replicas=(3,)),
    }
    with pytest.raises(TopicOperationError, match=r"reassignment in progress \(partitions 1,2\)"):
        new_partitions("t", existing, 5, {1, 2, 3})


@pytest.mark.parametrize(
    "partition_ids",
    [
        pytest.param([], id="none"),
        pytest.param([0, 2], id="gap"),
        pytest.param([1, 2], id="no-partition-0"),
    ],
)
def test_partition_ids_other_than_0_to_n_are_refused(partition_ids: list[int]) -> None:
    existing = _existing({p: (1,) for p in partition_ids})
    with pytest.raises(TopicOperationError, match=r"not 0\.\.n-1"):
        new_partitions("t", existing, 5, {1, 2, 3})


def test_partition_0_without_replicas_is_refused() -> None:
    existing = _existing({0: (), 1: (1,)})
    with pytest.raises(TopicOperationError, match="Partition 0 of topic 't' has no replicas"):
        new_partitions("t", existing, 3, {1, 2, 3})


def test_added_partitions_are_rack_aware_when_every_broker_has_a_rack() -> None:
    """As Kafka's `addPartitions` over rack-aware broker metadata: every new partition of
    replication factor 2 spans both racks (the rack-unaware rule over brokers 1-4 in id
    order would pair 1 with 2, or 3 with 4, in some partition of these 11)."""
    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    existing = {0: ReplicaAssignment((1, 3))}
    added = new_partitions("t", existing, 12, racks)
    assert sorted(added) == list(range(1, 12))
    for partition, replicas in added.items():
        assert {racks[b] for b in replicas} == {"a", "b"}, partition
