"""Role resolution (`chaos.cluster.role_resolution.resolve`) against `FakeCluster`: every
role of the table in docs/chaos.md, seeded picks that repeat with the seed and stay inside
their candidates, the roles that pick by what brokers do naming only running brokers while
the roles that name a broker name it in any state, and a clear `UnknownTarget` for roles
that are unknown or name nobody."""

from __future__ import annotations

import random

import pytest

from chaos.cluster.role_resolution import ROLES, resolve
from chaos.errors import UnknownTarget
from chaos.faults.testing import FakeCluster


@pytest.fixture
def cluster() -> FakeCluster:
    fake = FakeCluster()
    fake.controller = 2
    fake.modes = {"zk1": "follower", "zk2": "follower", "zk3": "leader"}
    fake.leaders = {("t", 0): 3, ("t", 1): 3, ("t", 2): 1, ("u", 0): -1}
    return fake


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("controller", ("broker2",)),
        ("broker:3", ("broker3",)),
        ("non-controller:1", ("broker1",)),
        ("non-controller:2", ("broker3",)),
        ("busiest-leader", ("broker3",)),
        ("leader:t:2", ("broker1",)),
        ("all-brokers", ("broker1", "broker2", "broker3")),
        ("non-controllers", ("broker1", "broker3")),
        ("zk-leader", ("zk3",)),
        ("zk-followers", ("zk1", "zk2")),
        ("zk:1", ("zk1",)),
        ("all", ("broker1", "broker2", "broker3", "zk1", "zk2", "zk3")),
    ],
)
def test_fixed_roles_name_their_services(
    cluster: FakeCluster, role: str, expected: tuple[str, ...]
) -> None:
    assert resolve(role, cluster, random.Random(0)) == expected


@pytest.mark.parametrize(
    ("role", "candidates"),
    [
        ("non-controller", {"broker1", "broker3"}),
        ("random-broker", {"broker1", "broker2", "broker3"}),
        ("zk-follower", {"zk1", "zk2"}),
    ],
)
def test_seeded_picks_stay_among_candidates_and_repeat_with_the_seed(
    cluster: FakeCluster, role: str, candidates: set[str]
) -> None:
    picks = [resolve(role, cluster, random.Random(seed)) for seed in range(40)]
    assert {p for (p,) in picks} == candidates
    again = [resolve(role, cluster, random.Random(seed)) for seed in range(40)]
    assert picks == again


def test_busiest_leader_breaks_a_tie_by_the_lowest_id(cluster: FakeCluster) -> None:
    cluster.leaders = {("t", 0): 3, ("t", 1): 2}
    assert resolve("busiest-leader", cluster, random.Random(0)) == ("broker2",)


def test_without_a_controller_every_broker_is_a_non_controller(cluster: FakeCluster) -> None:
    cluster.controller = None
    with pytest.raises(UnknownTarget, match="no broker of the project is controller"):
        resolve("controller", cluster, random.Random(0))
    picks = {resolve("non-controller", cluster, random.Random(s)) for s in range(30)}
    assert picks == {("broker1",), ("broker2",), ("broker3",)}


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("leader-of-everything", "unknown role"),
        ("broker", "unknown role"),
        ("broker:9", "no broker with id 9"),
        ("broker:x", "not a non-negative integer"),
        ("zk:4", "no ZooKeeper server with id 4"),
        ("leader:t:9", "no state"),
        ("leader:u:0", "has no leader"),
        ("leader:0", "expected leader:<topic>:<partition>"),
    ],
)
def test_bad_or_empty_roles_are_refused_clearly(
    cluster: FakeCluster, role: str, message: str
) -> None:
    with pytest.raises(UnknownTarget, match=message):
        resolve(role, cluster, random.Random(0))


def test_an_unknown_role_lists_the_known_ones(cluster: FakeCluster) -> None:
    with pytest.raises(UnknownTarget) as caught:
        resolve("nope", cluster, random.Random(0))
    assert all(role in str(caught.value) for role in ROLES)


def test_zk_roles_need_a_server_in_that_mode(cluster: FakeCluster) -> None:
    cluster.modes = {"zk1": "follower", "zk2": "follower", "zk3": "follower"}
    with pytest.raises(UnknownTarget, match="no ZooKeeper server is leader"):
        resolve("zk-leader", cluster, random.Random(0))
    cluster.state["zk3"] = "exited"
    cluster.modes["zk3"] = "leader"
    with pytest.raises(UnknownTarget, match="leader"):
        resolve("zk-leader", cluster, random.Random(0))


def test_a_project_without_brokers_has_no_broker_roles() -> None:
    empty = FakeCluster(brokers=0)
    with pytest.raises(UnknownTarget, match="no brokers"):
        resolve("random-broker", empty, random.Random(0))


def test_there_is_no_third_non_controller_of_three_brokers(cluster: FakeCluster) -> None:
    with pytest.raises(UnknownTarget, match="2 brokers besides the controller"):
        resolve("non-controller:3", cluster, random.Random(0))


def test_non_controllers_of_a_lone_controller_name_nobody() -> None:
    lone = FakeCluster(brokers=1)
    with pytest.raises(UnknownTarget, match="no running broker but the controller"):
        resolve("non-controllers", lone, random.Random(0))


@pytest.mark.parametrize("down", ["exited", "paused"])
def test_picks_and_groups_name_only_running_brokers(cluster: FakeCluster, down: str) -> None:
    # broker3 leads the most partitions, but another fault has taken it away
    cluster.state["broker3"] = down
    for seed in range(40):
        assert resolve("non-controller", cluster, random.Random(seed)) == ("broker1",)
        assert resolve("random-broker", cluster, random.Random(seed)) in {
            ("broker1",),
            ("broker2",),
        }
    assert resolve("busiest-leader", cluster, random.Random(0)) == ("broker1",)
    assert resolve("all-brokers", cluster, random.Random(0)) == ("broker1", "broker2")
    assert resolve("non-controllers", cluster, random.Random(0)) == ("broker1",)
    # the roles that name their broker name it whatever its state
    assert resolve("broker:3", cluster, random.Random(0)) == ("broker3",)
    assert resolve("non-controller:2", cluster, random.Random(0)) == ("broker3",)
    assert resolve("leader:t:0", cluster, random.Random(0)) == ("broker3",)
    cluster.controller = 3
    assert resolve("controller", cluster, random.Random(0)) == ("broker3",)


def test_no_running_broker_is_a_clear_error(cluster: FakeCluster) -> None:
    for service in ("broker1", "broker2", "broker3"):
        cluster.state[service] = "exited"
    for role in ("random-broker", "non-controller", "busiest-leader", "all-brokers"):
        with pytest.raises(UnknownTarget, match="no broker of the project runs now"):
            resolve(role, cluster, random.Random(0))


def test_a_group_of_broker_ids_names_those_brokers(cluster: FakeCluster) -> None:
    assert resolve("brokers:2,1", cluster, random.Random(0)) == ("broker1", "broker2")
    with pytest.raises(UnknownTarget, match="no broker with id 7"):
        resolve("brokers:1,7", cluster, random.Random(0))
