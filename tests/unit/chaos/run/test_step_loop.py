"""The runner's step loop: it never waits on ZooKeeper (with a cluster whose every
ZooKeeper read hangs, a quorum lost, the steps and their undo still run on time), it
leaves out a step or a spare action ZooKeeper gave no answer for while the schedule held
the ensemble, and it starts a triggered step on its event and stops it its duration
later."""

from __future__ import annotations

import functools
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from chaos.cluster.zk_off_loop import ControllerWatch, within
from chaos.errors import FaultFailed, NoTargetNow
from chaos.faults.base import Check
from chaos.faults.params import Scalar
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step, Trigger
from chaos.run import runner, step_loop
from chaos.run.injector import Injection
from chaos.run.live import RunStatus
from chaos.run.step_loop import StepLoop


class HangingZk:
    """A cluster whose ZooKeeper reads (and ZooKeeper-backed role resolutions) wait until
    `release` is set; ZooKeeper server roles resolve without ZooKeeper."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.reads = 0

    def brokers(self) -> dict[int, str]:
        return {}

    def started_at(self, service: str) -> str:
        return "2026-12-06T17:00:00Z"

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
    cluster: HangingZk,
    steps: tuple[Step, ...],
    heal_at_s: float,
    watch: bool,
    actions: tuple[Action, ...] = (),
) -> tuple[StepLoop, RecordingInjector, RecordingView]:
    """Perform `steps` and `actions` through a `StepLoop` with the status of
    `runner._Performance` (with its controller watch or without one) until the heal; the
    loop, the injector's record and the view."""
    request = SimpleNamespace(scenario=SimpleNamespace(name="t", workload=SimpleNamespace()))
    schedule = Schedule(1, steps, heal_at_s=heal_at_s, end_s=heal_at_s + 0.3, actions=actions)
    view = RecordingView()
    performed = runner._Performance(
        request,  # type: ignore[arg-type]
        schedule,
        cluster,  # type: ignore[arg-type]
        SimpleNamespace(),  # type: ignore[arg-type]
        "topic",
        view,  # type: ignore[arg-type]
    )
    loop = StepLoop(
        schedule,
        cluster,  # type: ignore[arg-type]
        view,  # type: ignore[arg-type]
        None,
        {},
        elect=lambda request: pytest.fail("no action elects"),
    )
    started = loop.start_clock()
    injector = RecordingInjector(started)
    status = functools.partial(performed._status, started)
    if watch:
        with ControllerWatch(performed._read_controller, every_s=0.05) as performed._watch:
            loop.perform(injector, status, threading.Event())  # type: ignore[arg-type]
    else:
        loop.perform(injector, status, threading.Event())  # type: ignore[arg-type]
    return loop, injector, view


def test_a_hanging_zookeeper_read_does_not_delay_the_undo(cluster: HangingZk) -> None:
    steps = (
        Step(0.2, 0.6, FaultSpec("pause", "zk:1")),
        Step(0.2, 0.6, FaultSpec("pause", "zk:2")),
    )
    performed, injector, view = _perform(cluster, steps, heal_at_s=1.2, watch=True)
    kinds = [(kind, fault_id) for kind, fault_id, _ in injector.log]
    # each step on a thread of its own: the two starts (and the two stops) in any order
    assert sorted(kinds[:2]) == [("start", "step-0"), ("start", "step-1")]
    assert sorted(kinds[2:4]) == [("stop", "step-0"), ("stop", "step-1")]
    assert kinds[4:] == [("heal", "")]
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
    """While a step of the schedule holds the ensemble, the step whose role could not be
    read is left out: the schedule's faults met."""
    monkeypatch.setattr(step_loop, "STEP_READ_S", 0.2)
    steps = (
        Step(0.1, 1.0, FaultSpec("pause", "zk:1")),
        Step(0.2, 0.3, FaultSpec("kill", "controller")),
    )
    performed, injector, view = _perform(cluster, steps, heal_at_s=1.3, watch=False)
    assert [(k, f) for k, f, _ in injector.log] == [
        ("start", "step-0"),
        ("stop", "step-0"),
        ("heal", ""),
    ]
    assert 1.1 <= injector.log[1][2] < 1.4, injector.log
    assert performed.failed_steps == []
    (said,) = [line for line in view.lines if "step 1: left out" in line]
    assert "no answer from ZooKeeper within 0.2 s (step 0 held it)" in said


