"""The injector against `FakeCluster` and `FakeFault`, on a fake clock: the heal state is
written before a fault starts and emptied only by a verified undo; a fault that fails to
start or never takes effect is reported and still undone; refused targets leave nothing;
`heal_all` rebuilds what an earlier process left; the `with` block heals on Ctrl-C."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chaos.errors import ForeignContainer, UnknownTarget
from chaos.faults.base import Check, FaultTarget
from chaos.faults.process import Kill
from chaos.faults.testing import FakeCluster, FakeFault
from chaos.run.heal_state import STATE_FILE, HealState
from chaos.run.injector import FAULT_LOG, TRACE_DIR, Deadlines, Injector
from chaos.testing import FakeClock
from eventlog.jsonlines import read_json_lines


def _injector(cluster: FakeCluster, run_dir: Path, clock: FakeClock | None = None) -> Injector:
    clock = clock or FakeClock()
    return Injector(
        cluster,
        run_dir,
        deadlines=Deadlines(took_effect_s=5.0, undone_s=5.0, poll_s=0.5),
        monotonic=clock.monotonic,
        sleep=clock.sleep,
        wall_ms=clock.wall_ms,
    )


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    return [line for _, line in read_json_lines(run_dir / FAULT_LOG) if isinstance(line, dict)]


def _phases(run_dir: Path) -> list[tuple[str, str, bool]]:
    return [(line["fault"], line["phase"], line["ok"]) for line in _lines(run_dir)]


def _recorded_ids(run_dir: Path) -> list[str]:
    return [f.id for f in HealState(run_dir, "fake").load()]


def test_the_state_holds_the_fault_before_it_starts_and_loses_it_once_undone(
    tmp_path: Path,
) -> None:
    seen_at_start: list[list[str]] = []
    fault = FakeFault(on_start=lambda: seen_at_start.append(_recorded_ids(tmp_path)))
    injector = _injector(FakeCluster(), tmp_path)
    started = injector.start(fault)
    assert started.ok
    assert seen_at_start == [[started.fault_id]]
    assert _recorded_ids(tmp_path) == [started.fault_id]
    assert injector.active() == {started.fault_id: fault}

    stopped = injector.stop(fault)
    assert stopped.ok
    assert _recorded_ids(tmp_path) == []
    assert injector.active() == {}
    assert not (tmp_path.parent / ".chaos-state" / "fake.json").exists()
    assert _phases(tmp_path) == [
        ("f1", "start", True),
        ("f1", "took_effect", True),
        ("f1", "stop", True),
        ("f1", "undone", True),
    ]


def test_each_log_line_carries_time_fault_kind_targets_and_outcome(tmp_path: Path) -> None:
    clock = FakeClock()
    injector = _injector(FakeCluster(), tmp_path, clock)
    injector.start(FakeFault(targets=("broker2", "zk1")), fault_id="first")
    injector.close()
    start, effect = _lines(tmp_path)
    assert start == {
        "ts": clock.wall_ms(),
        "fault": "first",
        "kind": "fake",
        "targets": ["broker2", "zk1"],
        "phase": "start",
        "ok": True,
        "detail": "started",
        "params": {"targets": ["broker2", "zk1"]},
    }
    assert effect["phase"] == "took_effect"
    assert effect["elapsed_ms"] == 0
    assert effect["detail"] == "applied=True"


def test_a_fault_that_never_takes_effect_is_reported_and_undone(tmp_path: Path) -> None:
    clock = FakeClock()
    fault = FakeFault(takes_effect=False)
    began = clock.monotonic()
    started = _injector(FakeCluster(), tmp_path, clock).start(fault)
    assert not started.ok
    assert "took_effect not seen after 5s" in started.check.detail
    assert clock.monotonic() - began >= 5.0
    assert fault.applied == [False]
    assert _recorded_ids(tmp_path) == []
    assert _phases(tmp_path) == [
        ("f1", "start", True),
        ("f1", "took_effect", False),
        ("f1", "stop", True),
        ("f1", "undone", True),
    ]


def test_a_fault_whose_start_fails_is_reported_and_undone(tmp_path: Path) -> None:
    stops: list[str] = []
    fault = FakeFault(start_fails=True, on_stop=lambda: stops.append("stop"))
    started = _injector(FakeCluster(), tmp_path).start(fault)
    assert not started.ok
    assert "start failed: the fake mechanism failed" in started.check.detail
    assert stops == ["stop"]
    assert _recorded_ids(tmp_path) == []
    assert [phase for _, phase, _ in _phases(tmp_path)] == ["start", "stop", "undone"]
    assert _phases(tmp_path)[0] == ("f1", "start", False)


@pytest.mark.parametrize(
    ("target", "error"), [("other-container", ForeignContainer), ("broker9", UnknownTarget)]
)
def test_a_refused_target_starts_nothing_and_records_nothing(
    tmp_path: Path, target: str, error: type[Exception]
) -> None:
    cluster = FakeCluster(foreign=("other-container",))
    starts: list[str] = []
    fault = FakeFault(targets=("broker1", target), on_start=lambda: starts.append("start"))
    with pytest.raises(error):
        _injector(cluster, tmp_path).start(fault)
    assert starts == []
    assert not (tmp_path / STATE_FILE).exists()
    [line] = _lines(tmp_path)
    assert line["phase"] == "start"
    assert line["ok"] is False
    assert line["detail"].startswith("refused: ")


def test_an_undo_that_cannot_be_verified_stays_in_the_state_until_healed(
    tmp_path: Path,
) -> None:
    cluster = FakeCluster()
    injector = _injector(cluster, tmp_path)
    started = injector.start(Kill(("broker2",)))
    assert started.ok
    cluster.state["broker2"] = "dead"  # docker cannot start it again
    stopped = injector.stop(started.fault_id)
    assert not stopped.ok
    assert "undone not seen after 5s" in stopped.check.detail
    assert _recorded_ids(tmp_path) == [started.fault_id]

    cluster.state["broker2"] = "exited"  # repaired by hand
    [healed] = injector.heal_all()
    assert healed.ok
    assert cluster.state["broker2"] == "running"
    assert _recorded_ids(tmp_path) == []


def test_heal_all_rebuilds_the_faults_a_killed_process_left(tmp_path: Path) -> None:
    cluster = FakeCluster()
    first = _injector(cluster, tmp_path)
    first.start(Kill(("broker2",)))
    first.start(Kill(("zk3",)))
    first.close()  # the process dies without stopping anything
    assert cluster.state["broker2"] == cluster.state["zk3"] == "exited"

    second = _injector(cluster, tmp_path)
    healed = second.heal_all()
    assert [(h.fault_id, h.ok) for h in healed] == [("f2", True), ("f1", True)]
    assert cluster.state["broker2"] == cluster.state["zk3"] == "running"
    assert _recorded_ids(tmp_path) == []
    assert second.start(FakeFault()).fault_id == "f3"


def test_leaving_the_with_block_on_ctrl_c_heals(tmp_path: Path) -> None:
    cluster = FakeCluster()

    def run() -> None:
        with _injector(cluster, tmp_path) as injector:
            injector.start(Kill(("broker1",)))
            assert cluster.state["broker1"] == "exited"
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run()
    assert cluster.state["broker1"] == "running"
    assert _recorded_ids(tmp_path) == []


def test_a_ctrl_c_during_start_is_healed_from_the_state(tmp_path: Path) -> None:
    cluster = FakeCluster()

    def interrupted() -> None:
        cluster.kill("broker3")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), _injector(cluster, tmp_path) as injector:
        injector.start(_KillThen(interrupted))
    assert cluster.state["broker3"] == "running"
    assert _recorded_ids(tmp_path) == []


class _KillThen(FakeFault):
    """A fake whose start runs `hook` (which kills broker3 and is interrupted); its undo is
    a Kill's."""

    def __init__(self, hook: Callable[[], None]) -> None:
        super().__init__(targets=("broker3",), on_start=hook)

    def stop(self, cluster: FaultTarget) -> None:
        Kill(self.targets).stop(cluster)

    def undone(self, cluster: FaultTarget) -> Check:
        return Kill(self.targets).undone(cluster)


