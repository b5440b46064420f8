"""The `clock` fault on the compose cluster: libfaketime in the real broker and ZooKeeper
images, their offset and rate moved from the host while the servers run.

Setup: the session's compose project (conftest), its images built with libfaketime
preloaded (docker/clock/README.md). Each test waits for three registered brokers and a
controller before and after, and leaves every broker's and ZooKeeper server's clock real.

Steps and validation: a Python process in a broker container prints `time.time()` and
`time.monotonic()`; the wall clock must be shifted by the offset against the host's, read
around the call, while the monotonic clock (one kernel) stays the host's; under a rate,
its wall clock must advance `factor` times what its monotonic clock does. A ZooKeeper
server's clock is read by `date` there (the fault's own check), and the ensemble must keep
its quorum while it is off. Each undo is read back the same way, a strobe must show both
of its offsets, and `python -m chaos heal` must finish what a killed runner left.
"""

from __future__ import annotations

import json
import random
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from chaos.cluster.handle import ClusterHandle
from chaos.faults.clock import REAL, TOLERANCE_MS, ClockFault, clock_at, clock_real
from chaos.faults.clock_rate import FACTOR_TOLERANCE
from chaos.run.heal_state import HealState
from chaos.run.injector import Deadlines
from chaos.run.testing import heal, in_effect, killed_mid_fault
from harness.compose import ComposeCluster
from harness.waiting import wait_until
from zkdata.client import KafkaZkClient

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=60.0, poll_s=0.2)
BUMP_MS = 60_000
#: A Python process in the broker container, under the preload as the broker is.
_READ = "import json, time; print(json.dumps([time.time(), time.monotonic()]))"
#: The same process reads both clocks around a second's sleep (a monotonic one).
_SPEED = (
    "import json, time; w, m = time.time(), time.monotonic(); time.sleep(1); "
    "print(json.dumps([time.time() - w, time.monotonic() - m]))"
)


def _quorum(handle: ClusterHandle) -> bool:
    modes = sorted(handle.zk_mode(s) for s in handle.zk_servers().values())
    return modes == ["follower", "follower", "leader"]


def _serving(handle: ClusterHandle) -> bool:
    return (
        all(handle.broker_registered(i) for i in (1, 2, 3)) and handle.controller_id() is not None
    )


@pytest.fixture
def handle(compose_cluster: ComposeCluster) -> Iterator[ClusterHandle]:
    """A handle on the session's project, serving before and after the test, with every
    broker's clock real afterwards."""
    with ClusterHandle.for_compose(compose_cluster) as cluster:
        wait_until(lambda: _serving(cluster), 120, "the cluster does not serve before the test")
        yield cluster
        wait_until(lambda: _serving(cluster), 120, "the cluster does not serve after the test")
        for node in (*cluster.brokers().values(), *cluster.zk_servers().values()):
            check = clock_real(cluster, node)
            assert check.ok, check.detail


def _python_clocks(handle: ClusterHandle, broker: str) -> tuple[float, float, float]:
    """The broker container's `time.time()` minus the host's, its `time.monotonic()` minus
    the host's (both in ms, against the host's clocks read around the call), and the
    uncertainty of both (half the round trip, in ms)."""
    wall_before, mono_before = time.time(), time.monotonic()
    out = handle.exec(broker, ["/opt/venv/bin/python", "-c", _READ])
    wall_after, mono_after = time.time(), time.monotonic()
    wall, mono = json.loads(out)
    return (
        (wall - (wall_before + wall_after) / 2) * 1000,
        (mono - (mono_before + mono_after) / 2) * 1000,
        (mono_after - mono_before) * 500,
    )


def _near(value_ms: float, want_ms: float, uncertainty_ms: float) -> bool:
    return abs(value_ms - want_ms) <= TOLERANCE_MS + uncertainty_ms


