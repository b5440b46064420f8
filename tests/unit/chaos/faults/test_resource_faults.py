"""`cpu-starve` and `memory-squeeze` against `FakeCluster`, whose cgroups are folders of
files: what each sets, what its checks read and say (the quota and the measured CPU time;
the memory limit, paging or an OOM kill), undo and its idempotence, the values' own checks,
their JSON and their schedule params. The pure parsers of cgroup files are tested here
too; real containers are in tests/docker/test_faults_cgroup.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.cluster.resources import NO_MEMORY_LIMIT, ResourceLimits, cgroup_dirs
from chaos.errors import BadParams, FaultFailed
from chaos.faults.cgroup import (
    MIB,
    MemoryState,
    cpu_rate,
    memory_state,
    parse_int,
    parse_keyed,
)
from chaos.faults.fields import BadFaultData
from chaos.faults.params import Scalar
from chaos.faults.registry import FAULT_TYPES, fault_from_json
from chaos.faults.resources import CpuStarve, MemorySqueeze
from chaos.faults.testing import FakeCluster
from chaos.generator.schedule import FaultSpec

PROC_CGROUP = """\
9:name=systemd:/docker/abc
4:memory:/docker/abc
2:cpuacct:/docker/abc
1:cpu:/docker/abc
0::/docker/abc
"""


def _cluster(tmp_path: Path, usage_ns: int = 0, memory_usage_mb: int = 50) -> FakeCluster:
    """A fake whose services have cgroup files as a fresh container has them."""
    cluster = FakeCluster(cgroup_root=tmp_path)
    layout: dict[str, dict[str, int | str]] = {
        "cpu": {"cpu.cfs_quota_us": -1, "cpu.cfs_period_us": 100000},
        "cpuacct": {"cpuacct.usage": usage_ns},
        "memory": {
            "memory.limit_in_bytes": NO_MEMORY_LIMIT,
            "memory.usage_in_bytes": memory_usage_mb * MIB,
            "memory.failcnt": 0,
            "memory.stat": "cache 0\npgmajfault 3",
            "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
        },
    }
    for service in cluster.services():
        for controller, files in layout.items():
            directory = tmp_path / controller / service
            directory.mkdir(parents=True)
            for name, value in files.items():
                (directory / name).write_text(f"{value}\n")
    return cluster


def test_cgroup_dirs_maps_each_v1_controller_to_its_path() -> None:
    assert cgroup_dirs(PROC_CGROUP + "3:cpu,cpuacct:/other\nnot a line\n") == {
        "memory": "/docker/abc",
        "cpuacct": "/other",
        "cpu": "/other",
    }


def test_cgroup_file_parsers_refuse_what_is_not_a_number() -> None:
    assert parse_int(" -1\n", "cpu.cfs_quota_us") == -1
    assert parse_keyed("cache 4096\npgmajfault 7\n\n", "memory.stat") == {
        "cache": 4096,
        "pgmajfault": 7,
    }
    with pytest.raises(FaultFailed, match=r"memory\.stat pgmajfault: not an integer"):
        parse_keyed("pgmajfault lots", "memory.stat")


def test_cpu_rate_is_cpu_seconds_per_wall_second() -> None:
    assert cpu_rate(1_000_000_000, 1_050_000_000, 1.0) == pytest.approx(0.05)
    assert cpu_rate(0, 2_000_000_000, 2.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="positive time"):
        cpu_rate(0, 1, 0)


def test_memory_pressure_says_paging_or_oom_killed() -> None:
    before = MemoryState(64 * MIB, 60 * MIB, 0, 0, 10, 0)
    paged = MemoryState(64 * MIB, 64 * MIB, 12, 0, 25, 0)
    killed = MemoryState(64 * MIB, 1 * MIB, 40, 0, 30, 1)
    assert before.pressure_since(None).startswith("no pressure yet")
    assert paged.pressure_since(before) == (
        "paging (limit hit 12 times, 0 refaults, 15 major faults, 0 OOM kills)"
    )
    assert killed.pressure_since(before).startswith("OOM-killed (limit hit 40 times")
    restarted = MemoryState(64 * MIB, 1 * MIB, 2, 0, 4, 0)
    assert restarted.pressure_since(paged) == (
        "paging (limit hit 2 times, 0 refaults, 4 major faults, 0 OOM kills)"
    )
    refaulted = MemoryState(64 * MIB, 64 * MIB, 0, 0, 10, 0, refaults=5)
    assert refaulted.pressure_since(before).startswith("paging (limit hit 0 times, 5 refaults")
    assert MemoryState(NO_MEMORY_LIMIT, 0, 0, 0, 0, 0).describe().startswith("memory limit none")


def test_resource_limits_read_docker_inspection() -> None:
    limits = ResourceLimits.from_inspect(
        {"HostConfig": {"CpuQuota": -1, "Memory": NO_MEMORY_LIMIT}, "State": {"OOMKilled": True}}
    )
    assert not limits.cpu_limited
    assert not limits.memory_limited
    assert limits.oom_killed
    assert ResourceLimits.from_inspect({"HostConfig": {"NanoCpus": 5 * 10**7}}).cpu_limited
    assert ResourceLimits.from_inspect({"HostConfig": {"Memory": 64 * MIB}}).memory_limited


def test_cpu_starve_sets_the_quota_measures_it_and_lifts_it(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    fault = CpuStarve(("broker1",), percent=5)
    assert fault.quota_us == 5000
    fault.start(cluster)
    assert (tmp_path / "cpu" / "broker1" / "cpu.cfs_quota_us").read_text() == "5000\n"
    check = fault.took_effect(cluster)  # no CPU time used while sampled
    assert check.ok, check.detail
    assert "quota 5000/100000 us (5% of a core), used 0.000 CPU s/s" in check.detail
    assert not fault.undone(cluster).ok
    fault.stop(cluster)
    fault.stop(cluster)
    undone = fault.undone(cluster)
    assert undone.ok, undone.detail
    assert undone.detail == "broker1: cgroup quota -1, docker quota -1, cpus 0"


def test_cpu_starve_did_not_take_effect_while_the_quota_is_not_in_the_cgroup(
    tmp_path: Path,
) -> None:
    cluster = _cluster(tmp_path)
    fault = CpuStarve(("broker1",), percent=5)
    check = fault.took_effect(cluster)
    assert not check.ok
    assert check.detail == "broker1: cgroup quota -1/100000 us"
    cluster.state["broker1"] = "exited"
    assert fault.took_effect(cluster).detail == "broker1 exited"


def test_memory_squeeze_sets_the_limit_and_reports_paging(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    fault = MemorySqueeze(("broker1",), limit_mb=64)
    fault.start(cluster)
    check = fault.took_effect(cluster)
    assert check.ok, check.detail
    assert check.detail.startswith("broker1: memory limit 64 MiB, usage 50.0 MiB, no pressure")
    group = tmp_path / "memory" / "broker1"
    (group / "memory.failcnt").write_text("9\n")
    (group / "memory.stat").write_text("pgmajfault 10\nworkingset_refault_file 0\n")
    assert "paging (limit hit 9 times, 0 refaults, 7 major faults, 0 OOM kills)" in (
        fault.took_effect(cluster).detail
    )
    fault.stop(cluster)
    undone = fault.undone(cluster)
    assert undone.ok, undone.detail
    assert cluster.limits["broker1"].memory_bytes == NO_MEMORY_LIMIT
    assert "over the fault paging" in undone.detail


def test_memory_squeeze_of_an_oom_killed_target_starts_it_again(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    fault = MemorySqueeze(("broker2",), limit_mb=64)
    fault.start(cluster)
    cluster.state["broker2"] = "exited"
    check = fault.took_effect(cluster)
    assert not check.ok
    assert check.detail == "broker2 exited, not by the OOM killer"
    cluster.limits["broker2"] = ResourceLimits(0, 0, 0, 64 * MIB, 64 * MIB, True)
    assert fault.took_effect(cluster).detail == "broker2 exited, OOM-killed (docker OOMKilled)"
    fault.stop(cluster)
    assert cluster.state["broker2"] == "running"
    assert ("start", "broker2") in cluster.calls


def test_memory_squeeze_leaves_a_target_stopped_by_someone_else(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    fault = MemorySqueeze(("broker3",))
    fault.start(cluster)
    cluster.state["broker3"] = "exited"
    fault.stop(cluster)
    assert cluster.state["broker3"] == "exited"
    assert not fault.undone(cluster).ok


def test_memory_state_reads_without_swap_accounting(tmp_path: Path) -> None:
    _cluster(tmp_path)
    state = memory_state(tmp_path / "memory" / "broker1")
    assert state == MemoryState(NO_MEMORY_LIMIT, 50 * MIB, 0, 0, 3, 0)
    assert not state.limited
    with pytest.raises(FaultFailed, match="cannot read"):
        memory_state(tmp_path / "memory" / "nobody")


@pytest.mark.parametrize(
    "fault", [CpuStarve(("broker1", "zk2"), 12.5), MemorySqueeze(("broker3",), 128)]
)
def test_resource_faults_survive_a_json_round_trip(fault: CpuStarve | MemorySqueeze) -> None:
    assert fault_from_json(fault.kind, json.loads(json.dumps(fault.describe()))) == fault


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("cpu-starve", {"targets": ["broker1"], "percent": 0}, r"percent must be in \[1, 100\]"),
        ("cpu-starve", {"targets": ["broker1"], "percent": "low"}, "must be a number"),
        ("cpu-starve", {"targets": ["broker1"], "cpus": 1}, r"unknown fields \['cpus'\]"),
        ("memory-squeeze", {"targets": ["broker1"], "limit_mb": 4}, r"in \[16, 65536\]"),
        ("memory-squeeze", {"targets": ["broker1"], "limit_mb": 64.5}, "must be an integer"),
        ("memory-squeeze", {"targets": []}, "non-empty list"),
    ],
)
def test_bad_resource_fault_descriptions_are_refused(
    kind: str, data: dict[str, object], message: str
) -> None:
    with pytest.raises(BadFaultData, match=message):
        fault_from_json(kind, data)


def test_schedule_steps_carry_the_resource_params_with_defaults() -> None:
    assert FaultSpec.of("cpu-starve", "controller").fault(("broker1",)) == CpuStarve(
        ("broker1",), 5.0
    )
    spec = FaultSpec.of("memory-squeeze", "zk:2", {"limit_mb": 200})
    assert spec.fault(("zk2",)) == MemorySqueeze(("zk2",), 200)
    assert FAULT_TYPES["memory-squeeze"].lasts is True


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("cpu-starve", {"percent": 150}, "percent must be in"),
        ("cpu-starve", {"percent": True}, "percent must be in"),
        ("memory-squeeze", {"limit_mb": 8}, "limit_mb must be an integer in"),
        ("memory-squeeze", {"limit_mb": 96.0}, "limit_mb must be an integer in"),
        ("memory-squeeze", {"size": 1}, "does not take size"),
    ],
)
def test_schedule_params_out_of_range_are_refused(
    kind: str, params: dict[str, Scalar], message: str
) -> None:
    with pytest.raises(BadParams, match=message):
        FaultSpec.of(kind, "controller", params)