def test_stopping_twice_or_an_unknown_fault_is_a_no_op(tmp_path: Path) -> None:
    injector = _injector(FakeCluster(), tmp_path)
    fault = FakeFault()
    started = injector.start(fault)
    assert injector.stop(started.fault_id).ok
    again = injector.stop(started.fault_id)
    assert again.ok
    assert again.check.detail == "not active"
    assert injector.stop(FakeFault(targets=("zk1",))).check.detail == "not active"
    assert [phase for _, phase, _ in _phases(tmp_path)].count("stop") == 1


def test_the_state_file_names_kind_targets_and_description(tmp_path: Path) -> None:
    injector = _injector(FakeCluster(), tmp_path)
    injector.start(Kill(("broker1", "broker3")))
    document = json.loads((tmp_path / STATE_FILE).read_text())
    assert document["project"] == "fake"
    [entry] = document["faults"]
    assert entry["kind"] == "kill"
    assert entry["targets"] == ["broker1", "broker3"]
    assert entry["data"] == {"targets": ["broker1", "broker3"]}


def test_a_target_that_vanished_ends_the_wait_for_the_undo_at_once(tmp_path: Path) -> None:
    clock = FakeClock()
    cluster = FakeCluster()
    injector = _injector(cluster, tmp_path, clock)
    started = injector.start(Kill(("broker2",)))
    del cluster.state["broker2"]  # its container was removed
    before = clock.monotonic()
    stopped = injector.stop(started.fault_id)
    assert not stopped.ok
    assert "UnknownTarget: no service 'broker2'" in stopped.check.detail
    assert clock.monotonic() == before
    assert _recorded_ids(tmp_path) == [started.fault_id]


