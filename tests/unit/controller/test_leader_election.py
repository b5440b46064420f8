"""Partition leader elections as Kafka 2.8 decides them: the corner cases of
`PartitionLeaderElectionAlgorithmsTest` and `Election` as tables, then hypothesis
properties over random assignments, ISRs and live sets."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.leader_election import (
    ElectionResult,
    controlled_shutdown_election,
    elect_controlled_shutdown_leader,
    elect_offline_leader,
    elect_preferred_leader,
    elect_reassign_leader,
    offline_election,
    preferred_election,
    reassign_election,
    remove_replica_from_isr,
)
from domain import NO_LEADER, LeaderAndIsr

EPOCH = 7
ZK_VERSION = 3


def state(leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
    """A partition's current leadership at leader epoch `EPOCH`."""
    return LeaderAndIsr(leader, EPOCH, isr, ZK_VERSION)


def next_state(leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
    """What an election that picks `leader` with `isr` must write: epoch + 1, same zkVersion."""
    return LeaderAndIsr(leader, EPOCH + 1, isr, ZK_VERSION)


# --- the four algorithms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "unclean", "expected"),
    [
        pytest.param((2, 4), (2, 4), {4}, False, 4, id="first-live-isr-member"),
        pytest.param((1, 2, 3), (1, 2, 3), {1, 2, 3}, False, 1, id="all-live-picks-first"),
        pytest.param((1, 2, 3), (3, 2), {1, 2, 3}, False, 2, id="skips-live-not-in-isr"),
        pytest.param((1, 2, 3), (3, 2), {1, 2, 3}, True, 2, id="clean-wins-when-unclean-on"),
        pytest.param((3, 1, 2), (1, 2, 3), {1, 2, 3}, False, 3, id="assignment-order-not-isr"),
        pytest.param((2, 4), (2,), {4}, False, None, id="last-isr-offline-unclean-off"),
        pytest.param((2, 4), (2,), {4}, True, 4, id="last-isr-offline-unclean-on"),
        pytest.param((1, 2, 3), (1,), {3, 2}, True, 2, id="unclean-first-live-in-order"),
        pytest.param((1, 2, 3), (1, 2, 3), set(), True, None, id="nothing-live"),
        pytest.param((1, 2), (), {1, 2}, False, None, id="empty-isr-unclean-off"),
        pytest.param((1, 2), (), {1, 2}, True, 1, id="empty-isr-unclean-on"),
        pytest.param((), (1,), {1}, True, None, id="empty-assignment"),
        pytest.param((1, 2), (5, 2), {5, 2}, False, 2, id="isr-member-outside-assignment"),
    ],
)
def test_offline_leader(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live: AbstractSet[int],
    unclean: bool,
    expected: int | None,
) -> None:
    assert elect_offline_leader(assignment, isr, live, unclean) == expected


@pytest.mark.parametrize(
    ("target", "isr", "live", "expected"),
    [
        pytest.param((2, 4), (2, 4), {4}, 4, id="first-live-isr-member"),
        pytest.param((4, 2), (2, 4), {2, 4}, 4, id="target-order-not-isr"),
        pytest.param((2, 4), (2,), set(), None, id="no-live-isr"),
        pytest.param((2, 4), (), {2}, None, id="empty-isr"),
        pytest.param((5, 6), (1, 2), {1, 2, 5, 6}, None, id="new-replicas-not-yet-in-isr"),
        pytest.param((5, 1, 2), (1, 2, 5), {1, 2}, 1, id="skips-offline-target"),
    ],
)
def test_reassign_leader(
    target: tuple[int, ...], isr: tuple[int, ...], live: AbstractSet[int], expected: int | None
) -> None:
    assert elect_reassign_leader(target, isr, live) == expected


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "expected"),
    [
        pytest.param((2, 4), (2, 4), {2, 4}, 2, id="preferred-live-in-isr"),
        pytest.param((2, 4), (2,), set(), None, id="preferred-in-isr-not-live"),
        pytest.param((2, 4), (4,), {2, 4}, None, id="preferred-live-not-in-isr"),
        pytest.param((2, 4), (), set(), None, id="preferred-neither"),
        pytest.param((2, 4, 6), (4, 6), {4, 6}, None, id="never-falls-back-to-others"),
        pytest.param((), (1,), {1}, None, id="empty-assignment"),
    ],
)
def test_preferred_leader(
    assignment: tuple[int, ...], isr: tuple[int, ...], live: AbstractSet[int], expected: int | None
) -> None:
    assert elect_preferred_leader(assignment, isr, live) == expected


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "shutting_down", "expected"),
    [
        pytest.param((2, 4), (2, 4), {2, 4}, {2}, 4, id="moves-off-shutting-down"),
        pytest.param((2, 4), (2,), {2, 4}, {2}, None, id="last-isr-shutting-down"),
        pytest.param((2, 4), (2, 4), {2, 4}, {2, 4}, None, id="whole-isr-shutting-down"),
        pytest.param((1, 2, 3), (1, 2, 3), {1, 2, 3}, {1, 2}, 3, id="skips-every-shutting-down"),
        pytest.param((1, 2, 3), (1, 3), {1, 2, 3}, {1}, 3, id="skips-live-not-in-isr"),
        pytest.param((1, 2, 3), (1, 2, 3), {1, 3}, {1}, 3, id="skips-offline"),
        pytest.param((1, 2), (1, 2), {1, 2}, set(), 1, id="nobody-shutting-down"),
    ],
)
def test_controlled_shutdown_leader(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live: AbstractSet[int],
    shutting_down: AbstractSet[int],
    expected: int | None,
) -> None:
    assert elect_controlled_shutdown_leader(assignment, isr, live, shutting_down) == expected


