"""Flame graphs of broker processes while a measure runs, taken with py-spy.

`profiled(pids, out_dir, name)` attaches `py-spy record --nonblocking` to each process
(the processes are never paused, so the profile costs them nothing but the sampler's own
CPU), and on exit stops each sampler with SIGINT, which makes it write its SVG flame graph
`<out_dir>/<name>-<label>.svg`. Without py-spy (a dev extra) or when attaching fails, the
measure runs unprofiled and `Profiles.missing` says why. Main thread.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: Samples per second. Sampling is not free on a 2-core box: at py-spy's default of 100,
#: three samplers lengthened a controlled shutdown at 10,000 partitions from 4.6 s to
#: 8.8 s. At 20 a flame graph of a 5 s measure still holds hundreds of samples per broker.
RATE_HZ = 20
#: Above this many partitions a measure lasts tens of seconds, and its samplers take
#: `LONG_RATE_HZ`: the failover at 100,000 took about 1 s longer sampled at 20 Hz than
#: unsampled, and a 20 s measure at 5 Hz still holds a hundred samples per broker.
LONG_MEASURE_PARTITIONS = 10_000
LONG_RATE_HZ = 5
#: How long a sampler may take to write its flame graph after SIGINT.
STOP_TIMEOUT_S = 30.0


def py_spy() -> str | None:
    """The py-spy executable next to this interpreter or on PATH, if any."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


@dataclass(slots=True)
class Profiles:
    """The flame graphs one measure produced (label -> SVG path), or why there are none."""

    written: dict[str, Path] = field(default_factory=dict)
    missing: str = ""


def rate_for(partitions: int) -> int:
    """The sampling rate of a measure over `partitions` partitions."""
    return RATE_HZ if partitions <= LONG_MEASURE_PARTITIONS else LONG_RATE_HZ


@contextmanager
def profiled(
    pids: Mapping[str, int], out_dir: Path, name: str, rate_hz: int = RATE_HZ
) -> Iterator[Profiles]:
    """Sample every process in `pids` (label -> pid) `rate_hz` times a second while the
    block runs."""
    profiles = Profiles()
    exe = py_spy()
    if exe is None:
        profiles.missing = "py-spy not installed (pip install -e '.[dev]')"
        yield profiles
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    samplers: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
    for label, pid in pids.items():
        svg = out_dir / f"{name}-{label}.svg"
        samplers[label] = (
            subprocess.Popen(
                [
                    *(exe, "record", "--nonblocking", "--rate", str(rate_hz)),
                    *("--pid", str(pid), "--output", str(svg), "--format", "flamegraph"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            svg,
        )
    try:
        yield profiles
    finally:
        for label, (process, svg) in samplers.items():
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if svg.exists():
                profiles.written[label] = svg
        if samplers and not profiles.written:
            profiles.missing = "py-spy wrote no flame graph (ptrace not permitted?)"


def profile_lines(profiles: Profiles | None) -> Iterator[str]:
    """Where a measure's flame graphs went, or why there are none."""
    if profiles is None:
        return
    if profiles.missing:
        yield f"not profiled: {profiles.missing}"
    for label, svg in sorted(profiles.written.items()):
        yield f"flame graph {label}: {svg}"
