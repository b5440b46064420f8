"""The `clock` fault's `rate` action: the line that makes a node's wall clock run `factor`
times as fast from now on, and the measure that it does.

libfaketime reads `+<offset> x<factor>` as: the wall clock is
`start + offset + (now - start) * factor`, where `start` is when the process loaded
libfaketime (shared by the processes a preloaded process starts). Written as it is, a rate
would therefore also jump a process's clock by `(factor - 1)` times its age. The line
written here carries the offset that cancels that jump for the container's main process
(PID 1, the broker or the ZooKeeper server): `offset = (start - now) * (factor - 1)`, with
`start` read from the kernel (`/proc/1/stat`, `/proc/uptime`). The main process's clock
thus agrees with the host's when the file is written and then drifts `factor - 1` seconds
per second. A process started later (a `docker exec`, the main process after a restart)
has a later start: its clock starts that offset off, and drifts the same.

Took effect: a Python process in the container (the base image's `python3`, under the
preload) reads its wall and monotonic clocks around a one-second sleep (on the monotonic
clock, which stays real); its wall clock must have advanced `factor` times what its
monotonic clock did, within `FACTOR_TOLERANCE`. One process must read both ends: a
process started later starts its clock afresh (above), and `bash`'s
`$EPOCHREALTIME` is not faked at all.

Pure but for the reads, which run on the caller's thread.
"""

from __future__ import annotations

from chaos.errors import FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.params import ParamRule, Scalar, number

__all__ = [
    "DEFAULT_FACTOR",
    "FACTOR_RULE",
    "FACTOR_TOLERANCE",
    "MAX_FACTOR",
    "MIN_FACTOR",
    "factor_spec",
    "main_start_s",
    "measured_factor",
    "rate_check",
    "rate_offset_ms",
]

#: The factors a rate may set: from a clock running at a quarter of the real speed to
#: one running four times as fast.
MIN_FACTOR, MAX_FACTOR = 0.25, 4.0
#: A rate's factor when none is given.
DEFAULT_FACTOR = 2.0
#: How far a measured factor may stray from the wanted one (the reads of the two clocks
#: are a few microseconds apart, against a second between them).
FACTOR_TOLERANCE = 0.1
_UNFAKED = {"LD_PRELOAD": ""}
#: The main process's start in the kernel's terms: uptime now, its start in clock ticks
#: after boot (field 22 of /proc/1/stat, the 20th after the command name), ticks per
#: second, and the real time now, all read in one shell without the preload.
_START = (
    "read up _ </proc/uptime; ticks=$(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20); "
    'echo "$up $ticks $(getconf CLK_TCK) $(date +%s.%N)"'
)
#: Wall and monotonic time that passed over a second's sleep, in one process.
_READ = (
    "import time; w, m = time.time(), time.monotonic(); time.sleep(1); "
    "print(time.time() - w, time.monotonic() - m)"
)


def _factor(value: Scalar) -> bool:
    found = number(value)
    return found is not None and MIN_FACTOR <= found <= MAX_FACTOR


#: The `factor` param of `clock` in a schedule (`chaos.faults.registry`).
FACTOR_RULE = ParamRule("factor", DEFAULT_FACTOR, _factor, f"in [{MIN_FACTOR:g}, {MAX_FACTOR:g}]")


def factor_spec(factor: float) -> str:
    """The libfaketime speed for `factor` (`x2`, `x0.5`): a point for the fraction, as in
    the C locale the containers run in."""
    return f"x{factor:g}"


def main_start_s(cluster: FaultTarget, target: str) -> float:
    """When the target's main process started, in seconds since the epoch."""
    out = cluster.exec(target, ["sh", "-c", _START], _UNFAKED).split()
    try:
        uptime, ticks, per_second, now = (float(x) for x in out)
    except ValueError:
        raise FaultFailed(f"{target}: read {out!r}, not uptime, start, ticks and time") from None
    return now - (uptime - ticks / per_second)


def rate_offset_ms(start_s: float, now_s: float, factor: float) -> int:
    """The offset that keeps a process started at `start_s` on the real time at `now_s`
    when its clock starts running at `factor` (module doc)."""
    return round((start_s - now_s) * (factor - 1) * 1000)


def measured_factor(cluster: FaultTarget, target: str) -> float:
    """How fast the target's wall clock runs against its monotonic (real) one."""
    out = cluster.exec(target, ["python3", "-c", _READ]).split()
    try:
        wall, monotonic = (float(x) for x in out)
    except ValueError:
        raise FaultFailed(f"{target}: read {out!r}, not two intervals") from None
    if monotonic <= 0:
        raise FaultFailed(f"{target}: a second's sleep lasted {monotonic} s")
    return wall / monotonic


def rate_check(cluster: FaultTarget, target: str, factor: float) -> Check:
    """The target's wall clock runs `factor` times as fast as the real one."""
    measured = measured_factor(cluster, target)
    ok = abs(measured - factor) <= FACTOR_TOLERANCE
    return Check(ok, f"{target} clock runs x{measured:.3f} (want x{factor:g})")