# --- elections: new leadership and recipients ----------------------------------------------


@pytest.mark.parametrize(
    ("current", "assignment", "online", "unclean", "expected"),
    [
        pytest.param(
            state(1, (1, 2, 3)),
            (1, 2, 3),
            {2, 3},
            False,
            ElectionResult(next_state(2, (2, 3)), (2, 3)),
            id="leader-lost-isr-shrinks-to-online",
        ),
        pytest.param(
            state(1, (1, 3)),
            (1, 2, 3),
            {2, 3},
            False,
            ElectionResult(next_state(3, (3,)), (2, 3)),
            id="skips-live-replica-not-in-isr",
        ),
        pytest.param(
            state(1, (3, 1, 2)),
            (1, 2, 3),
            {1, 2, 3},
            False,
            ElectionResult(next_state(1, (3, 1, 2)), (1, 2, 3)),
            id="isr-order-kept",
        ),
        pytest.param(
            state(1, (1,)),
            (1, 2, 3),
            {3, 2},
            True,
            ElectionResult(next_state(2, (2,)), (2, 3), unclean=True),
            id="unclean-first-live-becomes-whole-isr",
        ),
        pytest.param(
            state(1, (1,)),
            (1, 2, 3),
            {2, 3},
            False,
            ElectionResult(None, (2, 3)),
            id="unclean-off-no-live-isr-no-leader",
        ),
        pytest.param(
            state(NO_LEADER, (1, 2)),
            (1, 2),
            set(),
            True,
            ElectionResult(None, ()),
            id="nothing-online",
        ),
        pytest.param(
            state(NO_LEADER, (1,)),
            (1, 2),
            {1, 2},
            True,
            ElectionResult(next_state(1, (1,)), (1, 2)),
            id="leaderless-last-isr-member-returns-clean",
        ),
        pytest.param(
            state(1, (1, 2, 5)),
            (1, 2, 3),
            {2, 5},
            False,
            ElectionResult(next_state(2, (2, 5)), (2,)),
            id="isr-filtered-by-online-not-assignment",
        ),
    ],
)
def test_offline_election(
    current: LeaderAndIsr,
    assignment: tuple[int, ...],
    online: AbstractSet[int],
    unclean: bool,
    expected: ElectionResult,
) -> None:
    assert offline_election(current, assignment, online, unclean) == expected


@pytest.mark.parametrize(
    ("current", "target", "online", "expected"),
    [
        pytest.param(
            state(1, (1, 2, 3, 4)),
            (4, 3),
            {1, 2, 3, 4},
            ElectionResult(next_state(4, (1, 2, 3, 4)), (4, 3)),
            id="target-order-isr-kept",
        ),
        pytest.param(
            state(1, (1, 2, 3, 4)),
            (4, 3),
            {1, 2, 3},
            ElectionResult(next_state(3, (1, 2, 3, 4)), (4, 3)),
            id="offline-target-skipped-but-still-a-recipient",
        ),
        pytest.param(
            state(1, (1, 2)),
            (3, 4),
            {1, 2, 3, 4},
            ElectionResult(None, (3, 4)),
            id="target-not-caught-up",
        ),
    ],
)
def test_reassign_election(
    current: LeaderAndIsr,
    target: tuple[int, ...],
    online: AbstractSet[int],
    expected: ElectionResult,
) -> None:
    assert reassign_election(current, target, online) == expected


