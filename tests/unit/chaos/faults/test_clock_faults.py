"""The `clock` fault's logic against simulated broker containers: what each action writes
to the clock file, what its checks measure, that a strobe alternates from its own thread,
that every undo is one verified reset, and that ZooKeeper is refused."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import pytest

from chaos.errors import FaultFailed, ForeignContainer, UnknownRole
from chaos.faults import clock
from chaos.faults.clock import REAL, ClockFault, offset_spec
from chaos.faults.fields import BadFaultData
from chaos.faults.registry import FAULT_TYPES, check_target, fault_from_json
from chaos.faults.testing import FakeCluster


class SimulatedClocks:
    """Each service's clock file, every write to it, and the wall clock a process there
    reads (the host's plus the file's offset)."""

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
        raise AssertionError(f"unexpected exec {argv!r}")

    def offset_ms(self, service: str) -> int:
        spec = self.spec.get(service, REAL)
        return 0 if spec == REAL else round(float(spec) * 1000)


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


def test_the_undo_of_a_stopped_target_fails_but_tries_every_target(cluster: FakeCluster) -> None:
    fault = ClockFault(("broker1", "broker2"), "bump", 60_000)
    fault.start(cluster)
    cluster.state["broker1"] = "exited"
    with pytest.raises(FaultFailed, match="broker1"):
        fault.stop(cluster)
    assert clocks(cluster).spec["broker2"] == REAL


@pytest.mark.parametrize(
    "fault",
    [
        ClockFault(("broker1",), "bump", -30_000),
        ClockFault(("broker2",), "strobe", 600_000, 0, 5000),
        ClockFault(("broker3",), "reset"),
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
        {"targets": ["broker1"], "action": "rate", "offset_ms": 5, "other_offset_ms": 0,
         "period_ms": 1000},
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


def test_zookeeper_is_refused_with_the_reason() -> None:
    with pytest.raises(UnknownRole, match="no faked clock"):
        check_target(FAULT_TYPES["clock"], "zk-follower")
    with pytest.raises(BadFaultData, match="brokers only, not on zk2"):
        ClockFault(("broker1", "zk2"), "bump", 1000)
    check_target(FAULT_TYPES["clock"], "controller")


def test_the_kind_is_a_registry_entry_that_builds_from_defaults(cluster: FakeCluster) -> None:
    kind = FAULT_TYPES["clock"]
    built = kind.build(("broker1",), {r.name: r.default for r in kind.params})
    assert built == ClockFault(("broker1",), "bump", 60_000, 0, 1000)
    assert {c.value for c in kind.targets} == {"brokers"}
    assert kind.lasts is None


def test_a_container_outside_the_project_is_refused_and_untouched() -> None:
    fake = FakeCluster(foreign=("other-broker",))
    simulated = SimulatedClocks()
    fake.exec_reply = simulated
    with pytest.raises(ForeignContainer):
        ClockFault(("other-broker",), "bump", 60_000).start(fake)
    assert simulated.spec == {}
