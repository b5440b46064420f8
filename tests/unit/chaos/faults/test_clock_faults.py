"""The `clock` fault's logic against simulated broker and ZooKeeper containers: what each
action writes to the clock file, what its checks measure, that a strobe alternates from its
own thread, that a rate runs the clock fast or slow without a jump, and that every undo is
one verified reset."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import pytest

from chaos.errors import ForeignContainer
from chaos.faults import clock, clock_rate
from chaos.faults.clock import CLOCK_FILE, REAL, ClockFault, offset_spec
from chaos.faults.clock_rate import factor_spec, rate_offset_ms
from chaos.faults.fields import BadFaultData
from chaos.faults.registry import FAULT_TYPES, check_target, fault_from_json
from chaos.faults.testing import FakeCluster

#: How long every simulated main process has run.
UPTIME_S = 3600.0


class SimulatedClocks:
    """Each service's clock file, every write to it, and the wall clock a process there
    reads (the host's plus the file's offset; a shell's clock runs at the file's rate)."""

    def __init__(self) -> None:
        self.spec: dict[str, str] = {}
        self.written: dict[str, list[str]] = {}
        self.ignore_writes = False
        self.envs: list[Mapping[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, service: str, argv: Sequence[str], env: Mapping[str, str]) -> str:
        if argv[:3] == ["sh", "-c", clock._WRITE]:
            assert argv[5] == clock.CLOCK_FILE
            with self._lock:
                self.envs.append(env)
                self.written.setdefault(service, []).append(argv[4])
                if not self.ignore_writes:
                    self.spec[service] = argv[4]
            return ""
        if argv == ["cat", clock.CLOCK_FILE]:
            return self.spec.get(service, REAL) + "\n"
        if argv == ["date", "+%s%3N"]:
            return f"{time.time_ns() // 1_000_000 + self.offset_ms(service)}\n"
        if argv == ["sh", "-c", clock_rate._START]:
            assert env == {"LD_PRELOAD": ""}
            # booted 10000 s ago; the main process started UPTIME_S ago (100 ticks a second)
            return f"10000.00 {round((10000 - UPTIME_S) * 100)} 100 {time.time():.9f}\n"
        if argv == ["python3", "-c", clock_rate._READ]:
            return f"{1.002 * self.factor(service)} 1.002\n"
        raise AssertionError(f"unexpected exec {argv!r}")

    def offset_ms(self, service: str) -> int:
        offset = self.spec.get(service, REAL).split()[0]
        return round(float(offset) * 1000)

    def factor(self, service: str) -> float:
        rate = self.spec.get(service, REAL).split()
        return float(rate[1][1:]) if len(rate) > 1 else 1.0


@pytest.fixture
def cluster() -> FakeCluster:
    fake = FakeCluster()
    fake.exec_reply = SimulatedClocks()
    return fake


def clocks(cluster: FakeCluster) -> SimulatedClocks:
    assert isinstance(cluster.exec_reply, SimulatedClocks)
    return cluster.exec_reply


def test_an_offset_is_written_as_libfaketime_reads_it() -> None:
    assert offset_spec(60_000) == "+60"
    assert offset_spec(-3_600_000) == "-3600"
    assert offset_spec(1_500) == "+1.500"
    assert offset_spec(-250) == "-0.250"


def test_a_bump_moves_each_target_and_is_measured_there(cluster: FakeCluster) -> None:
    fault = ClockFault(("broker1", "broker2"), "bump", -600_000)
    assert not fault.took_effect(cluster).ok
    fault.start(cluster)
    assert clocks(cluster).spec == {"broker1": "-600", "broker2": "-600"}
    assert all(env == {"LD_PRELOAD": ""} for env in clocks(cluster).envs)
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert "broker1 clock -600" in check.detail
    assert not fault.undone(cluster).ok


def test_a_bump_the_node_does_not_show_has_not_taken_effect(cluster: FakeCluster) -> None:
    clocks(cluster).ignore_writes = True
    fault = ClockFault(("broker2",), "bump", 300_000)
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert not check.ok
    assert "want +300000" in check.detail


def test_the_undo_resets_the_clock_and_is_verified(cluster: FakeCluster) -> None:
    fault = ClockFault(("broker1",), "bump", 120_000)
    fault.start(cluster)
    fault.stop(cluster)
    assert clocks(cluster).spec["broker1"] == REAL
    check = fault.undone(cluster)
    assert check.ok, check.detail


def test_a_strobe_alternates_from_its_own_thread_until_undone(cluster: FakeCluster) -> None:
    fault = ClockFault(("broker3",), "strobe", 30_000, -5_000, 1000)
    fault.start(cluster)
    fault.start(cluster)  # a second start does not start a second thread
    strobes = [t for t in threading.enumerate() if t.name == "clock-strobe-broker3"]
    assert len(strobes) == 1
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert not fault.undone(cluster).ok
    fault.stop(cluster)
    assert not strobes[0].is_alive()
    written = clocks(cluster).written["broker3"]
    assert written[:3] == ["+30", "+30", "-5"]
    assert written[-1] == REAL
    check = fault.undone(cluster)
    assert check.ok, check.detail


def test_a_strobe_whose_thread_is_gone_has_not_taken_effect(cluster: FakeCluster) -> None:
    check = ClockFault(("broker1",), "strobe", 30_000).took_effect(cluster)
    assert not check.ok
    assert "does not run" in check.detail


def test_a_reset_puts_back_the_real_time(cluster: FakeCluster) -> None:
    ClockFault(("broker1",), "bump", 60_000).start(cluster)
    reset = ClockFault(("broker1",), "reset")
    assert not reset.took_effect(cluster).ok
    reset.start(cluster)
    assert clocks(cluster).spec["broker1"] == REAL
    check = reset.took_effect(cluster)
    assert check.ok, check.detail
    assert reset.undone(cluster).ok


def test_the_undo_of_a_stopped_target_resets_its_clock_file_through_docker_cp(
    cluster: FakeCluster,
) -> None:
    # a blind hunt's run: a double outage killed broker2 while a clock fault held its clock
    # moved; the undo's docker exec failed for 60 s and held the step loop up
    fault = ClockFault(("broker1", "broker2"), "bump", 60_000)
    fault.start(cluster)
    cluster.state["broker1"] = "exited"
    fault.stop(cluster)
    assert clocks(cluster).spec["broker2"] == REAL
    assert cluster.files[("broker1", CLOCK_FILE)] == f"{REAL}\n".encode()
    undone = fault.undone(cluster)
    assert undone.ok, undone.detail
    assert "broker1 is exited; its clock file holds '+0 x1'" in undone.detail


def test_a_stopped_target_whose_clock_file_is_not_real_is_not_undone(
    cluster: FakeCluster,
) -> None:
    fault = ClockFault(("broker1",), "bump", 60_000)
    cluster.state["broker1"] = "exited"
    cluster.files[("broker1", CLOCK_FILE)] = b"+60\n"
    check = fault.undone(cluster)
    assert not check.ok
    assert "'+60'" in check.detail


@pytest.mark.parametrize(
    "fault",
    [
        ClockFault(("broker1",), "bump", -30_000),
        ClockFault(("broker2",), "strobe", 600_000, 0, 5000),
        ClockFault(("broker3",), "reset"),
        ClockFault(("zk1",), "rate", factor=0.5),
    ],
)
def test_the_heal_state_rebuilds_each_action_and_its_reset(
    cluster: FakeCluster, fault: ClockFault
) -> None:
    rebuilt = fault_from_json(fault.kind, fault.describe())
    assert rebuilt == fault
    fault.start(cluster)
    rebuilt.stop(cluster)  # another process: it has no strobe thread, and resets all the same
    fault.stop(cluster)
    check = rebuilt.undone(cluster)
    assert check.ok, check.detail


@pytest.mark.parametrize(
    "data",
    [
        {"targets": ["broker1"], "action": "warp", "offset_ms": 5, "other_offset_ms": 0,
         "period_ms": 1000},
        {"targets": ["broker1"], "action": "rate", "offset_ms": 0, "other_offset_ms": 0,
         "period_ms": 1000, "factor": 8},
        {"targets": ["broker1"], "action": "rate", "offset_ms": 0, "other_offset_ms": 0,
         "period_ms": 1000, "factor": "2"},
        {"targets": ["broker1"], "action": "rate", "offset_ms": 0, "other_offset_ms": 0,
         "period_ms": 1000, "factor": True},
        {"targets": ["broker1"], "action": "bump", "offset_ms": 1.5, "other_offset_ms": 0,
         "period_ms": 1000},
        {"targets": ["broker1"], "action": "bump", "offset_ms": 10**9, "other_offset_ms": 0,
         "period_ms": 1000},
        {"targets": ["broker1"], "action": "strobe", "offset_ms": 5, "other_offset_ms": 0,
         "period_ms": 10},
        {"targets": ["broker1"], "action": "bump", "offset_ms": 5},
        {"targets": ["broker1"], "action": "bump", "offset_ms": 5, "other_offset_ms": 0,
         "period_ms": 1000, "rate": 2},
        {"targets": [], "action": "reset", "offset_ms": 0, "other_offset_ms": 0,
         "period_ms": 1000},
    ],
)  # fmt: skip
def test_a_bad_description_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(BadFaultData):
        fault_from_json("clock", data)


def test_zookeeper_servers_are_targets_like_brokers(cluster: FakeCluster) -> None:
    kind = FAULT_TYPES["clock"]
    for role in ("zk-follower", "zk-leader", "zk:2", "controller", "all-brokers"):
        check_target(kind, role)
    fault = ClockFault(("zk2", "broker1"), "bump", -90_000)
    fault.start(cluster)
    assert clocks(cluster).spec == {"zk2": "-90", "broker1": "-90"}
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    fault.stop(cluster)
    assert fault.undone(cluster).ok


def test_the_kind_is_a_registry_entry_that_builds_from_defaults(cluster: FakeCluster) -> None:
    kind = FAULT_TYPES["clock"]
    built = kind.build(("broker1",), {r.name: r.default for r in kind.params})
    assert built == ClockFault(("broker1",), "bump", 60_000, 0, 1000, 2.0)
    assert {c.value for c in kind.targets} == {"brokers", "zookeeper"}
    assert kind.lasts is None


def test_a_rate_is_written_with_the_offset_that_keeps_the_main_process_on_time() -> None:
    assert factor_spec(2.0) == "x2"
    assert factor_spec(0.5) == "x0.5"
    # up an hour: at x2 its clock would jump an hour ahead, at x0.5 half an hour behind
    assert rate_offset_ms(1000.0, 4600.0, 2.0) == -3_600_000
    assert rate_offset_ms(1000.0, 4600.0, 0.5) == 1_800_000
    assert rate_offset_ms(1000.0, 4600.0, 1.0) == 0


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_a_rate_runs_each_target_at_its_factor_until_undone(
    cluster: FakeCluster, factor: float
) -> None:
    fault = ClockFault(("zk1", "broker2"), "rate", factor=factor)
    assert not fault.took_effect(cluster).ok  # the real clock runs at x1
    fault.start(cluster)
    for service in ("zk1", "broker2"):
        offset, rate = clocks(cluster).spec[service].split()
        assert rate == factor_spec(factor)
        want_s = -UPTIME_S * (factor - 1)
        assert abs(float(offset) - want_s) < 1, (offset, want_s)
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert f"(want x{factor:g})" in check.detail
    assert not fault.undone(cluster).ok
    fault.stop(cluster)
    assert clocks(cluster).spec == {"zk1": REAL, "broker2": REAL}
    check = fault.undone(cluster)
    assert check.ok, check.detail


def test_a_rate_the_node_does_not_show_has_not_taken_effect(cluster: FakeCluster) -> None:
    clocks(cluster).ignore_writes = True
    fault = ClockFault(("broker3",), "rate", factor=0.25)
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert not check.ok
    assert "want x0.25" in check.detail


@pytest.mark.parametrize("factor", [0.1, 4.5, 0])
def test_a_factor_out_of_range_is_refused(factor: float) -> None:
    with pytest.raises(BadFaultData, match="factor"):
        ClockFault(("broker1",), "rate", factor=factor)
    rule = next(r for r in FAULT_TYPES["clock"].params if r.name == "factor")
    assert not rule.check(factor)


def test_a_description_without_a_factor_rebuilds_with_the_default() -> None:
    data = {"targets": ["zk3"], "action": "bump", "offset_ms": 5, "other_offset_ms": 0,
            "period_ms": 1000}  # fmt: skip
    assert fault_from_json("clock", data) == ClockFault(("zk3",), "bump", 5, factor=2.0)


def test_a_container_outside_the_project_is_refused_and_untouched() -> None:
    fake = FakeCluster(foreign=("other-broker",))
    simulated = SimulatedClocks()
    fake.exec_reply = simulated
    with pytest.raises(ForeignContainer):
        ClockFault(("other-broker",), "bump", 60_000).start(fake)
    assert simulated.spec == {}