@pytest.mark.parametrize(
    ("current", "assignment", "online", "expected"),
    [
        pytest.param(
            state(2, (2, 1, 3)),
            (1, 2, 3),
            {1, 2, 3},
            ElectionResult(next_state(1, (2, 1, 3)), (1, 2, 3)),
            id="moves-to-preferred-isr-kept",
        ),
        pytest.param(
            state(2, (2, 3)),
            (1, 2, 3),
            {1, 2, 3},
            ElectionResult(None, (1, 2, 3)),
            id="preferred-not-in-isr-though-others-are",
        ),
        pytest.param(
            state(2, (1, 2, 3)),
            (1, 2, 3),
            {2, 3},
            ElectionResult(None, (1, 2, 3)),
            id="preferred-offline-all-still-recipients",
        ),
    ],
)
def test_preferred_election(
    current: LeaderAndIsr,
    assignment: tuple[int, ...],
    online: AbstractSet[int],
    expected: ElectionResult,
) -> None:
    assert preferred_election(current, assignment, online) == expected


@pytest.mark.parametrize(
    ("current", "assignment", "online_or_shutting_down", "shutting_down", "expected"),
    [
        pytest.param(
            state(1, (1, 2, 3)),
            (1, 2, 3),
            {1, 2, 3},
            {1},
            ElectionResult(next_state(2, (2, 3)), (1, 2, 3)),
            id="leader-shutting-down-leaves-isr",
        ),
        pytest.param(
            state(1, (1, 2, 3)),
            (1, 2, 3),
            {1, 2, 3},
            {1, 2},
            ElectionResult(next_state(3, (3,)), (1, 2, 3)),
            id="every-shutting-down-broker-leaves-isr",
        ),
        pytest.param(
            state(3, (1, 2, 3)),
            (1, 2, 3),
            {1, 2, 3},
            {2},
            ElectionResult(next_state(1, (1, 3)), (1, 2, 3)),
            id="follower-shutting-down-leaves-isr",
        ),
        pytest.param(
            state(1, (1,)),
            (1, 2),
            {1, 2},
            {1},
            ElectionResult(None, (1, 2)),
            id="last-isr-member-shutting-down",
        ),
        pytest.param(
            state(1, (1, 2, 3)),
            (1, 2, 3),
            {1, 3},
            {1},
            ElectionResult(next_state(3, (2, 3)), (1, 3)),
            id="offline-replica-skipped-and-not-a-recipient",
        ),
    ],
)
def test_controlled_shutdown_election(
    current: LeaderAndIsr,
    assignment: tuple[int, ...],
    online_or_shutting_down: AbstractSet[int],
    shutting_down: AbstractSet[int],
    expected: ElectionResult,
) -> None:
    result = controlled_shutdown_election(
        current, assignment, online_or_shutting_down, shutting_down
    )
    assert result == expected


# --- ISR shrink when a replica goes offline ------------------------------------------------


@pytest.mark.parametrize(
    ("current", "replica", "expected"),
    [
        pytest.param(state(1, (1, 2, 3)), 2, next_state(1, (1, 3)), id="follower-removed"),
        pytest.param(
            state(1, (1, 2, 3)), 1, next_state(NO_LEADER, (2, 3)), id="leader-removed-no-leader"
        ),
        pytest.param(state(1, (1,)), 1, next_state(NO_LEADER, (1,)), id="last-member-kept"),
        pytest.param(
            state(NO_LEADER, (2,)), 2, next_state(NO_LEADER, (2,)), id="leaderless-last-member"
        ),
        pytest.param(state(1, (1, 2)), 3, state(1, (1, 2)), id="not-in-isr-unchanged"),
        pytest.param(state(3, (1, 2)), 3, state(3, (1, 2)), id="leader-not-in-isr-unchanged"),
    ],
)
def test_remove_replica_from_isr(
    current: LeaderAndIsr, replica: int, expected: LeaderAndIsr
) -> None:
    assert remove_replica_from_isr(current, replica) == expected


def test_results_are_frozen() -> None:
    result = ElectionResult(None, ())
    with pytest.raises(AttributeError):
        result.unclean = True  # type: ignore[misc]


# --- properties ----------------------------------------------------------------------------

BROKERS = st.integers(min_value=0, max_value=7)
BROKER_SETS = st.frozensets(BROKERS)
PROPERTIES = settings(max_examples=200, deadline=None)


