"""The reassignment a schedule's `reassign` action asks for."""

from __future__ import annotations

from chaos.actions import shifted_assignment


def test_every_replica_moves_to_the_next_live_broker() -> None:
    assert shifted_assignment({0: (1, 2), 1: (2, 3)}, [1, 2, 3], 1) == {0: (2, 3), 1: (3, 1)}


def test_a_shift_by_the_broker_count_changes_nothing() -> None:
    assert shifted_assignment({0: (1, 2, 3)}, [3, 1, 2], 3) == {0: (1, 2, 3)}


def test_replicas_on_brokers_that_are_not_live_stay() -> None:
    assert shifted_assignment({0: (1, 4)}, [1, 2], 1) == {0: (2, 4)}
