"""CPU and memory faults on the compose cluster: real `docker update`, real cgroup v1
files read from the host, through `ClusterHandle` and `Injector`, and `python -m chaos
heal` after a runner killed mid-fault.

Setup: the session's compose project (conftest). Each test leaves every container
running with no CPU quota and no memory limit, three brokers registered.

Validation: the CPU time a busy process in the target's cgroup uses per second
(`cpuacct.usage`, sampled by the test itself), the cgroup's quota and memory limit, docker's
`HostConfig` and `State.OOMKilled`, and `faults.jsonl`.
"""

from __future__ import annotations

import random
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker.client import DockerClient

from chaos.cluster.handle import ClusterHandle
from chaos.faults.cgroup import MIB, cpu_quota, cpu_rate, cpu_usage_ns, memory_state
from chaos.faults.resources import CPU_MARGIN, CpuStarve, MemorySqueeze
from chaos.run.heal_state import HealState
from chaos.run.injector import Deadlines
from chaos.run.testing import heal, in_effect, killed_mid_fault
from harness.compose import ComposeCluster
from harness.waiting import wait_until

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=90.0, poll_s=0.2)
BUSY_S = 40
ALLOCATE_MB = 256
PRESS_MB = 24
HOLD = "import time; time.sleep(10)"


def _unlimited(handle: ClusterHandle, service: str) -> bool:
    limits = handle.resource_limits(service)
    quota, _ = cpu_quota(handle.cgroup_dir(service, "cpu"))
    memory = memory_state(handle.cgroup_dir(service, "memory"))
    return quota == -1 and not limits.cpu_limited and not memory.limited


def _whole(handle: ClusterHandle) -> bool:
    """Every container runs without limits; three brokers registered."""
    for service in handle.services():
        if handle.status(service) == "exited":
            handle.start(service)
    if any(handle.status(s) != "running" for s in handle.services()):
        return False
    return all(_unlimited(handle, s) for s in handle.services()) and all(
        handle.broker_registered(i) for i in (1, 2, 3)
    )


@pytest.fixture
def handle(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """A handle on the session's project, whole before and after the test."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        wait_until(lambda: _whole(cluster), 120, "the cluster is not whole before the test")
        yield cluster
        wait_until(lambda: _whole(cluster), 180, "the cluster did not become whole again")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """The run directory (its heal pointers go to tmp_path/.chaos-state)."""
    return tmp_path / "run"


def _exec(handle: ClusterHandle, service: str, command: str) -> None:
    """Run `command` in the service's container, detached (it joins the container's
    cgroups)."""
    client = DockerClient.from_env()
    client.containers.get(handle.inspect(service)["Id"]).exec_run(
        ["sh", "-c", command], detach=True
    )


def _busy(handle: ClusterHandle, service: str) -> None:
    _exec(handle, service, f"timeout {BUSY_S} sh -c 'while :; do :; done'")


def _rate(handle: ClusterHandle, service: str, window_s: float = 2.0) -> float:
    """CPU seconds per second the service's cgroup uses, over `window_s`."""
    acct = handle.cgroup_dir(service, "cpuacct")
    before, began = cpu_usage_ns(acct), time.monotonic()
    time.sleep(window_s)  # a measurement window, not a synchronisation
    return cpu_rate(before, cpu_usage_ns(acct), time.monotonic() - began)


