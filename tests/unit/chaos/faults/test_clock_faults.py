"""The clock faults' logic against a simulated container: what each writes to the clock
file, what its checks measure, and that every kind's undo is one verified reset."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import pytest

from chaos.errors import FaultFailed, ForeignContainer
from chaos.faults import clock
from chaos.faults.clock import REAL, ClockOffset, ClockRate, ClockStrobe
from chaos.faults.fields import BadFaultData
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.testing import FakeCluster


class SimulatedClocks:
    """Each service's clock file, strobe loop and the wall clock a process there reads."""

    def __init__(self) -> None:
        self.spec: dict[str, str] = {}
        self.loops: dict[str, tuple[str, str]] = {}
        self.reads: dict[str, int] = {}
        self.ignore_writes = False
        self.envs: list[Mapping[str, str]] = []

    def __call__(self, service: str, argv: Sequence[str], env: Mapping[str, str]) -> str:
        if argv[:2] == ["sh", "-c"] and argv[2] == clock._WRITE:
            if not self.ignore_writes:
                self.spec[service] = argv[4]
            return ""
        if argv[:2] == ["sh", "-c"] and argv[2] == clock._RESET:
            self.loops.pop(service, None)
            self.spec[service] = argv[4]
            return ""
        if argv[:2] == ["sh", "-c"] and argv[2] == clock._STROBE_RUNNING:
            return "4242\n" if service in self.loops else ""
        if argv[:2] == ["sh", "-c"] and clock._STROBE_TAG in argv[2]:
            self.envs.append(env)
            self.loops[service] = (argv[5], argv[6])
            return ""
        if argv == ["cat", clock.CLOCK_FILE]:
            return self.spec.get(service, REAL) + "\n"
        if argv == ["date", "+%s%3N"]:
            return f"{time.time_ns() // 1_000_000 + self._offset_ms(service)}\n"
        if argv[0] == "python3":
            spec = self.spec.get(service, REAL)
            return spec.split(" x")[1] if " x" in spec else "1.0"
        raise AssertionError(f"unexpected exec {argv!r}")

    def _offset_ms(self, service: str) -> int:
        if service in self.loops:  # each read sees the loop's next half period
            self.reads[service] = self.reads.get(service, 0) + 1
            if self.reads[service] % 2:
                return int(self.loops[service][0]) * 1000
            return 0
        spec = self.spec.get(service, REAL).split(" ")[0]
        return int(spec) * 1000


@pytest.fixture
def cluster() -> FakeCluster:
    fake = FakeCluster()
    fake.exec_reply = SimulatedClocks()
    return fake


def clocks(cluster: FakeCluster) -> SimulatedClocks:
    assert isinstance(cluster.exec_reply, SimulatedClocks)
    return cluster.exec_reply


def test_an_offset_writes_the_offset_and_is_measured_on_each_target(cluster: FakeCluster) -> None:
    fault = ClockOffset(("broker1", "zk2"), -600)
    assert not fault.took_effect(cluster).ok
    fault.start(cluster)
    assert clocks(cluster).spec == {"broker1": "-600", "zk2": "-600"}
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert "broker1 clock -600" in check.detail
    assert not fault.undone(cluster).ok


def test_an_offset_that_the_node_does_not_show_has_not_taken_effect(cluster: FakeCluster) -> None:
    clocks(cluster).ignore_writes = True
    fault = ClockOffset(("broker2",), 300)
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert not check.ok
    assert "want +300000" in check.detail


def test_the_undo_resets_the_clock_and_is_verified(cluster: FakeCluster) -> None:
    fault = ClockOffset(("broker1",), 120)
    fault.start(cluster)
    fault.stop(cluster)
    assert clocks(cluster).spec["broker1"] == REAL
    check = fault.undone(cluster)
    assert check.ok, check.detail


def test_a_strobe_runs_one_unfaked_loop_and_shows_both_clocks(cluster: FakeCluster) -> None:
    fault = ClockStrobe(("zk1",), 300, 1.0)
    fault.start(cluster)
    fault.start(cluster)
    assert clocks(cluster).loops == {"zk1": ("+300", "1")}
    assert clocks(cluster).envs == [{"LD_PRELOAD": ""}]
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert not fault.undone(cluster).ok
    fault.stop(cluster)
    assert clocks(cluster).loops == {}
    assert fault.undone(cluster).ok


def test_a_strobe_without_its_loop_has_not_taken_effect(cluster: FakeCluster) -> None:
    check = ClockStrobe(("broker3",), 300, 1.0).took_effect(cluster)
    assert not check.ok
    assert "runs no strobe loop" in check.detail


def test_a_rate_is_measured_by_a_process_in_the_container(cluster: FakeCluster) -> None:
    fault = ClockRate(("broker1",), 1.5)
    fault.start(cluster)
    assert clocks(cluster).spec["broker1"] == "+0 x1.5"
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert not ClockRate(("broker1",), 2.0).took_effect(cluster).ok


def test_the_undo_of_a_stopped_target_fails_but_tries_every_target(cluster: FakeCluster) -> None:
    fault = ClockOffset(("broker1", "broker2"), 60)
    fault.start(cluster)
    cluster.state["broker1"] = "exited"
    with pytest.raises(FaultFailed, match="broker1"):
        fault.stop(cluster)
    assert clocks(cluster).spec["broker2"] == REAL


@pytest.mark.parametrize(
    "fault",
    [ClockOffset(("broker1",), -30), ClockStrobe(("zk3",), 600, 5.0), ClockRate(("zk1",), 0.5)],
)
def test_the_heal_state_rebuilds_each_kind_and_its_reset(
    cluster: FakeCluster, fault: ClockOffset
) -> None:
    rebuilt = fault_from_json(fault.kind, fault.describe())
    assert rebuilt == fault
    fault.start(cluster)
    rebuilt.stop(cluster)
    assert rebuilt.undone(cluster).ok


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("clock-offset", {"targets": ["broker1"], "offset_s": 0}),
        ("clock-offset", {"targets": ["broker1"], "offset_s": 1.5}),
        ("clock-offset", {"targets": ["broker1"], "offset_s": 10**6}),
        ("clock-offset", {"targets": ["broker1"], "offset_s": 5, "rate": 2}),
        ("clock-strobe", {"targets": ["broker1"], "offset_s": 5, "period_s": 0.5}),
        ("clock-rate", {"targets": ["broker1"], "rate": 0}),
        ("clock-rate", {"targets": [], "rate": 2}),
    ],
)
def test_a_bad_description_is_refused(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(BadFaultData):
        fault_from_json(kind, data)


def test_each_kind_is_a_registry_entry_on_brokers_and_zookeeper() -> None:
    for kind in ("clock-offset", "clock-strobe", "clock-rate"):
        built = FAULT_TYPES[kind].build(
            ("broker1",), {r.name: r.default for r in FAULT_TYPES[kind].params}
        )
        assert built.kind == kind
        assert {c.value for c in FAULT_TYPES[kind].targets} == {"brokers", "zookeeper"}


def test_a_container_outside_the_project_is_refused_and_untouched() -> None:
    fake = FakeCluster(foreign=("other-broker",))
    simulated = SimulatedClocks()
    fake.exec_reply = simulated
    with pytest.raises(ForeignContainer):
        ClockOffset(("other-broker",), 60).start(fake)
    assert simulated.spec == {}