def test_an_id_in_use_by_an_active_fault_is_refused(tmp_path: Path) -> None:
    injector = _injector(FakeCluster(), tmp_path)
    injector.start(FakeFault(), fault_id="x")
    with pytest.raises(ValueError, match="'x' is already in use"):
        injector.start(FakeFault(targets=("zk1",)), fault_id="x")
    assert _recorded_ids(tmp_path) == ["x"]


class _Cutter:
    """A fault that cuts links (`CutsLinks`): `cuts` is its grudge; each check records the
    links it was told other faults cut, as (phase, already_cut)."""

    def __init__(self, target: str, cuts: dict[str, frozenset[str]]) -> None:
        self.targets = (target,)
        self.cuts = cuts
        self.seen: list[tuple[str, dict[str, frozenset[str]]]] = []

    @property
    def kind(self) -> str:
        return "fake"

    def describe(self) -> dict[str, Any]:
        return {"targets": list(self.targets)}

    def start(self, cluster: FaultTarget) -> None:
        pass

    def stop(self, cluster: FaultTarget) -> None:
        pass

    def took_effect(self, cluster: FaultTarget) -> Check:
        raise AssertionError("a link-cutting fault is measured beside the others")

    def undone(self, cluster: FaultTarget) -> Check:
        raise AssertionError("a link-cutting fault is measured beside the others")

    def cut_links(self, cluster: FaultTarget) -> dict[str, frozenset[str]]:
        return self.cuts

    def took_effect_beside(self, cluster: FaultTarget, already_cut: Any) -> Check:
        self.seen.append(("took_effect", dict(already_cut)))
        return Check(True, "cut")

    def undone_beside(self, cluster: FaultTarget, already_cut: Any) -> Check:
        self.seen.append(("undone", dict(already_cut)))
        return Check(True, "undone")


def test_a_cut_over_a_cut_is_measured_beside_the_links_the_first_cuts(tmp_path: Path) -> None:
    from_brokers = _Cutter("broker1", {"broker1": frozenset({"broker2", "broker3"})})
    from_zk = _Cutter("broker1", {"broker1": frozenset({"zk1"}), "zk1": frozenset({"broker1"})})
    injector = _injector(FakeCluster(), tmp_path)
    first = injector.start(from_brokers)
    injector.start(FakeFault(("broker2",)))  # cuts no link: adds nothing
    second = injector.start(from_zk)
    assert first.ok
    assert second.ok
    assert from_brokers.seen == [("took_effect", {})]
    assert from_zk.seen == [("took_effect", from_brokers.cuts)]

    injector.stop(first.fault_id)  # healed while the second cut holds
    assert from_brokers.seen[-1] == ("undone", from_zk.cuts)
    injector.stop(second.fault_id)
    assert from_zk.seen[-1] == ("undone", {})


