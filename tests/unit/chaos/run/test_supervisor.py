"""The heal's supervisor (`chaos.run.supervisor`): a node down once every fault is undone
exited on its own and is started again; one that runs or is paused is left alone."""

from __future__ import annotations

from chaos.faults.testing import FakeCluster
from chaos.run.supervisor import restart_exited


def test_a_node_that_exited_on_its_own_is_started_and_named() -> None:
    cluster = FakeCluster()
    cluster.state["broker3"] = "exited"
    cluster.state["zk2"] = "paused"  # not down: a supervisor does not thaw
    said = restart_exited(cluster)  # type: ignore[arg-type]
    assert said == ["heal: broker3 was exited with no fault holding it; started it again"]
    assert cluster.state["broker3"] == "running"
    assert cluster.state["zk2"] == "paused"
    assert [c for c in cluster.calls if c[0] == "start"] == [("start", "broker3")]


def test_a_cluster_that_runs_is_left_alone() -> None:
    cluster = FakeCluster()
    assert restart_exited(cluster) == []  # type: ignore[arg-type]
    assert not [c for c in cluster.calls if c[0] == "start"]


def test_a_node_that_cannot_start_is_named_and_the_others_still_start() -> None:
    cluster = FakeCluster()
    cluster.state["broker1"] = "dead"  # the fake starts only an exited container
    cluster.state["broker2"] = "exited"
    said = restart_exited(cluster)  # type: ignore[arg-type]
    assert said[0].startswith("heal: broker1 is down and did not start again: ")
    assert said[1] == "heal: broker2 was exited with no fault holding it; started it again"
    assert cluster.state["broker2"] == "running"
