"""The `clock` fault on the compose cluster: libfaketime in the real broker image, its
offset moved from the host while the brokers run.

Setup: the session's compose project (conftest), its broker image built with libfaketime
preloaded (docker/clock/README.md). Each test waits for three registered brokers and a
controller before and after, and leaves every broker's clock real.

Steps and validation: a Python process in the container prints `time.time()` and
`time.monotonic()`; the wall clock must be shifted by the offset against the host's, read
around the call, while the monotonic clock (one kernel) stays the host's. Each undo is
read back the same way, a strobe must show both of its offsets, ZooKeeper must be
refused, and `python -m chaos heal` must finish what a killed runner left.
"""

from __future__ import annotations

import json
import random
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chaos.cluster.handle import ClusterHandle
from chaos.errors import UnknownRole
from chaos.faults.clock import REAL, TOLERANCE_MS, ClockFault, clock_real
from chaos.faults.fields import BadFaultData
from chaos.faults.registry import FAULT_TYPES, check_target
from chaos.run.heal_state import HealState
from chaos.run.injector import Deadlines
from chaos.run.testing import heal, in_effect, killed_mid_fault
from harness.compose import ComposeCluster
from harness.waiting import wait_until

pytestmark = pytest.mark.docker

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINES = Deadlines(took_effect_s=45.0, undone_s=60.0, poll_s=0.2)
BUMP_MS = 60_000
#: A Python process in the broker container, under the preload as the broker is.
_READ = "import json, time; print(json.dumps([time.time(), time.monotonic()]))"


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
        for broker in cluster.brokers().values():
            check = clock_real(cluster, broker)
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


def test_zookeeper_is_refused(handle: ClusterHandle) -> None:
    with pytest.raises(UnknownRole, match="no faked clock"):
        check_target(FAULT_TYPES["clock"], "zk-leader")
    with pytest.raises(BadFaultData, match="brokers only"):
        ClockFault(tuple(handle.zk_servers().values())[:1], "bump", BUMP_MS)


RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from chaos.cluster.handle import ClusterHandle
    from chaos.faults.clock import ClockFault
    from chaos.run.injector import Injector
    from chaos.run.testing import IN_EFFECT

    project, run_dir, bumped, strobed = sys.argv[1:]
    injector = Injector(ClusterHandle.for_project(project), Path(run_dir))
    results = [
        injector.start(ClockFault((bumped,), "bump", -3_600_000)),
        injector.start(ClockFault((strobed,), "strobe", 600_000, 0, 1000)),
    ]
    print(IN_EFFECT if all(r.ok for r in results) else "failed", flush=True)
    time.sleep(600)
    """
)


def test_heal_resets_the_clocks_a_killed_runner_left(handle: ClusterHandle, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (bumped,) = handle.resolve("broker:1", random.Random(0))
    (strobed,) = handle.resolve("broker:2", random.Random(0))
    killed_mid_fault(RUNNER, [handle.project, str(run_dir), bumped, strobed], REPO_ROOT)
    assert not clock_real(handle, bumped).ok
    assert len(HealState(run_dir, handle.project).load()) == 2

    healed = heal(handle.project, tmp_path / ".chaos-state", REPO_ROOT)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    for broker in (bumped, strobed):
        check = clock_real(handle, broker)
        assert check.ok, check.detail
    assert HealState(run_dir, handle.project).load() == []
