"""The process and ZooKeeper faults against `FakeCluster`: what each does to the
containers, that stop is idempotent (half applied, or the target restarted meanwhile),
and that the checks say what they saw. The freezer reading is tested on a fake `/proc`
and cgroup tree; real containers are in tests/docker/test_faults_process.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.errors import FaultFailed, ForeignContainer
from chaos.faults.freezer import freezer_state
from chaos.faults.process import Bounce, Kill, Stop, for_each
from chaos.faults.testing import FakeCluster
from chaos.faults.zookeeper import ZkLeaderKill


def test_kill_stops_its_targets_and_its_undo_starts_them() -> None:
    cluster = FakeCluster()
    fault = Kill(("broker1", "zk2"))
    fault.start(cluster)
    assert fault.took_effect(cluster).ok
    assert fault.took_effect(cluster).detail == "broker1 exited; zk2 exited"
    assert not fault.undone(cluster).ok
    fault.stop(cluster)
    assert fault.undone(cluster).ok
    assert cluster.state["broker1"] == cluster.state["zk2"] == "running"


def test_start_and_stop_are_idempotent() -> None:
    cluster = FakeCluster()
    fault = Stop(("broker2",), timeout_s=3)
    fault.start(cluster)
    fault.start(cluster)
    fault.stop(cluster)
    fault.stop(cluster)
    assert fault.undone(cluster).ok
    assert [c for c in cluster.calls if c[0] in ("stop", "start")] == [
        ("stop", "broker2"),
        ("start", "broker2"),
    ]


def test_a_target_restarted_meanwhile_is_left_alone_by_stop() -> None:
    cluster = FakeCluster()
    fault = Kill(("broker3",))
    fault.start(cluster)
    cluster.start("broker3")  # someone else restarted it
    fault.stop(cluster)
    assert fault.undone(cluster).ok


def test_one_failing_target_does_not_keep_the_others_from_being_undone() -> None:
    cluster = FakeCluster()
    fault = Kill(("broker1", "broker2"))
    fault.start(cluster)
    cluster.state["broker1"] = "dead"
    with pytest.raises(FaultFailed, match="broker1: start broker1: it is dead"):
        fault.stop(cluster)
    assert cluster.state["broker2"] == "running"


def test_for_each_raises_a_lone_foreign_container_as_it_is() -> None:
    def refuse(target: str) -> None:
        raise ForeignContainer(target)

    with pytest.raises(ForeignContainer):
        for_each(("x",), refuse)
    with pytest.raises(FaultFailed, match="x: x; y: y"):
        for_each(("x", "y"), refuse)


def test_bounce_took_effect_means_running_with_a_new_start_time() -> None:
    cluster = FakeCluster()
    fault = Bounce(("broker2",))
    assert not fault.took_effect(cluster).ok
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert check.ok
    assert check.detail == "broker2 running, started start-1"
    rebuilt = Bounce(("broker2",))
    assert rebuilt == fault
    assert "unknown" in rebuilt.took_effect(cluster).detail


def test_zk_leader_kill_needs_a_new_leader_to_take_effect() -> None:
    cluster = FakeCluster()
    fault = ZkLeaderKill.of_current_leader(cluster)
    assert fault.targets == ("zk1",)
    fault.start(cluster)
    assert cluster.state["zk1"] == "exited"
    assert not fault.took_effect(cluster).ok
    cluster.modes["zk3"] = "leader"
    assert fault.took_effect(cluster).ok
    fault.stop(cluster)
    cluster.modes["zk1"] = "follower"
    assert fault.undone(cluster).ok


def test_zk_leader_kill_refuses_a_server_that_no_longer_leads() -> None:
    cluster = FakeCluster()
    with pytest.raises(FaultFailed, match="zk2 no longer leads the ensemble"):
        ZkLeaderKill(("zk2",)).start(cluster)
    assert cluster.state["zk2"] == "running"


def test_without_a_leader_there_is_no_zk_leader_kill() -> None:
    cluster = FakeCluster()
    cluster.modes["zk1"] = "follower"
    with pytest.raises(FaultFailed, match="no ZooKeeper server leads"):
        ZkLeaderKill.of_current_leader(cluster)


def _proc(tmp_path: Path, cgroup: str, status_state: str) -> Path:
    proc = tmp_path / "proc" / "42"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text(cgroup)
    (proc / "status").write_text(f"Name:\tjava\nState:\t{status_state}\n")
    return tmp_path / "proc"


@pytest.mark.parametrize(("value", "frozen"), [("FROZEN", True), ("THAWED", False)])
def test_freezer_state_reads_cgroup_v1(tmp_path: Path, value: str, frozen: bool) -> None:
    proc = _proc(tmp_path, "6:freezer:/docker/abc\n0::/\n", "D (disk sleep)")
    group = tmp_path / "cg" / "freezer" / "docker" / "abc"
    group.mkdir(parents=True)
    (group / "freezer.state").write_text(value + "\n")
    state = freezer_state(42, proc, tmp_path / "cg")
    assert state.frozen is frozen
    assert state.detail == f"pid 42: freezer {value}, state D (disk sleep)"


@pytest.mark.parametrize(("value", "frozen"), [("1", True), ("0", False)])
def test_freezer_state_reads_cgroup_v2(tmp_path: Path, value: str, frozen: bool) -> None:
    proc = _proc(tmp_path, "0::/system.slice/docker-abc.scope\n", "S (sleeping)")
    group = tmp_path / "cg" / "system.slice" / "docker-abc.scope"
    group.mkdir(parents=True)
    (group / "cgroup.events").write_text(f"populated 1\nfrozen {value}\n")
    assert freezer_state(42, proc, tmp_path / "cg").frozen is frozen


def test_freezer_state_of_a_vanished_process_is_not_frozen(tmp_path: Path) -> None:
    state = freezer_state(42, tmp_path, tmp_path)
    assert not state.frozen
    assert "cannot read its cgroups" in state.detail
