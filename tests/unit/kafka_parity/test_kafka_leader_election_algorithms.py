"""Every case of Kafka 2.8's `PartitionLeaderElectionAlgorithmsTest` as data: each case id
is the Kafka test method it mirrors. Kafka calls `PartitionLeaderElectionAlgorithms`; here
the same inputs go to the four pure `elect_*` functions. Kafka also checks its
unclean-election meter in the two "last ISR offline" cases; here the offline election's
result carries `unclean`, which the caller counts, so those cases check that flag too."""

from __future__ import annotations

import pytest

from controller.leader_election import (
    elect_controlled_shutdown_leader,
    elect_offline_leader,
    elect_preferred_leader,
    elect_reassign_leader,
    offline_election,
)
from domain import LeaderAndIsr


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "unclean_enabled", "leader", "unclean_counted"),
    [
        pytest.param((2, 4), (2, 4), {4}, False, 4, False, id="testOfflinePartitionLeaderElection"),
        pytest.param(
            (2, 4),
            (2,),
            {4},
            False,
            None,
            False,
            id="testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled",
        ),
        pytest.param(
            (2, 4),
            (2,),
            {4},
            True,
            4,
            True,
            id="testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled",
        ),
    ],
)
def test_offline_election(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live: set[int],
    unclean_enabled: bool,
    leader: int | None,
    unclean_counted: bool,
) -> None:
    """The first live ISR member in assignment order; a live non-ISR replica only when
    unclean election is enabled, and then the election counts as unclean."""
    assert elect_offline_leader(assignment, isr, frozenset(live), unclean_enabled) == leader
    current = LeaderAndIsr(isr[0], 0, isr, 0)
    result = offline_election(current, assignment, frozenset(live), unclean_enabled)
    elected = None if result.leader_and_isr is None else result.leader_and_isr.leader
    assert elected == leader
    assert result.unclean is unclean_counted


@pytest.mark.parametrize(
    ("target", "isr", "live", "leader"),
    [
        pytest.param((2, 4), (2, 4), {4}, 4, id="testReassignPartitionLeaderElection"),
        pytest.param(
            (2, 4), (2,), set(), None, id="testReassignPartitionLeaderElectionWithNoLiveIsr"
        ),
        pytest.param((2, 4), (), {2}, None, id="testReassignPartitionLeaderElectionWithEmptyIsr"),
    ],
)
def test_reassign_election(
    target: tuple[int, ...], isr: tuple[int, ...], live: set[int], leader: int | None
) -> None:
    """The first target replica that is live and in the ISR."""
    assert elect_reassign_leader(target, isr, frozenset(live)) == leader


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "leader"),
    [
        pytest.param((2, 4), (2, 4), {2, 4}, 2, id="testPreferredReplicaPartitionLeaderElection"),
        pytest.param(
            (2, 4),
            (2,),
            set(),
            None,
            id="testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive",
        ),
        pytest.param(
            (2, 4),
            (4,),
            {2, 4},
            None,
            id="testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive",
        ),
        pytest.param(
            (2, 4),
            (),
            set(),
            None,
            id="testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive",
        ),
    ],
)
def test_preferred_election(
    assignment: tuple[int, ...], isr: tuple[int, ...], live: set[int], leader: int | None
) -> None:
    """Only the first assigned replica may win, and only if it is live and in the ISR."""
    assert elect_preferred_leader(assignment, isr, frozenset(live)) == leader


@pytest.mark.parametrize(
    ("assignment", "isr", "live", "shutting_down", "leader"),
    [
        pytest.param(
            (2, 4), (2, 4), {2, 4}, {2}, 4, id="testControlledShutdownPartitionLeaderElection"
        ),
        pytest.param(
            (2, 4),
            (2,),
            {2, 4},
            {2},
            None,
            id="testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown",
        ),
        pytest.param(
            (2, 4),
            (2, 4),
            {2, 4},
            {2, 4},
            None,
            id="testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown",
        ),
    ],
)
def test_controlled_shutdown_election(
    assignment: tuple[int, ...],
    isr: tuple[int, ...],
    live: set[int],
    shutting_down: set[int],
    leader: int | None,
) -> None:
    """The first live ISR member that is not shutting down."""
    got = elect_controlled_shutdown_leader(
        assignment, isr, frozenset(live), frozenset(shutting_down)
    )
    assert got == leader