@st.composite
def partitions(draw: st.DrawFn) -> tuple[LeaderAndIsr, tuple[int, ...]]:
    """A current leadership and an assignment: the ISR mostly drawn from the assignment,
    sometimes with a stray broker, in any order; the leader anything, NO_LEADER included."""
    assignment = tuple(draw(st.lists(BROKERS, min_size=1, max_size=5, unique=True)))
    pool = st.sampled_from(assignment) | BROKERS
    isr = tuple(draw(st.lists(pool, max_size=5, unique=True)))
    leader = draw(st.sampled_from((NO_LEADER, *assignment)))
    epoch = draw(st.integers(min_value=0, max_value=2**31 - 2))
    zk_version = draw(st.integers(min_value=0, max_value=1000))
    return LeaderAndIsr(leader, epoch, isr, zk_version), assignment


def assert_next_epoch(current: LeaderAndIsr, result: ElectionResult) -> LeaderAndIsr:
    """An elected result is the next leadership: epoch + 1, the zkVersion it was read at."""
    new = result.leader_and_isr
    assert new is not None
    assert new.leader_epoch == current.leader_epoch + 1
    assert new.zk_version == current.zk_version
    return new


@PROPERTIES
@given(partitions(), BROKER_SETS, st.booleans())
def test_offline_election_properties(
    partition: tuple[LeaderAndIsr, tuple[int, ...]], online: frozenset[int], unclean: bool
) -> None:
    current, assignment = partition
    result = offline_election(current, assignment, online, unclean)
    assert result.recipients == tuple(r for r in assignment if r in online)
    if result.leader_and_isr is None:
        assert not result.unclean
        assert not any(r in online and r in current.isr for r in assignment)
        assert not unclean or not result.recipients
        return
    new = assert_next_epoch(current, result)
    assert new.leader in online
    assert new.leader in assignment
    assert new.isr
    assert new.leader in new.isr
    assert set(new.isr) <= online
    earlier = assignment[: assignment.index(new.leader)]
    if result.unclean:
        assert unclean
        assert new.leader not in current.isr
        assert new.isr == (new.leader,)
        assert not any(r in online and r in current.isr for r in assignment)
        assert not any(r in online for r in earlier)
    else:
        assert new.leader in current.isr
        assert not any(r in online and r in current.isr for r in earlier)


@PROPERTIES
@given(partitions(), BROKER_SETS, BROKER_SETS)
def test_controlled_shutdown_election_properties(
    partition: tuple[LeaderAndIsr, tuple[int, ...]],
    online_or_shutting_down: frozenset[int],
    shutting_down: frozenset[int],
) -> None:
    current, assignment = partition
    result = controlled_shutdown_election(
        current, assignment, online_or_shutting_down, shutting_down
    )
    assert not result.unclean
    assert result.recipients == tuple(r for r in assignment if r in online_or_shutting_down)
    if result.leader_and_isr is None:
        return
    new = assert_next_epoch(current, result)
    assert new.leader not in shutting_down
    assert new.leader in online_or_shutting_down
    assert new.leader in current.isr
    assert new.isr
    assert new.leader in new.isr
    assert not set(new.isr) & shutting_down


@PROPERTIES
@given(partitions(), st.lists(BROKERS, min_size=1, max_size=5, unique=True), BROKER_SETS)
def test_reassign_election_properties(
    partition: tuple[LeaderAndIsr, tuple[int, ...]], target: list[int], online: frozenset[int]
) -> None:
    current, _ = partition
    result = reassign_election(current, target, online)
    assert not result.unclean
    assert result.recipients == tuple(target)
    if result.leader_and_isr is not None:
        new = assert_next_epoch(current, result)
        assert new.leader in target
        assert new.leader in online
        assert new.leader in current.isr
        assert new.isr == current.isr


@PROPERTIES
@given(partitions(), BROKER_SETS)
def test_preferred_election_properties(
    partition: tuple[LeaderAndIsr, tuple[int, ...]], online: frozenset[int]
) -> None:
    current, assignment = partition
    result = preferred_election(current, assignment, online)
    assert not result.unclean
    assert result.recipients == assignment
    preferred = assignment[0]
    if preferred in online and preferred in current.isr:
        new = assert_next_epoch(current, result)
        assert new.leader == preferred
        assert new.isr == current.isr
    else:
        assert result.leader_and_isr is None


@PROPERTIES
@given(partitions(), BROKERS)
def test_remove_replica_from_isr_properties(
    partition: tuple[LeaderAndIsr, tuple[int, ...]], replica: int
) -> None:
    current, _ = partition
    new = remove_replica_from_isr(current, replica)
    if replica not in current.isr:
        assert new == current
        return
    assert new.isr
    assert new.leader_epoch == current.leader_epoch + 1
    assert new.leader == (NO_LEADER if replica == current.leader else current.leader)
    if len(current.isr) > 1:
        assert replica not in new.isr
        assert new.isr == tuple(r for r in current.isr if r != replica)
    else:
        assert new.isr == current.isr
