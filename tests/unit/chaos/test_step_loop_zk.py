"""The runner's step loop never waits on ZooKeeper: with a cluster whose every ZooKeeper
read hangs (a quorum lost), the steps and their undo still run on time."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from chaos import runner
from chaos.faults.base import Check, FaultFailed
from chaos.injector import Injection
from chaos.live import RunStatus
from chaos.schedule import FaultSpec, Schedule, Step
from chaos.zk_off_loop import ControllerWatch, within


class HangingZk:
    """A cluster whose ZooKeeper reads (and ZooKeeper-backed role resolutions) wait until
    `release` is set; ZooKeeper server roles resolve without ZooKeeper."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.reads = 0

    def brokers(self) -> dict[int, str]:
        return {}

    def read_zk(self, read: Callable[[Any], Any]) -> Any:
        self.reads += 1
        self.release.wait()
        raise FaultFailed("ZooKeeper came back too late")

    def resolve(self, role: str, rng: random.Random) -> tuple[str, ...]:
        if role.startswith("zk:"):
            return (f"zk{role[3:]}",)
        return self.read_zk(lambda zk: None)  # type: ignore[no-any-return]


class RecordingInjector:
    """Records when each fault started and stopped."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.log: list[tuple[str, str, float]] = []

    def active(self) -> dict[str, Any]:
        return {}

    def start(self, fault: Any, fault_id: str | None = None) -> Injection:
        assert fault_id is not None
        self.log.append(("start", fault_id, time.monotonic() - self.started))
        return Injection(fault_id, fault, Check(True, "in effect"))

    def stop(self, fault_id: str) -> Injection:
        self.log.append(("stop", fault_id, time.monotonic() - self.started))
        return Injection(fault_id, None, Check(True, "undone"))

    def heal_all(self) -> list[Injection]:
        self.log.append(("heal", "", time.monotonic() - self.started))
        return []


class RecordingView:
    def __init__(self) -> None:
        self.statuses: list[RunStatus] = []
        self.lines: list[str] = []

    def update(self, status: RunStatus, force: bool = False) -> None:
        self.statuses.append(status)

    def say(self, line: str) -> None:
        self.lines.append(line)


@pytest.fixture
def cluster() -> Iterator[HangingZk]:
    zk = HangingZk()
    yield zk
    zk.release.set()  # lets the abandoned reads end


def _perform(
    cluster: HangingZk, steps: tuple[Step, ...], heal_at_s: float, watch: bool
) -> tuple[Any, RecordingInjector, RecordingView]:
    """Perform `steps` through `runner._Performance` (with its controller watch or
    without one) until the heal; the performance, the injector's record and the view."""
    request = SimpleNamespace(scenario=SimpleNamespace(name="t", workload=SimpleNamespace()))
    schedule = Schedule(1, steps, heal_at_s=heal_at_s, end_s=heal_at_s + 0.3)
    view = RecordingView()
    performed = runner._Performance(
        request,  # type: ignore[arg-type]
        schedule,
        cluster,  # type: ignore[arg-type]
        SimpleNamespace(),  # type: ignore[arg-type]
        "topic",
        view,  # type: ignore[arg-type]
    )
    started = time.monotonic()
    injector = RecordingInjector(started)
    if watch:
        with ControllerWatch(performed._read_controller, every_s=0.05) as performed._watch:
            performed._perform(injector, started)  # type: ignore[arg-type]
    else:
        performed._perform(injector, started)  # type: ignore[arg-type]
    return performed, injector, view


def test_a_hanging_zookeeper_read_does_not_delay_the_undo(cluster: HangingZk) -> None:
    steps = (
        Step(0.2, 0.6, FaultSpec("pause", "zk:1")),
        Step(0.2, 0.6, FaultSpec("pause", "zk:2")),
    )
    performed, injector, view = _perform(cluster, steps, heal_at_s=1.2, watch=True)
    kinds = [(kind, fault_id) for kind, fault_id, _ in injector.log]
    assert kinds == [
        ("start", "step-0"),
        ("start", "step-1"),
        ("stop", "step-0"),
        ("stop", "step-1"),
        ("heal", ""),
    ]
    stops = [at for kind, _, at in injector.log if kind == "stop"]
    assert all(0.8 <= at < 1.1 for at in stops), injector.log
    assert cluster.reads >= 1  # the watch did try ZooKeeper, and hangs there
    assert view.statuses
    assert all(s.controller is None for s in view.statuses)
    assert "no fresh answer from ZooKeeper" in view.statuses[-1].note
    assert performed.failed_steps == []


def test_a_role_zookeeper_cannot_resolve_gives_the_step_up_and_the_undo_stays_on_time(
    cluster: HangingZk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "STEP_READ_S", 0.2)
    steps = (
        Step(0.1, 1.0, FaultSpec("pause", "zk:1")),
        Step(0.2, 0.3, FaultSpec("kill", "controller")),
    )
    performed, injector, _ = _perform(cluster, steps, heal_at_s=1.3, watch=False)
    assert [(k, f) for k, f, _ in injector.log] == [
        ("start", "step-0"),
        ("stop", "step-0"),
        ("heal", ""),
    ]
    assert 1.1 <= injector.log[1][2] < 1.4, injector.log
    assert len(performed.failed_steps) == 1
    assert "no answer from ZooKeeper within 0.2 s" in performed.failed_steps[0]


def test_within_returns_the_answer_and_raises_the_call_s_own_error() -> None:
    assert within(lambda: 7, 1.0, "seven") == 7

    def broken() -> int:
        raise KeyError("x")

    with pytest.raises(KeyError):
        within(broken, 1.0, "broken")
    with pytest.raises(ValueError, match="deadline_s"):
        within(lambda: 1, 0, "none")


def test_the_watch_publishes_answers_and_forgets_stale_ones() -> None:
    now = [100.0]
    answered = threading.Event()

    def read() -> tuple[int | None, int | None]:
        answered.set()
        return 2, 5

    watch = ControllerWatch(read, every_s=60, stale_s=3, clock=lambda: now[0])
    assert not watch.seen().known
    with watch:
        assert answered.wait(5)
        deadline = time.monotonic() + 5
        while not watch.seen().known and time.monotonic() < deadline:
            answered.wait(0.01)
        seen = watch.seen()
        assert (seen.controller, seen.epoch, seen.known) == (2, 5, True)
        now[0] += 3.5
        assert watch.seen().known is False
    with pytest.raises(ValueError, match="every_s"):
        ControllerWatch(read, every_s=0)