def test_a_role_zookeeper_cannot_resolve_with_the_ensemble_left_alone_fails_the_step(
    cluster: HangingZk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_loop, "STEP_READ_S", 0.2)
    steps = (Step(0.2, 0.3, FaultSpec("kill", "controller")),)
    performed, injector, _ = _perform(cluster, steps, heal_at_s=0.8, watch=False)
    assert [(k, f) for k, f, _ in injector.log] == [("heal", "")]
    (failed,) = performed.failed_steps
    assert "no answer from ZooKeeper within 0.2 s" in failed


@pytest.mark.parametrize(
    ("kind", "params", "left_out"),
    [
        ("add-partitions", (("partitions", 4), ("topic", "t")), True),
        ("alter-config", (("key", "min.insync.replicas"), ("topic", "t"), ("value", "2")), True),
        ("reassign", (("topic", "t"),), False),  # reassignment_completes needs it issued
        ("delete-topic", (("topic", "t"),), False),
    ],
)
def test_an_unanswered_action_while_zookeeper_is_held_is_left_out_unless_a_premise(
    cluster: HangingZk,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    params: tuple[tuple[str, Scalar], ...],
    left_out: bool,
) -> None:
    monkeypatch.setattr(step_loop, "ACTION_READ_S", 0.2)
    steps = (Step(0.1, 1.0, FaultSpec("pause", "zk:1")),)
    actions = (Action(0.2, kind, params),)
    performed, _, view = _perform(cluster, steps, heal_at_s=1.3, watch=False, actions=actions)
    said = [line for line in view.lines if kind in line]
    if left_out:
        assert performed.failed_steps == []
        assert any("left out" in line and "(step 0 held ZooKeeper)" in line for line in said)
    else:
        (failed,) = performed.failed_steps
        assert failed.startswith(f"action {kind}: ")
        assert "no answer from ZooKeeper" in failed


def test_an_unanswered_action_with_the_ensemble_left_alone_fails(
    cluster: HangingZk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_loop, "ACTION_READ_S", 0.2)
    actions = (Action(0.1, "add-partitions", (("partitions", 4), ("topic", "t"))),)
    performed, _, _ = _perform(cluster, (), heal_at_s=0.8, watch=False, actions=actions)
    (failed,) = performed.failed_steps
    assert "no answer from ZooKeeper within 0.2 s" in failed


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


def _status(phase: str, injector: Any) -> RunStatus:
    return RunStatus("t", None, 0.0, 1.0, phase, (), {}, {}, None, None)


def _triggered_loop(schedule: Schedule, view: RecordingView, event_dir: Path | None) -> StepLoop:
    """A loop over steps on ZooKeeper servers that no ZooKeeper read holds up, and no action."""
    return StepLoop(
        schedule,
        HangingZk(),  # type: ignore[arg-type]
        view,  # type: ignore[arg-type]
        event_dir,
        {},
        elect=lambda request: pytest.fail("no action elects"),
    )


