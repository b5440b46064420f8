"""Process and ZooKeeper faults on the compose cluster: real containers, real freezer,
real ensemble, through `ClusterHandle` and `Injector`.

Setup: the session's compose project (conftest). Each test leaves the cluster whole:
the `handle` fixture starts or unpauses whatever a test left down and waits for three
registered brokers, a controller and a serving ensemble.

Validation: docker's own view of each container (status, StartedAt), the cgroup freezer
read from the host, ZooKeeper's modes by `srvr`, and `faults.jsonl`.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker.client import DockerClient

from chaos.cluster.handle import ClusterHandle
from chaos.errors import ForeignContainer
from chaos.faults.freezer import freezer_state
from chaos.faults.process import Bounce, Kill, Pause, Stop
from chaos.faults.zookeeper import ZkLeaderKill, ZkPause
from chaos.run.heal_state import STATE_FILE, ActiveFault, HealState
from chaos.run.injector import Deadlines, Injector
from chaos.run.testing import heal, in_effect, killed_mid_fault, phases
from harness.compose import ComposeCluster
from harness.waiting import wait_until

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=90.0, poll_s=0.2)


def _whole(handle: ClusterHandle) -> bool:
    """Every container runs; three brokers registered, a controller, one zk leader."""
    for service in handle.services():
        status = handle.status(service)
        if status == "paused":
            handle.unpause(service)
        elif status != "running":
            handle.start(service)
    if any(handle.status(s) != "running" for s in handle.services()):
        return False
    modes = sorted(handle.zk_mode(s) for s in handle.zk_servers().values())
    return (
        modes == ["follower", "follower", "leader"]
        and all(handle.broker_registered(i) for i in (1, 2, 3))
        and handle.controller_id() is not None
    )


@pytest.fixture
def handle(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """A handle on the session's project; the cluster is made whole again afterwards, and
    the session's ZooKeeper connect string follows servers that moved port."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        wait_until(lambda: _whole(cluster), 120, "the cluster is not whole before the test")
        yield cluster
        wait_until(lambda: _whole(cluster), 180, "the cluster did not become whole again")
        # a restarted ZooKeeper server is published on a new port: keep the session's
        # connect string current for the tests that follow
        compose_cluster.zk_connect = cluster.published_zk_connect()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """The run directory (its heal pointers go to tmp_path/.chaos-state)."""
    return tmp_path / "run"


