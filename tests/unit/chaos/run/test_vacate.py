"""`vacate`'s decision: every replica on the vacated broker moves to the live broker
holding the fewest of the topic's replicas and not already holding the partition, or is
dropped when every live broker holds one; and the broker a role names among the
registered brokers."""

from __future__ import annotations

import pytest

from chaos.errors import NoTargetNow
from chaos.generator.action_kinds import action_kind
from chaos.generator.schedule import Action
from chaos.run.vacate import resolve_broker, vacated_assignment


def test_only_the_partitions_on_the_broker_move_each_to_the_broker_holding_fewest() -> None:
    current = {0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (3, 2)}
    # broker 3 leaves: p1 and p3 can only take 1; p2 can only take 2
    assert vacated_assignment(current, 3, [1, 2, 3]) == {1: (2, 1), 2: (2, 1), 3: (1, 2)}


def test_the_fewest_held_wins_and_ties_go_to_the_lower_id() -> None:
    current = {0: (4,), 1: (4,), 2: (4,), 3: (1,)}
    assert vacated_assignment(current, 4, [1, 2, 3, 4]) == {0: (2,), 1: (3,), 2: (1,)}


def test_a_replica_no_live_broker_can_take_is_dropped() -> None:
    assert vacated_assignment({0: (1, 2, 3)}, 2, [1, 2, 3]) == {0: (1, 3)}


def test_a_broker_hosting_nothing_moves_nothing() -> None:
    assert vacated_assignment({0: (1, 2)}, 3, [1, 2, 3]) == {}


@pytest.mark.parametrize(
    ("role", "controller", "broker"),
    [("broker:2", 1, 2), ("non-controller:1", 1, 2), ("non-controller:2", 1, 3),
     ("non-controller:1", 2, 1), ("non-controller:2", None, 2)],
)  # fmt: skip
def test_a_role_names_a_registered_broker(role: str, controller: int | None, broker: int) -> None:
    assert resolve_broker(role, [3, 1, 2], controller) == broker


@pytest.mark.parametrize(
    ("role", "message"),
    [("broker:4", "not registered"), ("non-controller:3", "2 registered brokers besides")],
)  # fmt: skip
def test_a_role_naming_no_registered_broker_now_names_nobody(role: str, message: str) -> None:
    """Other faults took the broker away: the action is left out, not failed."""
    with pytest.raises(NoTargetNow, match=message):
        resolve_broker(role, [1, 2, 3], 1)


def test_a_role_that_is_not_a_broker_s_is_refused() -> None:
    with pytest.raises(ValueError, match="broker:<id> or non-controller:<n>"):
        resolve_broker("controller", [1, 2, 3], 1)


def test_the_action_takes_a_broker_role_and_nothing_else() -> None:
    Action(5, "vacate", (("broker", "non-controller:2"),))
    with pytest.raises(Exception, match="broker"):
        Action(5, "vacate", (("broker", "leader:t:0"),))
    assert [p.name for p in action_kind("vacate").params] == ["broker"]