def test_the_loop_starts_a_triggered_step_on_its_event_and_stops_it_its_duration_later(
    tmp_path: Path,
) -> None:
    log = tmp_path / "broker2.jsonl"
    log.touch()
    trigger = Trigger("leader_elected", (("partition", 0),), within_s=1.0)
    steps = (
        Step(0.1, 0.3, FaultSpec("pause", "zk:1"), trigger),
        Step(0.1, 0.3, FaultSpec("pause", "zk:2"), trigger),
        Step(0.2, 0.2, FaultSpec("pause", "zk:3"), Trigger("broker_change", within_s=0.3)),
    )
    view = RecordingView()
    loop = _triggered_loop(Schedule(1, steps, heal_at_s=1.6, end_s=2.0), view, tmp_path)
    injector = RecordingInjector(loop.start_clock())

    def elect_later() -> None:
        time.sleep(0.4)  # the cluster's own pace: what the loop must wait for
        ts = int(time.time() * 1000)
        with open(log, "a", encoding="utf-8") as f:
            for partition in (1, None, 0):
                event = {"ts": ts, "node": "broker1", "kind": "leader_elected"}
                f.write(json.dumps({**event, "partition": partition}) + "\n")

    cluster_side = threading.Thread(target=elect_later)
    cluster_side.start()
    heal_at = loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    cluster_side.join()
    kinds = [(k, f) for k, f, _ in injector.log]
    assert sorted(kinds[:2]) == [("start", "step-0"), ("start", "step-1")]
    assert sorted(kinds[2:4]) == [("stop", "step-0"), ("stop", "step-1")]
    assert kinds[4:] == [("heal", "")]
    at = {f"{k} {f}": t for k, f, t in injector.log}
    # after the event, and before the trigger's wait (0.1 s + 1.0 s) would have ended;
    # bounds wide enough for a loaded host, which only ever makes the loop late
    assert 0.4 <= at["start step-0"] < 1.1, injector.log
    assert 0.28 <= at["stop step-1"] - at["start step-1"] < 0.8, injector.log
    assert heal_at - injector.started >= 1.6
    assert len(loop.failed_steps) == 1
    assert "step 2" in loop.failed_steps[0]
    assert "its event did not come in time" in loop.failed_steps[0]
    assert any("step 0: leader_elected of broker1" in line for line in view.lines)


def test_a_trigger_without_event_logs_to_watch_is_a_failed_step_and_nothing_starts() -> None:
    steps = (Step(0.1, 0.2, FaultSpec("pause", "zk:1"), Trigger("broker_change", within_s=0.5)),)
    loop = _triggered_loop(Schedule(1, steps, heal_at_s=0.9, end_s=1.0), RecordingView(), None)
    injector = RecordingInjector(loop.start_clock())
    loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    assert [k for k, _, _ in injector.log] == ["heal"]
    assert loop.failed_steps == [
        "step 0 (0.1s +0.2s pause zk:1 on broker_change within 0.5s): not started: "
        "the cluster has no event logs to watch"
    ]


def test_an_optional_trigger_whose_event_never_comes_leaves_its_step_out(tmp_path: Path) -> None:
    (tmp_path / "broker1.jsonl").touch()
    optional = Trigger("broker_change", within_s=0.2, optional=True)
    steps = (Step(0.1, 0.2, FaultSpec("pause", "zk:1"), optional),)
    view = RecordingView()
    loop = _triggered_loop(Schedule(1, steps, heal_at_s=0.6, end_s=0.8), view, tmp_path)
    injector = RecordingInjector(loop.start_clock())
    loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    assert [k for k, _, _ in injector.log] == ["heal"]
    assert loop.failed_steps == []
    assert any("step 0: left out: its optional event did not come" in line for line in view.lines)


class SlowStartInjector(RecordingInjector):
    """An injector whose start of `slow` waits out its took-effect deadline (`hold_s`)."""

    def __init__(self, started: float, slow: str, hold_s: float) -> None:
        super().__init__(started)
        self.slow = slow
        self.hold_s = hold_s

    def start(self, fault: Any, fault_id: str | None = None) -> Injection:
        if fault_id == self.slow:
            time.sleep(self.hold_s)  # the injector polling a check that never holds
        return super().start(fault, fault_id)