def test_kill_takes_a_broker_down_and_its_undo_brings_it_back(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("non-controller", random.Random(7))
    with in_effect(handle, run_dir, Kill((victim,)), DEADLINES):
        assert handle.status(victim) == "exited"
    assert handle.status(victim) == "running"
    broker_id = next(i for i, s in handle.brokers().items() if s == victim)
    wait_until(lambda: handle.broker_registered(broker_id), 60, f"{victim} did not register")


def test_stop_shuts_the_controller_down_and_start_brings_it_back(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("controller", random.Random(0))
    with in_effect(handle, run_dir, Stop((victim,), timeout_s=20), DEADLINES):
        assert handle.status(victim) == "exited"
    assert handle.status(victim) == "running"


def test_pause_freezes_the_process_and_unpause_thaws_it(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("random-broker", random.Random(3))
    with in_effect(handle, run_dir, Pause((victim,)), DEADLINES) as started:
        assert "FROZEN" in started.check.detail
        assert handle.status(victim) == "paused"
        assert freezer_state(handle.pid(victim)).frozen
    assert handle.status(victim) == "running"
    assert not freezer_state(handle.pid(victim)).frozen


def test_bounce_restarts_a_broker_at_once(handle: ClusterHandle, run_dir: Path) -> None:
    (victim,) = handle.resolve("broker:2", random.Random(0))
    before = handle.started_at(victim)
    with in_effect(handle, run_dir, Bounce((victim,)), DEADLINES):
        assert handle.status(victim) == "running"
        assert handle.started_at(victim) != before


def test_zk_leader_kill_makes_another_server_lead(handle: ClusterHandle, run_dir: Path) -> None:
    fault = ZkLeaderKill.of_current_leader(handle)
    (old_leader,) = fault.targets
    assert handle.resolve("zk-leader", random.Random(0)) == (old_leader,)
    with in_effect(handle, run_dir, fault, DEADLINES):
        assert handle.status(old_leader) == "exited"
        (new_leader,) = handle.resolve("zk-leader", random.Random(0))
        assert new_leader != old_leader
    assert handle.zk_mode(old_leader) in ("follower", "leader")


def test_zk_pause_freezes_one_follower_and_the_ensemble_keeps_a_leader(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (follower,) = handle.resolve("zk-follower", random.Random(5))
    with in_effect(handle, run_dir, ZkPause((follower,)), DEADLINES):
        assert freezer_state(handle.pid(follower)).frozen
        assert handle.zk_mode(follower) == "unreachable"
        assert len(handle.resolve("zk-leader", random.Random(0))) == 1
    wait_until(
        lambda: handle.zk_mode(follower) in ("follower", "leader"),
        30,
        f"{follower} does not serve again after its thaw",
    )


def test_a_target_restarted_mid_fault_still_stops_cleanly(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (killed,) = handle.resolve("broker:1", random.Random(0))
    (paused,) = handle.resolve("broker:3", random.Random(0))
    with Injector(handle, run_dir, deadlines=DEADLINES) as injector:
        kill = injector.start(Kill((killed,)))
        pause = injector.start(Pause((paused,)))
        assert kill.ok, kill.check.detail
        assert pause.ok, pause.check.detail
        handle.start(killed)  # someone else restarts and thaws them meanwhile
        handle.unpause(paused)
        assert injector.stop(kill.fault_id).ok
        assert injector.stop(pause.fault_id).ok
    assert handle.status(killed) == handle.status(paused) == "running"
    assert [ok for _, ok in phases(run_dir)] == [True] * 8


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.process import Kill, Pause
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    project, run_dir, paused, killed = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [injector.start(Pause((paused,))), injector.start(Kill((killed,)))]
    print(IN_EFFECT if all(r.ok for r in results) else "failed", flush=True)
    time.sleep(600)
    """
)


def test_heal_undoes_what_a_runner_killed_mid_fault_left(
    handle: ClusterHandle, run_dir: Path, tmp_path: Path
) -> None:
    (paused,) = handle.resolve("broker:1", random.Random(0))
    (killed,) = handle.resolve("broker:2", random.Random(0))
    killed_mid_fault(RUNNER, [handle.project, str(run_dir), paused, killed], REPO_ROOT)
    assert handle.status(paused) == "paused"
    assert handle.status(killed) == "exited"
    assert len(HealState(run_dir, handle.project).load()) == 2

    healed = heal(handle.project, tmp_path / ".chaos-state", REPO_ROOT)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "nothing left" in healed.stdout
    assert handle.status(paused) == handle.status(killed) == "running"
    assert not freezer_state(handle.pid(paused)).frozen
    assert HealState(run_dir, handle.project).load() == []
    assert (run_dir / STATE_FILE).exists()
    assert not (tmp_path / ".chaos-state" / f"{handle.project}.json").exists()
    again = heal(handle.project, tmp_path / ".chaos-state", REPO_ROOT)
    assert again.returncode == 0
    assert "nothing to heal" in again.stdout


def test_a_container_outside_the_project_is_refused_and_untouched(
    handle: ClusterHandle, run_dir: Path
) -> None:
    client = DockerClient.from_env()
    foreign: Any = client.containers.run(
        "testbed-base:latest", "sleep 600", detach=True, labels={"x": "y"}
    )
    try:
        foreign.reload()
        started = foreign.attrs["State"]["StartedAt"]
        for action in (handle.kill, handle.pause, handle.start, handle.status):
            for name in (foreign.name, foreign.id):
                with pytest.raises(ForeignContainer, match="refusing to touch it"):
                    action(name)
        with (
            Injector(handle, run_dir, deadlines=DEADLINES) as injector,
            pytest.raises(ForeignContainer),
        ):
            injector.start(Kill((foreign.name,)))
        foreign.reload()
        assert foreign.status == "running"
        assert foreign.attrs["State"]["StartedAt"] == started
        assert HealState(run_dir, handle.project).load() == []
    finally:
        foreign.remove(force=True)
        client.close()


def test_heal_of_a_project_without_containers_keeps_the_state(tmp_path: Path) -> None:
    """Nothing can be undone on a project that is not up: exit 1, the state stays."""
    project = f"testbed-absent-{tmp_path.name}".lower()
    state = HealState(tmp_path / "run", project)
    fault = Kill(("broker1",))
    state.add(ActiveFault("f1", fault.kind, fault.targets, fault.describe(), 0))
    healed = heal(project, tmp_path / ".chaos-state", REPO_ROOT)
    assert healed.returncode == 1, healed.stdout + healed.stderr
    assert "has no containers" in healed.stdout
    assert [f.id for f in state.load()] == ["f1"]
