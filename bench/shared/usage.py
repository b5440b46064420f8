"""Where a measured phase spent the machine: CPU seconds per process and for the whole box
(from `/proc`), and the events the brokers wrote meanwhile.

`CpuMeter.sample()` reads utime + stime of each named group of processes and of every
other process, and the busy, total and interrupt jiffies of every CPU; `CpuMeter.usage`
turns two samples into `CpuUsage`, naming the busiest other processes too (one started
during the phase counts from zero). A name may stand for several processes (`zookeeper`:
the bench's JVM children, found by `child_pids`). "other" is the box's busy time not spent
in a named process: the kernel's work for loopback traffic and disk writes (irq, softirq,
kernel threads), and anything else running on the machine.
Linux only; on a read error a process counts as 0 s. Main thread.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eventlog import read_events

_TICKS = os.sysconf("SC_CLK_TCK")
#: How many unnamed processes a phase lists, and the least CPU that gets one listed.
TOP_OTHERS = 4
TOP_OTHER_MIN_S = 0.05


@dataclass(frozen=True, slots=True)
class CpuSample:
    """CPU seconds per named group, of every process on the box (pid -> (command, s)), and
    the box's busy, total and interrupt (irq + softirq) CPU seconds, at one moment."""

    processes: dict[str, float]
    everyone: dict[int, tuple[str, float]]
    box_busy_s: float
    box_total_s: float
    box_irq_s: float


@dataclass(frozen=True, slots=True)
class CpuUsage:
    """CPU seconds spent during a phase."""

    processes: dict[str, float]
    box_busy_s: float
    box_total_s: float
    #: Interrupt and softirq time (the kernel's loopback packet handling lands here).
    irq_s: float = 0.0
    #: The busiest unnamed processes, command -> CPU seconds.
    top_others: dict[str, float] = field(default_factory=dict)

    @property
    def box_busy_fraction(self) -> float:
        """How busy all CPUs were together (1.0 = every core at 100 %)."""
        return self.box_busy_s / self.box_total_s if self.box_total_s > 0 else 0.0

    @property
    def other_s(self) -> float:
        """Busy time outside the named processes."""
        return max(0.0, self.box_busy_s - sum(self.processes.values()))

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "process_cpu_s": {k: round(v, 3) for k, v in self.processes.items()},
            "other_cpu_s": round(self.other_s, 3),
            "box_busy_cpu_s": round(self.box_busy_s, 3),
            "box_busy_fraction": round(self.box_busy_fraction, 3),
            "irq_softirq_cpu_s": round(self.irq_s, 3),
            "top_other_processes_cpu_s": {k: round(v, 3) for k, v in self.top_others.items()},
        }


def _process_stat(path: Path) -> tuple[str, float] | None:
    """(command, utime + stime in s) from a /proc/<pid>/stat file; None if unreadable."""
    try:
        text = path.read_text()
    except OSError:
        return None
    head, _, tail = text.rpartition(")")  # the command name may hold spaces
    fields = tail.split()
    try:
        return head.partition("(")[2], (int(fields[11]) + int(fields[12])) / _TICKS
    except (IndexError, ValueError):
        return None


def _process_cpu_s(pid: int) -> float:
    found = _process_stat(Path(f"/proc/{pid}/stat"))
    return 0.0 if found is None else found[1]


def _everyone() -> dict[int, tuple[str, float]]:
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        found = _process_stat(stat)
        if found is not None:
            out[int(stat.parent.name)] = found
    return out


def _box_cpu_s() -> tuple[float, float, float]:
    """(busy, total, irq + softirq) CPU seconds of all CPUs since boot."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return 0.0, 0.0, 0.0
    values = [int(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal
    idle = values[3] + values[4]
    total = sum(values)
    return (total - idle) / _TICKS, total / _TICKS, (values[5] + values[6]) / _TICKS


def child_pids(marker: str) -> list[int]:
    """This process's children whose command line contains `marker` (a scan of /proc)."""
    me = os.getpid()
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rpartition(")")[2].split()[1])
            if ppid == me and marker.encode() in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return sorted(found)


class CpuMeter:
    """Samples named groups of processes (name -> pids) and the whole box."""

    def __init__(self, pids: dict[str, list[int]]) -> None:
        self.pids = {name: list(group) for name, group in pids.items()}

    def sample(self) -> CpuSample:
        """Read the counters now (a scan of every process in /proc)."""
        busy, total, irq = _box_cpu_s()
        return CpuSample(
            {name: sum(_process_cpu_s(p) for p in group) for name, group in self.pids.items()},
            _everyone(),
            busy,
            total,
            irq,
        )

    def usage(self, before: CpuSample, after: CpuSample) -> CpuUsage:
        """What was spent between two samples, with the busiest unnamed processes."""
        named = {pid for group in self.pids.values() for pid in group}
        others: dict[str, float] = {}
        for pid, (command, cpu_s) in after.everyone.items():
            if pid not in named:
                spent = cpu_s - before.everyone.get(pid, (command, 0.0))[1]
                if spent >= TOP_OTHER_MIN_S:
                    others[command] = others.get(command, 0.0) + spent
        return CpuUsage(
            {
                name: after.processes[name] - before.processes.get(name, 0.0)
                for name in after.processes
            },
            after.box_busy_s - before.box_busy_s,
            after.box_total_s - before.box_total_s,
            after.box_irq_s - before.box_irq_s,
            dict(sorted(others.items(), key=lambda kv: -kv[1])[:TOP_OTHERS]),
        )


def box_busy_fraction(seconds: float) -> float:
    """How busy all CPUs were together over the next `seconds` (blocks that long)."""
    busy, total, _ = _box_cpu_s()
    time.sleep(seconds)
    busy2, total2, _ = _box_cpu_s()
    return (busy2 - busy) / (total2 - total) if total2 > total else 0.0


def events_between(logs: dict[str, Path], start_wall: float, end_wall: float) -> dict[str, int]:
    """How many events of each kind the logs hold with a timestamp in [start, end]
    (wall-clock seconds), as `node:kind` -> count."""
    counts: Counter[str] = Counter()
    low, high = start_wall * 1000, end_wall * 1000
    for node, path in logs.items():
        if not path.exists():
            continue
        for event in read_events(path):
            if low <= float(event.get("ts", 0)) <= high:
                counts[f"{node}:{event.get('kind')}"] += 1
    return dict(sorted(counts.items()))