def test_a_start_that_waits_out_its_deadline_holds_no_other_step_up(tmp_path: Path) -> None:
    # a blind hunt's run: session expiries (seconds each to prove) and a latency that
    # could not prove itself held the loop up, and the steps behind them started up to
    # ten seconds late, overlapping where the overlap rules had kept them apart
    log = tmp_path / "broker2.jsonl"
    log.touch()
    optional = Trigger("leader_elected", within_s=0.8, optional=True)
    steps = (
        Step(0.05, 0.1, FaultSpec("pause", "zk:1"), optional),
        Step(0.1, 0.2, FaultSpec("pause", "zk:2")),
        Step(0.3, 0.1, FaultSpec("pause", "zk:3")),
    )
    view = RecordingView()
    loop = _triggered_loop(Schedule(1, steps, heal_at_s=1.6, end_s=1.8), view, tmp_path)
    injector = SlowStartInjector(loop.start_clock(), "step-1", hold_s=1.2)

    def elect_meanwhile() -> None:
        time.sleep(0.3)  # the cluster's own pace, while step 1 still proves itself
        event = {"ts": int(time.time() * 1000), "node": "broker2", "kind": "leader_elected"}
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")

    cluster_side = threading.Thread(target=elect_meanwhile)
    cluster_side.start()
    loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    cluster_side.join()
    at = {f"{k} {f}": t for k, f, t in injector.log}
    assert set(at) == {f"{k} step-{i}" for k in ("start", "stop") for i in range(3)} | {"heal "}
    # bounds wide enough for a loaded host, which only ever makes the loop late
    assert 0.3 <= at["start step-2"] < 0.9, injector.log
    assert 0.3 <= at["start step-0"] < 1.0, injector.log
    assert at["start step-1"] >= 1.2  # its start returned once it had proved itself
    # stopped at its stop cue, long passed: at once
    assert at["stop step-1"] - at["start step-1"] < 0.3, injector.log
    assert at["heal "] == max(at.values())
    assert loop.failed_steps == []


def test_steps_the_loop_reaches_after_the_heal_was_due_are_not_started(tmp_path: Path) -> None:
    (tmp_path / "broker2.jsonl").touch()
    optional = Trigger("leader_elected", within_s=0.3, optional=True)
    steps = (
        Step(0.05, 0.1, FaultSpec("pause", "zk:1"), optional),
        Step(0.1, 0.2, FaultSpec("pause", "zk:2")),
    )
    view = RecordingView()
    loop = _triggered_loop(Schedule(1, steps, heal_at_s=0.5, end_s=0.7), view, tmp_path)
    injector = RecordingInjector(loop.start_clock())
    held = threading.Event()

    def held_up(phase: str, injector: Any) -> RunStatus:
        if not held.is_set():  # the loop's own thread descheduled past the heal
            held.set()
            time.sleep(0.8)
        return _status(phase, injector)

    loop.perform(injector, held_up, threading.Event())  # type: ignore[arg-type]
    assert [(k, f) for k, f, _ in injector.log] == [("heal", "")]
    assert loop.failed_steps == [
        "step 1 (0.1s +0.2s pause zk:2): not started: the heal was due before the loop reached it"
    ]
    assert any("step 0: left out: the heal was due before it" in line for line in view.lines)


class DownCluster(HangingZk):
    """A cluster whose brokers resolve by name and whose `down` ones are not running."""

    def __init__(self, down: set[str]) -> None:
        super().__init__()
        self.down = down

    def resolve(self, role: str, rng: random.Random) -> tuple[str, ...]:
        return (f"broker{role.removeprefix('broker:')}",)

    def status(self, service: str) -> str:
        return "exited" if service in self.down else "running"


class UnprovenInjector(RecordingInjector):
    def start(self, fault: Any, fault_id: str | None = None) -> Injection:
        assert fault_id is not None
        self.log.append(("start", fault_id, time.monotonic() - self.started))
        return Injection(fault_id, fault, Check(False, "took_effect not seen: not running"))


class RestartedCluster(DownCluster):
    """Its brokers run, each a new container run since the first look."""

    def __init__(self) -> None:
        super().__init__(set())
        self.looks = 0

    def started_at(self, service: str) -> str:
        self.looks += 1
        return f"run {self.looks}"


@pytest.mark.parametrize(
    ("cluster", "failed"),
    [(DownCluster({"broker1"}), 0), (RestartedCluster(), 0), (DownCluster(set()), 1)],
    ids=["down", "restarted", "running"],
)
def test_a_step_whose_target_another_fault_took_away_is_left_out(
    cluster: DownCluster, failed: int
) -> None:
    # a blind hunt's run: a latency on broker1 proving itself as a double outage killed it
    step = Step(0.1, 0.3, FaultSpec("latency", "broker:1", (("delay_ms", 100),)))
    loop, view = _unproven(step, cluster)
    assert len(loop.failed_steps) == failed
    left_out = [line for line in view.lines if "left out: broker1 went away" in line]
    assert len(left_out) == 1 - failed