class _SlowUndo(_Cutter):
    """A cut whose undo is not seen while `held` (other undos run meanwhile)."""

    def __init__(self, target: str, cuts: dict[str, frozenset[str]]) -> None:
        super().__init__(target, cuts)
        self.held = True

    def undone_beside(self, cluster: FaultTarget, already_cut: Any) -> Check:
        super().undone_beside(cluster, already_cut)
        return Check(not self.held, "undone" if not self.held else "not yet")


def test_a_stopped_cut_is_not_counted_while_its_undo_is_proven(tmp_path: Path) -> None:
    """A soak's run: two broker isolations stopped in turn each counted the other's
    links as cut and waited out its deadline, 60 s each, after the heal."""
    first = _SlowUndo("broker2", {"broker2": frozenset({"broker1", "broker3"})})
    second = _Cutter("broker3", {"broker3": frozenset({"broker1", "broker2"})})
    injector = _injector(FakeCluster(), tmp_path)
    injector.start(first)
    injector.start(second)
    assert not injector.stop(first).ok  # stopped, its undo not seen within the deadline
    assert injector.stop(second).ok
    assert second.seen[-1] == ("undone", {})
    first.held = False
    assert injector.stop(first).ok


def test_overlapping_cuts_are_merged_per_node(tmp_path: Path) -> None:
    one = _Cutter("broker1", {"broker1": frozenset({"broker2"})})
    two = _Cutter("broker1", {"broker1": frozenset({"zk1"}), "zk1": frozenset({"broker1"})})
    three = _Cutter("broker3", {"broker3": frozenset({"zk2"})})
    injector = _injector(FakeCluster(), tmp_path)
    for fault in (one, two, three):
        assert injector.start(fault).ok
    assert three.seen == [
        (
            "took_effect",
            {"broker1": frozenset({"broker2", "zk1"}), "zk1": frozenset({"broker1"})},
        )
    ]


def test_heal_all_undoes_each_cut_beside_those_still_held(tmp_path: Path) -> None:
    first = _Cutter("broker1", {"broker1": frozenset({"broker2"})})
    second = _Cutter("broker1", {"broker1": frozenset({"zk1"})})
    injector = _injector(FakeCluster(), tmp_path)
    injector.start(first)
    injector.start(second)
    outcomes = injector.heal_all()
    assert [o.ok for o in outcomes] == [True, True]
    assert second.seen[-1] == ("undone", first.cuts)  # newest first, the older one held
    assert first.seen[-1] == ("undone", {})
    assert injector.active() == {}


class _TracedFault(FakeFault):
    """A fake fault that keeps a trace of two records."""

    def trace(self) -> list[dict[str, Any]]:
        return [{"t": 0, "saw": "nothing"}, {"t": 50, "saw": "a write"}]


def test_a_traced_fault_s_trace_is_written_after_its_check(tmp_path: Path) -> None:
    injector = _injector(FakeCluster(), tmp_path)
    traced = injector.start(_TracedFault(), fault_id="step-3")
    plain = injector.start(FakeFault(targets=("broker2",)))
    assert traced.ok
    assert plain.ok
    written = [line for _, line in read_json_lines(tmp_path / TRACE_DIR / "step-3.jsonl")]
    assert written == _TracedFault().trace()
    assert sorted(p.name for p in (tmp_path / TRACE_DIR).iterdir()) == ["step-3.jsonl"]


class _PeerGoneOnce(FakeFault):
    """A fake whose first took-effect check meets a peer another fault just removed."""

    def __init__(self) -> None:
        super().__init__(targets=("broker1",))
        self.checks = 0

    def took_effect(self, cluster: FaultTarget) -> Check:
        self.checks += 1
        if self.checks == 1:
            raise UnknownTarget("zk1 is not running (exited)")
        return super().took_effect(cluster)


def test_a_peer_gone_during_a_check_is_checked_again_a_target_gone_is_not(
    tmp_path: Path,
) -> None:
    # a blind hunt's run: a session expiry's link probe found zk1 killed meanwhile
    cluster = FakeCluster()
    peer_gone = _PeerGoneOnce()
    assert _injector(cluster, tmp_path).start(peer_gone).ok
    assert peer_gone.checks == 2
    clock = FakeClock()
    target_gone = _PeerGoneOnce()
    cluster.kill("broker1")
    before = clock.monotonic()
    started = _injector(cluster, tmp_path, clock).start(target_gone)
    assert not started.ok
    assert target_gone.checks == 1
    assert clock.monotonic() == before
