"""Clock faults on the compose cluster: libfaketime in the real images, moved from the
host while the brokers and ZooKeeper servers run.

Setup: the session's compose project (conftest), built with libfaketime preloaded
(docker/clock/README.md). Each test waits for three registered brokers and a controller
before and after, and leaves every clock real.

Validation: a process in each container reads its wall clock against the host's
(`chaos.faults.clock.skew_ms`); the ZooKeeper JVM's own clock shows in `cons`, whose
`est` is the server's wall time when it accepted each connection; the clock file and
the strobe loop are read back after every undo and after `python -m chaos heal` finished
what a killed runner left.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.faults.clock import REAL, ClockOffset, ClockRate, ClockStrobe, clock_real, skew_ms
from chaos.run.heal_state import HealState
from chaos.run.injector import Deadlines, Injector
from harness.compose import ComposeCluster
from harness.waiting import wait_until

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=60.0, poll_s=0.2)
OFFSET_S = 600


def _serving(handle: ClusterHandle) -> bool:
    return (
        all(handle.broker_registered(i) for i in (1, 2, 3)) and handle.controller_id() is not None
    )


@pytest.fixture
def handle(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """A handle on the session's project, serving before and after the test."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        wait_until(lambda: _serving(cluster), 120, "the cluster does not serve before the test")
        yield cluster
        wait_until(lambda: _serving(cluster), 120, "the cluster does not serve after the test")
        for service in cluster.services():
            assert clock_real(cluster, service).ok, f"{service}'s clock was left faked"


def _jvm_clock_off_by(handle: ClusterHandle, zk: str, offset_ms: int) -> bool:
    """The server stamps a session opened now with its wall clock `offset_ms` off the
    host's, within 10 s: `est` in `cons` is when the server (by its own clock) accepted a
    connection; with the clock ahead, no connection of a real clock is stamped minutes in
    the future."""
    address = endpoints.published(handle.inspect(zk), "2181/tcp")
    assert address is not None, f"{zk} publishes no client port"
    client = KazooClient(hosts=address, timeout=5.0)
    client.start(timeout=15)
    try:
        now = time.time_ns() // 1_000_000
        established = [int(ms) for ms in re.findall(r"est=(\d+)", handle.zk_connections(zk) or "")]
    finally:
        client.stop()
        client.close()
    return any(abs(ms - now - offset_ms) <= 10_000 for ms in established)


def test_an_offset_moves_a_broker_and_a_zookeeper_server_and_its_undo_puts_them_back(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    (broker,) = handle.resolve("controller", random.Random(0))
    (zk,) = handle.resolve("zk-leader", random.Random(0))
    with Injector(handle, tmp_path / "run", deadlines=DEADLINES) as injector:
        started = injector.start(ClockOffset((broker, zk), OFFSET_S))
        assert started.ok, started.check.detail
        for service in (broker, zk):
            measured, uncertainty = skew_ms(handle, service)
            assert abs(measured - OFFSET_S * 1000) <= 1000 + uncertainty, (service, measured)
        # the running JVM reads the file again within its cache time (1 s)
        wait_until(
            lambda: _jvm_clock_off_by(handle, zk, OFFSET_S * 1000),
            30,
            f"{zk}'s JVM does not stamp a new session {OFFSET_S} s ahead",
        )
        stopped = injector.stop(started.fault_id)
        assert stopped.ok, stopped.check.detail
    wait_until(lambda: _jvm_clock_off_by(handle, zk, 0), 30, f"{zk}'s JVM clock stays off")
    assert HealState(tmp_path / "run", handle.project).load() == []


def test_a_strobe_on_a_zookeeper_follower_jumps_both_ways_and_stops(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    (zk,) = handle.resolve("zk-follower", random.Random(0))
    with Injector(handle, tmp_path / "run", deadlines=DEADLINES) as injector:
        started = injector.start(ClockStrobe((zk,), OFFSET_S, 1.0))
        assert started.ok, started.check.detail
        stopped = injector.stop(started.fault_id)
        assert stopped.ok, stopped.check.detail
    spec = handle.exec(zk, ["cat", "/var/lib/faketime/clock.rc"]).strip()
    assert spec == REAL


def test_a_rate_runs_a_broker_clock_fast_and_its_undo_restores_it(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    (broker,) = handle.resolve("non-controller", random.Random(0))
    with Injector(handle, tmp_path / "run", deadlines=DEADLINES) as injector:
        started = injector.start(ClockRate((broker,), 2.0))
        assert started.ok, started.check.detail
        assert "x2.0" in started.check.detail or "x1.9" in started.check.detail
        stopped = injector.stop(started.fault_id)
        assert stopped.ok, stopped.check.detail


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.clock import ClockOffset, ClockStrobe
    from chaos.run.injector import Injector

    project, run_dir, broker, zk = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [
        injector.start(ClockOffset((broker,), 900)),
        injector.start(ClockStrobe((zk,), -900, 1.0)),
    ]
    print("in effect" if all(r.ok for r in results) else "failed", flush=True)
    time.sleep(600)
    """
)


def test_heal_resets_the_clocks_a_runner_killed_mid_fault_left(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    (broker,) = handle.resolve("broker:2", random.Random(0))
    (zk,) = handle.resolve("zk-follower", random.Random(0))
    run_dir = tmp_path / "run"
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, handle.project, str(run_dir), broker, zk],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "in effect"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)
    assert not clock_real(handle, broker).ok
    assert not clock_real(handle, zk).ok

    state_dir = str(tmp_path / ".chaos-state")
    healed = subprocess.run(
        [
            sys.executable,
            "-m",
            "chaos",
            "heal",
            "--project",
            handle.project,
            "--state-dir",
            state_dir,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "nothing left" in healed.stdout
    for service in (broker, zk):
        check = clock_real(handle, service)
        assert check.ok, check.detail
    assert HealState(run_dir, handle.project).load() == []
