"""A container's CPU and memory limits, as docker holds them and as the kernel applies
them: `ResourceControls` (mixed into `ClusterHandle`) sets them with `docker update`,
reads docker's view (`ResourceLimits`, with `State.OOMKilled`) and finds the container's
cgroup v1 directory of a controller from its main process's `/proc/<pid>/cgroup`
(`cgroup_dirs`, pure).

Docker cannot take a memory limit back to none once one was set (`docker update` refuses
0 and -1), so lifting one sets memory and memory+swap to `NO_MEMORY_LIMIT`, the value the
kernel itself reports for an unlimited cgroup; a later restart applies it too. A CPU quota
of -1 is none, in docker and in the kernel.

Blocking docker calls on the caller's thread (the injector's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.models.containers import Container

from chaos.errors import FaultFailed

#: What the kernel reports as a cgroup v1 memory limit when there is none (page size 4 KiB).
NO_MEMORY_LIMIT = 9_223_372_036_854_771_712
#: A memory limit at or above this is none, whatever the page size.
UNLIMITED_FROM = 2**62
#: The CFS period every quota is set with (docker's default).
CPU_PERIOD_US = 100_000
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC = Path("/proc")


def no_memory_limit(limit_bytes: int) -> bool:
    """Whether a memory limit (docker's or the kernel's) is none: 0, -1 or unlimited."""
    return limit_bytes <= 0 or limit_bytes >= UNLIMITED_FROM


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """Docker's limits of a container (`HostConfig`) and whether the kernel's OOM killer
    ended its last run (`State.OOMKilled`)."""

    cpu_quota_us: int
    cpu_period_us: int
    nano_cpus: int
    memory_bytes: int
    memory_swap_bytes: int
    oom_killed: bool

    @classmethod
    def from_inspect(cls, attrs: Mapping[str, Any]) -> ResourceLimits:
        """From a container's docker inspection (absent fields are 0)."""
        host = attrs.get("HostConfig") or {}
        return cls(
            int(host.get("CpuQuota") or 0),
            int(host.get("CpuPeriod") or 0),
            int(host.get("NanoCpus") or 0),
            int(host.get("Memory") or 0),
            int(host.get("MemorySwap") or 0),
            bool((attrs.get("State") or {}).get("OOMKilled")),
        )

    @property
    def cpu_limited(self) -> bool:
        """Whether docker holds a CPU limit (a quota above 0, or `--cpus`)."""
        return self.cpu_quota_us > 0 or self.nano_cpus > 0

    @property
    def memory_limited(self) -> bool:
        """Whether docker holds a memory limit."""
        return not no_memory_limit(self.memory_bytes)


def cgroup_dirs(text: str) -> dict[str, str]:
    """Controller -> path of a `/proc/<pid>/cgroup` (cgroup v1 lines `id:ctl,ctl:path`;
    `name=` hierarchies and the v2 line with no controller are left out)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        for controller in parts[1].split(","):
            if controller and not controller.startswith("name="):
                found[controller] = parts[2]
    return found


class ResourceControls:
    """The limit methods of `ClusterHandle`; it supplies `_container`, `_act` and `pid`
    (each checks that the container is the project's)."""

    def _container(self, service: str) -> Container:
        raise NotImplementedError

    def _act(self, service: str, verb: str, action: Callable[[Container], None]) -> None:
        raise NotImplementedError

    def pid(self, service: str) -> int:
        """The host pid of the service's main process."""
        raise NotImplementedError

    def set_cpu_quota(self, service: str, quota_us: int) -> None:
        """`docker update --cpu-quota quota_us --cpu-period CPU_PERIOD_US`; -1 lifts it."""
        self._act(
            service,
            "update --cpu-quota",
            lambda c: c.update(cpu_quota=quota_us, cpu_period=CPU_PERIOD_US),
        )

    def set_memory_limit(self, service: str, limit_bytes: int) -> None:
        """`docker update --memory --memory-swap`, both `limit_bytes` (no swap beyond the
        limit); `NO_MEMORY_LIMIT` lifts it."""
        self._act(
            service,
            "update --memory",
            lambda c: c.update(mem_limit=limit_bytes, memswap_limit=limit_bytes),
        )

    def resource_limits(self, service: str) -> ResourceLimits:
        """Docker's limits of the container and its `OOMKilled`."""
        return ResourceLimits.from_inspect(self._container(service).attrs)

    def cgroup_dir(self, service: str, controller: str) -> Path:
        """The host directory of the cgroup v1 `controller` (`cpu`, `cpuacct`, `memory`)
        the container's main process is in; `FaultFailed` when there is none."""
        pid = self.pid(service)
        try:
            text = (PROC / str(pid) / "cgroup").read_text()
        except OSError as exc:
            raise FaultFailed(f"{service}: cannot read /proc/{pid}/cgroup: {exc}") from exc
        path = cgroup_dirs(text).get(controller)
        found = CGROUP_ROOT / controller / (path or "").lstrip("/")
        if path is None or not found.is_dir():
            raise FaultFailed(f"{service}: pid {pid} has no cgroup v1 {controller} directory")
        return found
