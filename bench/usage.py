"""Where a measured phase spent the machine: CPU seconds per process and for the whole box
(from `/proc`), and the events the brokers wrote meanwhile.

`CpuMeter.sample()` reads utime + stime of each named process and the busy and total
jiffies of every CPU; `CpuMeter.usage(before, after)` turns two samples into
`CpuUsage`. A name may stand for several processes (`zookeeper`: the bench's JVM children,
found by `child_pids`). "other" is the box's busy time not spent in a named process: the
kernel's work for loopback traffic, and anything else running on the machine.
Linux only; on a read error a process counts as 0 s. Main thread.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventlog import read_events

_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class CpuSample:
    """CPU seconds per process, and the box's busy and total CPU seconds, at one moment."""

    processes: dict[str, float]
    box_busy_s: float
    box_total_s: float


@dataclass(frozen=True, slots=True)
class CpuUsage:
    """CPU seconds spent during a phase."""

    processes: dict[str, float]
    box_busy_s: float
    box_total_s: float

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
        }


def _process_cpu_s(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)


def _box_cpu_s() -> tuple[float, float]:
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return 0.0, 0.0
    values = [int(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal
    idle = values[3] + values[4]
    return (sum(values) - idle) / _TICKS, sum(values) / _TICKS


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
        """Read the counters now."""
        busy, total = _box_cpu_s()
        return CpuSample(
            {name: sum(_process_cpu_s(p) for p in group) for name, group in self.pids.items()},
            busy,
            total,
        )

    @staticmethod
    def usage(before: CpuSample, after: CpuSample) -> CpuUsage:
        """What was spent between two samples."""
        return CpuUsage(
            {
                name: after.processes[name] - before.processes.get(name, 0.0)
                for name in after.processes
            },
            after.box_busy_s - before.box_busy_s,
            after.box_total_s - before.box_total_s,
        )


def box_busy_fraction(seconds: float) -> float:
    """How busy all CPUs were together over the next `seconds` (blocks that long)."""
    busy, total = _box_cpu_s()
    time.sleep(seconds)
    busy2, total2 = _box_cpu_s()
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
