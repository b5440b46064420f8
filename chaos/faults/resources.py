"""Faults on what a container may use: `CpuStarve` (a CFS quota, `percent` of one core:
the process stays alive and slow, a gray failure) and `MemorySqueeze` (a memory limit of
`limit_mb`, with no swap beyond it: the process pages, or the OOM killer ends it).

Both are set with `docker update` and measured in the kernel's cgroup v1 files of the
target's main process (`chaos.faults.cgroup`):

- `cpu-starve` took effect when the cgroup's quota is the one asked for *and* the CPU time
  the cgroup used over a `SAMPLE_S` window is at most the quota plus `CPU_MARGIN` cores;
  undone when docker holds no CPU limit and the cgroup's quota is -1.
- `memory-squeeze` took effect when the cgroup's limit is the one asked for, or the target
  was OOM-killed (docker's `State.OOMKilled`); the detail says which, and whether the
  process paged (the limit was hit and pages reclaimed: `memory.failcnt`, major faults)
  since the start. Undone when docker and the cgroup hold no memory limit and the target
  runs: the undo lifts the limit, then starts a target the OOM killer ended.

A container starts without limits (docker-compose.yml sets none), so the undo lifts them
rather than restoring earlier values. Runs on the injector's thread; the values are
immutable apart from `MemorySqueeze`'s memo of the counters seen at the start.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from chaos.cluster.resources import CPU_PERIOD_US, NO_MEMORY_LIMIT
from chaos.faults.base import Check, FaultTarget
from chaos.faults.cgroup import MIB, MemoryState, cpu_quota, cpu_rate, cpu_usage_ns, memory_state
from chaos.faults.fields import BadFaultData, check_targets, no_extra_fields, targets_from
from chaos.faults.params import ParamRule, Scalar, number
from chaos.faults.process import NOT_RUNNING, RUNNING, for_each

#: How long `cpu-starve` samples the CPU time its targets use.
SAMPLE_S = 1.0
#: How far above its quota (in cores) a starved target's measured CPU time may be: a
#: sample window spans one CFS period more than it holds whole.
CPU_MARGIN = 0.03
MIN_PERCENT, MAX_PERCENT = 1.0, 100.0
MIN_LIMIT_MB, MAX_LIMIT_MB = 16, 65536
DEFAULT_PERCENT = 5.0
DEFAULT_LIMIT_MB = 64


def _core_share(value: Scalar) -> bool:
    found = number(value)
    return found is not None and MIN_PERCENT <= found <= MAX_PERCENT


def _limit(value: Scalar) -> bool:
    found = number(value)
    return isinstance(found, int) and MIN_LIMIT_MB <= found <= MAX_LIMIT_MB


#: The params of `cpu-starve` and `memory-squeeze` in a schedule (`chaos.faults.registry`).
PERCENT_RULE = ParamRule(
    "percent", int(DEFAULT_PERCENT), _core_share, f"in [{MIN_PERCENT:g}, {MAX_PERCENT:g}]"
)
LIMIT_MB_RULE = ParamRule(
    "limit_mb", DEFAULT_LIMIT_MB, _limit, f"an integer in [{MIN_LIMIT_MB}, {MAX_LIMIT_MB}]"
)


def _number(data: Mapping[str, Any], key: str, default: float, kind: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadFaultData(f"{kind}: `{key}` must be a number, got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class CpuStarve:
    """Hold each target to `percent` of one core (a CFS quota); undone by lifting it."""

    targets: tuple[str, ...]
    percent: float = DEFAULT_PERCENT
    KIND: ClassVar[str] = "cpu-starve"

    def __post_init__(self) -> None:
        check_targets(self.targets, self.KIND)
        if not MIN_PERCENT <= self.percent <= MAX_PERCENT:
            raise BadFaultData(
                f"{self.KIND}: percent must be in [{MIN_PERCENT:g}, {MAX_PERCENT:g}], "
                f"got {self.percent!r}"
            )

    @property
    def kind(self) -> str:
        """`cpu-starve`."""
        return self.KIND

    @property
    def quota_us(self) -> int:
        """The CFS quota per `CPU_PERIOD_US` that `percent` of a core is."""
        return round(self.percent / 100 * CPU_PERIOD_US)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "percent"}, cls.KIND)
        return cls(
            targets_from(data, cls.KIND), _number(data, "percent", DEFAULT_PERCENT, cls.KIND)
        )

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "percent": ...}`."""
        return {"targets": list(self.targets), "percent": self.percent}

    def start(self, cluster: FaultTarget) -> None:
        """Set the quota on every target."""
        for_each(self.targets, lambda t: cluster.set_cpu_quota(t, self.quota_us))

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target runs with the quota in its cgroup, and used at most the quota
        plus `CPU_MARGIN` cores over a `SAMPLE_S` window (all targets sampled at once)."""
        checks: dict[str, Check] = {}
        before: dict[str, int] = {}
        for target in self.targets:
            status = cluster.status(target)
            if status != RUNNING:
                checks[target] = Check(False, f"{target} {status}")
                continue
            quota, period = cpu_quota(cluster.cgroup_dir(target, "cpu"))
            if quota != self.quota_us:
                checks[target] = Check(False, f"{target}: cgroup quota {quota}/{period} us")
            else:
                before[target] = cpu_usage_ns(cluster.cgroup_dir(target, "cpuacct"))
        began = time.monotonic()
        if before:
            time.sleep(SAMPLE_S)
        wall = time.monotonic() - began
        bound = self.percent / 100 + CPU_MARGIN
        for target, usage in before.items():
            rate = cpu_rate(usage, cpu_usage_ns(cluster.cgroup_dir(target, "cpuacct")), wall)
            checks[target] = Check(
                rate <= bound,
                f"{target} quota {self.quota_us}/{CPU_PERIOD_US} us ({self.percent:g}% of a "
                f"core), used {rate:.3f} CPU s/s over {wall:.1f} s (bound {bound:.3f})",
            )
        return Check.all([checks[t] for t in self.targets])

    def stop(self, cluster: FaultTarget) -> None:
        """Lift the quota of every target (-1)."""
        for_each(self.targets, lambda t: cluster.set_cpu_quota(t, -1))

    def undone(self, cluster: FaultTarget) -> Check:
        """Docker holds no CPU limit of any target, and a running one's cgroup quota is
        -1."""
        return Check.all([self._lifted(cluster, t) for t in self.targets])

    def _lifted(self, cluster: FaultTarget, target: str) -> Check:
        limits = cluster.resource_limits(target)
        docker = f"docker quota {limits.cpu_quota_us}, cpus {limits.nano_cpus / 1e9:g}"
        if cluster.status(target) != RUNNING:
            return Check(not limits.cpu_limited, f"{target} {cluster.status(target)}, {docker}")
        quota, _ = cpu_quota(cluster.cgroup_dir(target, "cpu"))
        return Check(
            quota == -1 and not limits.cpu_limited, f"{target}: cgroup quota {quota}, {docker}"
        )


@dataclass(frozen=True, slots=True)
class MemorySqueeze:
    """Limit each target's memory to `limit_mb` MiB with no swap beyond it; undone by
    lifting the limit and starting a target the OOM killer ended."""

    targets: tuple[str, ...]
    limit_mb: int = DEFAULT_LIMIT_MB
    KIND: ClassVar[str] = "memory-squeeze"
    _before: dict[str, MemoryState] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    def __post_init__(self) -> None:
        check_targets(self.targets, self.KIND)
        if isinstance(self.limit_mb, bool) or not isinstance(self.limit_mb, int):
            raise BadFaultData(f"{self.KIND}: limit_mb must be an integer, got {self.limit_mb!r}")
        if not MIN_LIMIT_MB <= self.limit_mb <= MAX_LIMIT_MB:
            raise BadFaultData(
                f"{self.KIND}: limit_mb must be in [{MIN_LIMIT_MB}, {MAX_LIMIT_MB}], "
                f"got {self.limit_mb!r}"
            )

    @property
    def kind(self) -> str:
        """`memory-squeeze`."""
        return self.KIND

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "limit_mb"}, cls.KIND)
        limit = data.get("limit_mb", DEFAULT_LIMIT_MB)
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        return cls(targets_from(data, cls.KIND), limit)

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "limit_mb": ...}`."""
        return {"targets": list(self.targets), "limit_mb": self.limit_mb}

    def start(self, cluster: FaultTarget) -> None:
        """Remember each running target's memory counters, then set its limit."""
        for_each(self.targets, lambda t: self._squeeze(cluster, t))

    def _squeeze(self, cluster: FaultTarget, target: str) -> None:
        if cluster.status(target) == RUNNING:
            self._before[target] = memory_state(cluster.cgroup_dir(target, "memory"))
        cluster.set_memory_limit(target, self.limit_mb * MIB)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target runs under the limit, or was OOM-killed; the detail says whether
        it paged."""
        return Check.all([self._squeezed(cluster, t) for t in self.targets])

    def _squeezed(self, cluster: FaultTarget, target: str) -> Check:
        status = cluster.status(target)
        if status != RUNNING:
            killed = cluster.resource_limits(target).oom_killed
            verdict = "OOM-killed (docker OOMKilled)" if killed else "not by the OOM killer"
            return Check(killed, f"{target} {status}, {verdict}")
        state = memory_state(cluster.cgroup_dir(target, "memory"))
        return Check(
            state.limit_bytes == self.limit_mb * MIB,
            f"{target}: {state.describe()}, {state.pressure_since(self._before.get(target))}",
        )

    def stop(self, cluster: FaultTarget) -> None:
        """Lift every target's limit; start a target the OOM killer ended."""
        for_each(self.targets, lambda t: self._release(cluster, t))

    @staticmethod
    def _release(cluster: FaultTarget, target: str) -> None:
        cluster.set_memory_limit(target, NO_MEMORY_LIMIT)
        if cluster.status(target) in NOT_RUNNING and cluster.resource_limits(target).oom_killed:
            cluster.start(target)

    def undone(self, cluster: FaultTarget) -> Check:
        """Every target runs, and neither docker nor its cgroup holds a memory limit."""
        return Check.all([self._released(cluster, t) for t in self.targets])

    def _released(self, cluster: FaultTarget, target: str) -> Check:
        status = cluster.status(target)
        limits = cluster.resource_limits(target)
        if status != RUNNING:
            return Check(False, f"{target} {status}")
        state = memory_state(cluster.cgroup_dir(target, "memory"))
        pressure = state.pressure_since(self._before.get(target))
        return Check(
            not state.limited and not limits.memory_limited,
            f"{target}: {state.describe()} (docker {limits.memory_bytes}), over the fault "
            f"{pressure}",
        )