def _unproven(
    step: Step | tuple[Step, ...],
    cluster: DownCluster,
    injector_of: Callable[[float], RecordingInjector] = lambda t: UnprovenInjector(t),
) -> tuple[StepLoop, RecordingView]:
    """The steps performed on `cluster` by an injector (by default one whose faults never
    prove themselves), healed at 0.6 s."""
    view = RecordingView()
    loop = StepLoop(
        Schedule(1, step if isinstance(step, tuple) else (step,), heal_at_s=0.6, end_s=0.8),
        cluster,  # type: ignore[arg-type]
        view,  # type: ignore[arg-type]
        None,
        {},
        elect=lambda request: pytest.fail("no action elects"),
    )
    injector = injector_of(loop.start_clock())
    loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    return loop, view


class NobodyCluster(DownCluster):
    def resolve(self, role: str, rng: random.Random) -> tuple[str, ...]:
        raise NoTargetNow("role 'non-controller': no running broker but the controller")


def test_a_role_that_names_nobody_now_leaves_its_step_out() -> None:
    # a blind hunt's replay: a double outage left only the controller running
    steps = (Step(0.1, 0.2, FaultSpec("pause", "non-controller")),)
    view = RecordingView()
    loop = StepLoop(
        Schedule(1, steps, heal_at_s=0.5, end_s=0.7),
        NobodyCluster(set()),  # type: ignore[arg-type]
        view,  # type: ignore[arg-type]
        None,
        {},
        elect=lambda request: pytest.fail("no action elects"),
    )
    injector = RecordingInjector(loop.start_clock())
    loop.perform(injector, _status, threading.Event())  # type: ignore[arg-type]
    assert loop.failed_steps == []
    assert [k for k, _, _ in injector.log] == ["heal"]
    assert any("step 0: left out: role 'non-controller'" in line for line in view.lines)


class ControllerCluster(DownCluster):
    """Broker 2 holds `/controller`; its `down` brokers are not running."""

    def controller_id(self) -> int:
        return 2

    def services(self) -> tuple[str, ...]:
        return ("broker1", "broker2", "broker3")


@pytest.mark.parametrize(("down", "failed"), [({"broker2"}, 0), (set(), 1)], ids=["gone", "up"])
def test_a_request_fault_whose_controller_another_fault_took_away_is_left_out(
    down: set[str], failed: int
) -> None:
    # a soak's run: the controller killed while a request fault on broker1 started, whose
    # proxy was to run in the controller's namespace
    step = Step(0.1, 0.3, FaultSpec("request", "broker:1"))
    loop, view = _unproven(step, ControllerCluster(down))
    assert len(loop.failed_steps) == failed
    left_out = [line for line in view.lines if "left out: broker2 went away" in line]
    assert len(left_out) == 1 - failed


class LateUndoInjector(RecordingInjector):
    """Step 1's fault proves nothing until step 0's undo has come (that undo removed it)."""

    def __init__(self, started: float) -> None:
        super().__init__(started)
        self.undone = threading.Event()

    def start(self, fault: Any, fault_id: str | None = None) -> Injection:
        if fault_id != "step-1":
            return super().start(fault, fault_id)
        self.log.append(("start", fault_id, time.monotonic() - self.started))
        assert self.undone.wait(5.0)
        return Injection(fault_id, fault, Check(False, "root qdisc is None, want tbf"))

    def stop(self, fault_id: str) -> Injection:
        self.undone.set()
        return super().stop(fault_id)


@pytest.mark.parametrize(("second", "failed"), [("broker:1", 0), ("broker:2", 1)])
def test_a_step_whose_proof_met_an_undo_of_its_kind_on_its_target_is_left_out(
    second: str, failed: int
) -> None:
    # a soak's run: a bandwidth proved itself late, so stopped late, and its undo removed
    # the later bandwidth's qdisc on the same broker
    rate = (("rate_kbit", 512),)
    steps = (
        Step(0.1, 0.1, FaultSpec("bandwidth", "broker:1", rate)),
        Step(0.15, 0.2, FaultSpec("bandwidth", second, rate)),
    )
    loop, view = _unproven(steps, DownCluster(set()), LateUndoInjector)
    assert len(loop.failed_steps) == failed
    left_out = [line for line in view.lines if "step 1: left out: step 0's undo came on" in line]
    assert len(left_out) == 1 - failed
