"""What the kernel applies to a container's cgroup v1 directories, read from the host: the
CFS quota (`cpu.cfs_quota_us`, `cpu.cfs_period_us`), the CPU time used (`cpuacct.usage`,
nanoseconds), and the memory cgroup's limit, usage and pressure (`memory.limit_in_bytes`,
`memory.usage_in_bytes`, `memory.failcnt`: how often usage hit the limit and the kernel had
to reclaim; `memory.memsw.failcnt`; `memory.stat`'s `pgmajfault` and its
`workingset_refault_*`, pages read back in after the kernel evicted them;
`memory.oom_control`'s `oom_kill`). Some kernels leave `memory.failcnt` at 0 though they
reclaim at the limit; the refaults then tell paging. The parsers are pure; the readers
take the directory (`FaultTarget.cgroup_dir`), so tests hand them a folder of files.

A file that cannot be read or parsed raises `FaultFailed` naming it. Blocking file reads
on the caller's thread (the injector's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chaos.cluster.resources import no_memory_limit
from chaos.errors import FaultFailed

MIB = 1024 * 1024


def parse_int(text: str, what: str) -> int:
    """The one integer a cgroup file holds; `FaultFailed` naming `what` otherwise."""
    try:
        return int(text.strip())
    except ValueError:
        raise FaultFailed(f"{what}: not an integer: {text.strip()[:40]!r}") from None


def parse_keyed(text: str, what: str) -> dict[str, int]:
    """A flat keyed cgroup file (`memory.stat`, `memory.oom_control`): `key value` lines."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            found[key] = parse_int(value, f"{what} {key}")
    return found


def cpu_rate(usage_before_ns: int, usage_after_ns: int, wall_s: float) -> float:
    """CPU seconds used per wall-clock second between two `cpuacct.usage` samples."""
    if wall_s <= 0:
        raise ValueError(f"the sample must last a positive time, got {wall_s}")
    return max(0, usage_after_ns - usage_before_ns) / 1e9 / wall_s


def _read(directory: Path, name: str) -> str:
    try:
        return (directory / name).read_text()
    except OSError as exc:
        raise FaultFailed(f"cannot read {directory / name}: {exc.strerror}") from exc


def cpu_quota(cpu_dir: Path) -> tuple[int, int]:
    """The cgroup's CFS quota and period in microseconds (quota -1: none)."""
    return (
        parse_int(_read(cpu_dir, "cpu.cfs_quota_us"), "cpu.cfs_quota_us"),
        parse_int(_read(cpu_dir, "cpu.cfs_period_us"), "cpu.cfs_period_us"),
    )


def cpu_usage_ns(cpuacct_dir: Path) -> int:
    """The CPU time the cgroup's tasks used so far, in nanoseconds."""
    return parse_int(_read(cpuacct_dir, "cpuacct.usage"), "cpuacct.usage")


@dataclass(frozen=True, slots=True)
class MemoryState:
    """A memory cgroup's limit and usage (bytes) and its pressure counters."""

    limit_bytes: int
    usage_bytes: int
    failcnt: int
    memsw_failcnt: int
    major_faults: int
    oom_kills: int
    refaults: int = 0

    @property
    def limited(self) -> bool:
        """Whether the cgroup has a memory limit."""
        return not no_memory_limit(self.limit_bytes)

    def pressure_since(self, before: MemoryState | None) -> str:
        """What the limit did since `before` (or since the cgroup was made, also when a
        counter went back: the container restarted in a new cgroup): the process was
        OOM-killed, paged (usage hit the limit and pages were reclaimed), or neither."""
        base = before or MemoryState(0, 0, 0, 0, 0, 0)
        if any(now < then for now, then in zip(self._counters(), base._counters(), strict=True)):
            base = MemoryState(0, 0, 0, 0, 0, 0)  # a new cgroup: the container restarted
        hits = self.failcnt - base.failcnt + self.memsw_failcnt - base.memsw_failcnt
        refaults = self.refaults - base.refaults
        faults = self.major_faults - base.major_faults
        kills = self.oom_kills - base.oom_kills
        counts = (
            f"limit hit {hits} times, {refaults} refaults, {faults} major faults, {kills} OOM kills"
        )
        if kills > 0:
            return f"OOM-killed ({counts})"
        return f"paging ({counts})" if hits or refaults else f"no pressure yet ({counts})"

    def _counters(self) -> tuple[int, ...]:
        return (self.failcnt, self.memsw_failcnt, self.major_faults, self.oom_kills, self.refaults)

    def describe(self) -> str:
        """Limit and usage in MiB."""
        limit = f"{self.limit_bytes / MIB:.0f} MiB" if self.limited else "none"
        return f"memory limit {limit}, usage {self.usage_bytes / MIB:.1f} MiB"


def memory_state(memory_dir: Path) -> MemoryState:
    """The memory cgroup's limit, usage and pressure counters (`memory.memsw.*` is 0 when
    the kernel accounts no swap)."""
    memsw = memory_dir / "memory.memsw.failcnt"
    stat = parse_keyed(_read(memory_dir, "memory.stat"), "memory.stat")
    oom = parse_keyed(_read(memory_dir, "memory.oom_control"), "memory.oom_control")
    return MemoryState(
        parse_int(_read(memory_dir, "memory.limit_in_bytes"), "memory.limit_in_bytes"),
        parse_int(_read(memory_dir, "memory.usage_in_bytes"), "memory.usage_in_bytes"),
        parse_int(_read(memory_dir, "memory.failcnt"), "memory.failcnt"),
        parse_int(_read(memory_dir, memsw.name), memsw.name) if memsw.exists() else 0,
        stat.get("pgmajfault", 0),
        oom.get("oom_kill", 0),
        stat.get("workingset_refault_anon", 0) + stat.get("workingset_refault_file", 0),
    )