def test_cpu_starve_holds_a_busy_broker_to_its_quota_and_its_undo_lifts_it(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("non-controller", random.Random(3))
    _busy(handle, victim)
    wait_until(lambda: _rate(handle, victim, 1.0) > 0.5, 20, f"{victim} is not busy")
    fault = CpuStarve((victim,), percent=5)
    with in_effect(handle, run_dir, fault, DEADLINES):
        assert cpu_quota(handle.cgroup_dir(victim, "cpu")) == (5000, 100000)
        starved = _rate(handle, victim)
        assert starved <= 0.05 + CPU_MARGIN, f"{victim} used {starved:.3f} CPU s/s"
    assert cpu_quota(handle.cgroup_dir(victim, "cpu"))[0] == -1
    assert not handle.resource_limits(victim).cpu_limited
    assert _rate(handle, victim) > 0.5, "the busy loop did not get its core back"


def test_memory_squeeze_holds_usage_under_the_limit_and_is_lifted(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("non-controller", random.Random(5))
    group = handle.cgroup_dir(victim, "memory")
    before = memory_state(group)
    fault = MemorySqueeze((victim,), limit_mb=int(before.usage_bytes // MIB) + 16)
    with in_effect(handle, run_dir, fault, DEADLINES) as started:
        assert memory_state(group).limit_bytes == fault.limit_mb * MIB
        assert handle.resource_limits(victim).memory_bytes == fault.limit_mb * MIB
        assert f"memory limit {fault.limit_mb} MiB" in started.check.detail
        assert "limit hit" in started.check.detail
        # a process beside the broker takes 24 MiB more than the 16 MiB left: the kernel
        # must reclaim the cgroup's page cache to make room, and usage stays under the limit
        _exec(handle, victim, f"python3 -c 'x = bytearray({PRESS_MB} * 2**20); {HOLD}'")
        wait_until(
            lambda: memory_state(group).usage_bytes >= fault.limit_mb * MIB - 4 * MIB,
            30,
            "usage never reached the limit",
        )
        assert memory_state(group).usage_bytes <= fault.limit_mb * MIB
        assert handle.status(victim) == "running"
    assert not memory_state(group).limited
    assert not handle.resource_limits(victim).memory_limited


def test_memory_squeeze_reports_an_oom_kill_and_its_undo_starts_the_broker(
    handle: ClusterHandle, run_dir: Path
) -> None:
    (victim,) = handle.resolve("non-controller", random.Random(11))
    usage_mb = memory_state(handle.cgroup_dir(victim, "memory")).usage_bytes // MIB
    fault = MemorySqueeze((victim,), limit_mb=int(usage_mb) + 16)
    with in_effect(handle, run_dir, fault, DEADLINES):
        # the broker is made the OOM killer's first choice, then a process beside it asks
        # for far more than the limit leaves
        Path(f"/proc/{handle.pid(victim)}/oom_score_adj").write_text("1000\n")
        _exec(handle, victim, f"python3 -c 'x = bytearray({ALLOCATE_MB} * 2**20)'")
        wait_until(lambda: handle.status(victim) == "exited", 60, f"{victim} was not OOM-killed")
        assert handle.resource_limits(victim).oom_killed
        assert fault.took_effect(handle).detail == f"{victim} exited, OOM-killed (docker OOMKilled)"
    assert handle.status(victim) == "running"
    assert not memory_state(handle.cgroup_dir(victim, "memory")).limited
    broker_id = next(i for i, s in handle.brokers().items() if s == victim)
    wait_until(lambda: handle.broker_registered(broker_id), 60, f"{victim} did not register")


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.resources import CpuStarve, MemorySqueeze
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    project, run_dir, starved, squeezed = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [
        injector.start(CpuStarve((starved,), 5)),
        injector.start(MemorySqueeze((squeezed,), 2048)),
    ]
    print(IN_EFFECT if all(r.ok for r in results) else "failed", flush=True)
    time.sleep(600)
    """
)


def test_heal_lifts_the_limits_a_runner_killed_mid_fault_left(
    handle: ClusterHandle, run_dir: Path, tmp_path: Path
) -> None:
    (starved,) = handle.resolve("broker:1", random.Random(0))
    (squeezed,) = handle.resolve("zk:2", random.Random(0))
    killed_mid_fault(RUNNER, [handle.project, str(run_dir), starved, squeezed], REPO_ROOT)
    assert cpu_quota(handle.cgroup_dir(starved, "cpu"))[0] == 5000
    assert memory_state(handle.cgroup_dir(squeezed, "memory")).limit_bytes == 2048 * MIB
    assert len(HealState(run_dir, handle.project).load()) == 2

    healed = heal(handle.project, tmp_path / ".chaos-state", REPO_ROOT)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "nothing left" in healed.stdout
    assert _unlimited(handle, starved)
    assert _unlimited(handle, squeezed)
    assert not handle.resource_limits(squeezed).memory_limited
    assert HealState(run_dir, handle.project).load() == []