def test_a_bump_shifts_the_wall_clock_not_the_monotonic_one_and_its_undo_puts_it_back(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    """Bump a broker +60 s: Python there reads a wall clock 60 s ahead and the host's
    monotonic clock; after the undo, the wall clock agrees with the host's again."""
    (victim,) = handle.resolve("non-controller", random.Random(1))
    wall, mono, uncertainty = _python_clocks(handle, victim)
    assert _near(wall, 0, uncertainty), f"{victim} is {wall:+.0f} ms off before the fault"
    with in_effect(handle, tmp_path / "run", ClockFault((victim,), "bump", BUMP_MS), DEADLINES):
        wall, mono, uncertainty = _python_clocks(handle, victim)
        assert _near(wall, BUMP_MS, uncertainty), f"wall {wall:+.0f} ms, want +{BUMP_MS}"
        assert _near(mono, 0, uncertainty), f"monotonic {mono:+.0f} ms off the host's"
        # the broker itself goes on serving with its clock off
        wait_until(lambda: _serving(handle), 30, "the cluster stopped serving")
    wall, mono, uncertainty = _python_clocks(handle, victim)
    assert _near(wall, 0, uncertainty), f"{victim} is {wall:+.0f} ms off after the undo"
    assert _near(mono, 0, uncertainty), f"monotonic {mono:+.0f} ms off the host's"


def test_a_strobe_shows_both_offsets_and_stops_with_its_undo(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    (victim,) = handle.resolve("controller", random.Random(0))
    fault = ClockFault((victim,), "strobe", -30_000, 5_000, 1000)
    with in_effect(handle, tmp_path / "run", fault, DEADLINES) as started:
        assert "want both -30000 and +5000" in started.check.detail
        seen: set[int] = set()

        def both_seen() -> bool:
            wall, _, uncertainty = _python_clocks(handle, victim)
            seen.update(w for w in (-30_000, 5_000) if _near(wall, w, uncertainty))
            return seen == {-30_000, 5_000}

        wait_until(both_seen, 10, lambda: f"Python saw only {seen} in {victim}")
    assert handle.exec(victim, ["cat", "/var/lib/faketime/clock.rc"]).strip() == REAL


def test_a_zookeeper_servers_clock_moves_and_its_undo_puts_it_back(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    """Bump a ZooKeeper follower -10 min: `date` there reads it, the ensemble keeps its
    quorum and the brokers their sessions; after the undo it agrees with the host's."""
    (victim,) = handle.resolve("zk-follower", random.Random(0))
    with in_effect(handle, tmp_path / "run", ClockFault((victim,), "bump", -600_000), DEADLINES):
        check = clock_at(handle, victim, -600_000)
        assert check.ok, check.detail
        wait_until(lambda: _quorum(handle), 30, "the ensemble lost its quorum")
        wait_until(lambda: _serving(handle), 30, "the cluster stopped serving")
    check = clock_at(handle, victim, 0)
    assert check.ok, check.detail


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_a_rate_runs_a_brokers_wall_clock_fast_or_slow_and_not_its_monotonic_one(
    handle: ClusterHandle, tmp_path: Path, factor: float
) -> None:
    (victim,) = handle.resolve("non-controller", random.Random(2))
    fault = ClockFault((victim,), "rate", factor=factor)
    with in_effect(handle, tmp_path / "run", fault, DEADLINES) as started:
        assert f"(want x{factor:g})" in started.check.detail
        wall_s, mono_s = json.loads(handle.exec(victim, ["/opt/venv/bin/python", "-c", _SPEED]))
        assert 1.0 <= mono_s < 1.5, f"a second's sleep lasted {mono_s:.3f} s"
        assert abs(wall_s / mono_s - factor) <= FACTOR_TOLERANCE, f"wall {wall_s:.3f} s"
        wait_until(lambda: _serving(handle), 30, "the cluster stopped serving")


def _mtime_speed(handle: ClusterHandle, path: str) -> float:
    """How fast the clock that stamps znodes (the ZooKeeper leader's) runs: the `mtime`s
    of two writes of `path` over the host's monotonic time between them."""

    def write(client: KafkaZkClient) -> int:
        client.kazoo.ensure_path(path)
        return int(client.kazoo.set(path, b"x").mtime)

    before_mono, before_mtime = time.monotonic(), handle.read_zk(write)
    time.sleep(2)  # the interval measured, not a wait for anything
    after_mtime, after_mono = handle.read_zk(write), time.monotonic()
    return (after_mtime - before_mtime) / 1000 / (after_mono - before_mono)


def test_a_rate_on_the_zookeeper_leader_runs_its_jvms_clock_and_keeps_the_quorum(
    handle: ClusterHandle, tmp_path: Path
) -> None:
    """x2 on the ZooKeeper leader: the znodes it stamps meanwhile show its JVM's clock
    running twice as fast (two writes 2 s apart, `mtime`s 4 s apart), its sessions and
    ticks do not (the quorum and the brokers' sessions hold)."""
    (victim,) = handle.resolve("zk-leader", random.Random(0))
    path = f"/clock-rate-{uuid.uuid4().hex[:8]}"
    speeds: list[float] = []
    fault = ClockFault((victim,), "rate", factor=2.0)
    with in_effect(handle, tmp_path / "run", fault, DEADLINES) as started:
        assert "(want x2)" in started.check.detail

        def twice_as_fast() -> bool:
            speeds.append(_mtime_speed(handle, path))
            return abs(speeds[-1] - 2.0) <= 0.25

        wait_until(twice_as_fast, 30, lambda: f"znode clock speeds {speeds}")
        assert handle.zk_mode(victim) == "leader", f"{victim} is no longer the leader"
        wait_until(lambda: _quorum(handle), 30, "the ensemble lost its quorum")
        wait_until(lambda: _serving(handle), 30, "the cluster stopped serving")
    speeds.clear()

    def real_again() -> bool:  # once the JVM has read the reset (within 2 s)
        speeds.append(_mtime_speed(handle, path))
        return abs(speeds[-1] - 1.0) <= 0.25

    wait_until(real_again, 30, lambda: f"znode clock speeds {speeds} after the undo")
    handle.read_zk(lambda client: client.kazoo.delete(path))
    assert handle.exec(victim, ["cat", "/var/lib/faketime/clock.rc"]).strip() == REAL


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.clock import ClockFault
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    project, run_dir, bumped, strobed, zk = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [
        injector.start(ClockFault((bumped,), "bump", -3_600_000)),
        injector.start(ClockFault((strobed,), "strobe", 600_000, 0, 1000)),
        injector.start(ClockFault((zk,), "bump", 900_000)),
    ]
    print(IN_EFFECT if all(r.ok for r in results) else "failed", flush=True)
    time.sleep(600)
    """
)


def test_heal_resets_the_clocks_a_killed_runner_left(handle: ClusterHandle, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (bumped,) = handle.resolve("broker:1", random.Random(0))
    (strobed,) = handle.resolve("broker:2", random.Random(0))
    (zk,) = handle.resolve("zk:2", random.Random(0))
    killed_mid_fault(RUNNER, [handle.project, str(run_dir), bumped, strobed, zk], REPO_ROOT)
    assert not clock_real(handle, bumped).ok
    assert not clock_real(handle, zk).ok
    assert len(HealState(run_dir, handle.project).load()) == 3

    healed = heal(handle.project, tmp_path / ".chaos-state", REPO_ROOT)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    for node in (bumped, strobed, zk):
        check = clock_real(handle, node)
        assert check.ok, check.detail
    assert HealState(run_dir, handle.project).load() == []
