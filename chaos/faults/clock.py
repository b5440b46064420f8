"""`clock` (`ClockFault`): move the wall clock of running brokers and ZooKeeper servers, as
Jepsen's clock nemesis does (bump, strobe, reset), or make it run fast or slow (rate), and
put it back.

Containers share the host's kernel, so no container can have a system clock of its own.
The broker and ZooKeeper images instead preload Debian's libfaketime into every process of
the container (the server, its health check and every `docker exec`), which reads the
offset to add to the wall clock, and the clock's speed, from `CLOCK_FILE` at most
`FAKETIME_CACHE_DURATION` (1 s) after it changes; CLOCK_MONOTONIC stays real
(docker/clock/README.md). A fault rewrites that file from the host (`docker exec` as root,
written beside and renamed, so that a reader never sees half a line):

    bump    the file holds `offset_ms`: the wall clock jumps by it (either way)
    strobe  a thread of the fault (in the runner) writes `offset_ms` and `other_offset_ms`
            in turn, each for `period_ms`, until the fault is undone: the clock jumps
            back and forth for the step's duration
    rate    the file holds `factor` and the offset that keeps the main process's clock
            where it is (`chaos.faults.clock_rate`): from then on it runs `factor` times
            as fast as the real one
    reset   the file holds the real time (what every undo does too)

Took effect is measured, not assumed: a process in the container (`date +%s%3N`, which
inherits the preload) reads a wall clock that differs from the host's, read around the
call, by the offset within `TOLERANCE_MS` plus half the round trip; for a strobe, both
offsets are seen within a few periods; for a rate, a Python process there sees its wall
clock advance `factor` times its monotonic one. The undo of every action is one reset: the
strobe thread stopped, the file back to `REAL`; undone when the file reads `REAL`, no
strobe of this fault runs and the node's clock agrees with the host's; a node another
fault stopped, killed or paused meanwhile has its file reset through `docker cp` and is
undone when the file reads `REAL` (it starts again with a real clock). The reset needs
nothing but the targets, so `python -m chaos heal` finishes it from `describe()` after the
runner died (its strobe thread died with it). Two clock faults on one node overlap as the
last one written, and the first undone resets both.

ZooKeeper servers too: with the settings of both images, an idle ZooKeeper server under
the preload uses what it uses without it, 1.6-2.4 % of a core per container against
1.8-2.1 %, with its clock real, an hour ahead, at x2 or at x0.5 (docs/chaos.md, Clock
faults); with libfaketime's default monotonic fix it used 20 times more.

Thread-safety: the fault value is immutable but for its strobe thread, which `start`
creates and `stop` ends; its methods run on the injector's thread, the strobe's writes on
the thread `clock-strobe-<targets>`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from chaos.cluster.container_files import archived_files, file_archive
from chaos.errors import FaultError, FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.clock_rate import (
    DEFAULT_FACTOR,
    MAX_FACTOR,
    MIN_FACTOR,
    factor_spec,
    main_start_s,
    rate_check,
    rate_offset_ms,
)
from chaos.faults.fields import BadFaultData, TargetedFault, no_extra_fields, targets_from
from chaos.faults.process import RUNNING, for_each

__all__ = [
    "ACTIONS",
    "CLOCK_FILE",
    "MAX_FACTOR",
    "MAX_OFFSET_MS",
    "MAX_PERIOD_MS",
    "MIN_FACTOR",
    "MIN_PERIOD_MS",
    "REAL",
    "ClockFault",
    "offset_spec",
    "skew_ms",
]

ACTIONS = ("bump", "strobe", "rate", "reset")
#: The file libfaketime reads in the broker and ZooKeeper images (`FAKETIME_TIMESTAMP_FILE`).
CLOCK_FILE = "/var/lib/faketime/clock.rc"
#: What the file holds when the clock is real.
REAL = "+0 x1"
#: How far a measured clock may stray from the expected one, beyond the read's own
#: uncertainty (half the `docker exec` round trip).
TOLERANCE_MS = 500
#: The largest offset a fault may set (a day either way).
MAX_OFFSET_MS = 86_400_000
#: A strobe's period: no shorter than libfaketime's cache of the file (1 s), so that a
#: running broker sees every half period.
MIN_PERIOD_MS, MAX_PERIOD_MS = 1000, 60_000
#: How long `stop` waits for the strobe thread to finish its write.
_JOIN_S = 10.0

_WRITE = 'printf "%s\\n" "$1" >"$2.new" && mv -f "$2.new" "$2"'
#: The commands that write the file need no faked clock.
_UNFAKED = {"LD_PRELOAD": ""}


def offset_spec(offset_ms: int) -> str:
    """The libfaketime line for a wall clock `offset_ms` off (`+60`, `-1.500`)."""
    if offset_ms % 1000 == 0:
        return f"{offset_ms // 1000:+d}"
    return f"{offset_ms / 1000:+.3f}"


def write_clock(cluster: FaultTarget, target: str, spec: str) -> None:
    """Set the target's clock file to `spec`."""
    cluster.exec(target, ["sh", "-c", _WRITE, "sh", spec, CLOCK_FILE], _UNFAKED)


def reset_clock(cluster: FaultTarget, target: str) -> None:
    """Put the target's clock file back to `REAL`: through `docker exec` while the container
    runs, into its filesystem (`docker cp`) while it is stopped or paused, so that a node
    another fault killed while its clock was moved starts again with a real one."""
    if cluster.status(target) == RUNNING:
        write_clock(cluster, target, REAL)
        return
    directory, name = CLOCK_FILE.rsplit("/", 1)
    cluster.copy_in(target, directory, file_archive(name, f"{REAL}\n".encode()))


def _stopped_file(cluster: FaultTarget, target: str) -> str:
    """The clock file of a container that does not run, read through `docker cp`."""
    found = list(archived_files(cluster.copy_out(target, CLOCK_FILE)).values())
    if not found:
        raise FaultFailed(f"docker cp {target}:{CLOCK_FILE}: no file in the archive")
    return found[0].decode(errors="replace").strip()


def skew_ms(cluster: FaultTarget, target: str) -> tuple[int, int]:
    """The target's wall clock minus the host's, in ms, and its uncertainty (half the
    round trip of the read)."""
    before = time.time_ns() // 1_000_000
    out = cluster.exec(target, ["date", "+%s%3N"]).strip()
    after = time.time_ns() // 1_000_000
    try:
        node_ms = int(out)
    except ValueError:
        raise FaultFailed(f"{target}: date printed {out!r}, not ms since the epoch") from None
    return node_ms - (before + after) // 2, (after - before + 1) // 2


def _near(measured: int, uncertainty: int, want_ms: int) -> bool:
    return abs(measured - want_ms) <= TOLERANCE_MS + uncertainty


def clock_at(cluster: FaultTarget, target: str, offset_ms: int) -> Check:
    """The target's wall clock is `offset_ms` off the host's (within the tolerance)."""
    measured, uncertainty = skew_ms(cluster, target)
    ok = _near(measured, uncertainty, offset_ms)
    return Check(ok, f"{target} clock {measured:+d} ms off the host's (want {offset_ms:+d})")


def clock_real(cluster: FaultTarget, target: str) -> Check:
    """The clock file reads `REAL` and the clock agrees with the host's; for a container
    that does not run, the file alone (it starts with the clock it says)."""
    state = cluster.status(target)
    if state != RUNNING:
        spec = _stopped_file(cluster, target)
        return Check(spec == REAL, f"{target} is {state}; its clock file holds {spec!r}")
    spec = cluster.exec(target, ["cat", CLOCK_FILE], _UNFAKED).strip()
    if spec != REAL:
        return Check(False, f"{target} clock file holds {spec!r}, not {REAL!r}")
    return clock_at(cluster, target, 0)


def _factor_field(data: Mapping[str, Any]) -> float:
    value = data.get("factor", DEFAULT_FACTOR)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadFaultData(f"clock: `factor` must be a number, got {value!r}")
    if not MIN_FACTOR <= value <= MAX_FACTOR:
        raise BadFaultData(f"clock: `factor` must be in [{MIN_FACTOR}, {MAX_FACTOR}], got {value}")
    return float(value)


def rate_line(cluster: FaultTarget, target: str, factor: float) -> str:
    """The file's line that makes the target's main process's clock run at `factor` from
    now on, without a jump (`chaos.faults.clock_rate`)."""
    offset_ms = rate_offset_ms(main_start_s(cluster, target), time.time(), factor)
    return f"{offset_spec(offset_ms)} {factor_spec(factor)}"


def _int_field(data: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadFaultData(f"clock: `{key}` must be an integer in [{low}, {high}], got {value!r}")
    return value


class _Strobe:
    """The thread that alternates the targets' clock files (see the module doc)."""

    def __init__(self, fault: ClockFault, cluster: FaultTarget) -> None:
        self._fault = fault
        self._cluster = cluster
        self._stopping = threading.Event()
        self.errors: list[str] = []
        name = f"clock-strobe-{'-'.join(fault.targets)}"
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        specs = (offset_spec(self._fault.offset_ms), offset_spec(self._fault.other_offset_ms))
        period_s = self._fault.period_ms / 1000
        turn = 1  # `start` wrote the first offset
        while not self._stopping.wait(period_s):
            try:
                self._write(specs[turn % 2])
            except FaultError as exc:  # a target restarting: the next turn writes again
                self.errors.append(str(exc))
            turn += 1

    def _write(self, spec: str) -> None:
        for_each(self._fault.targets, lambda t: write_clock(self._cluster, t, spec))

    def stop(self) -> bool:
        """Stop the loop and wait for it: whether it ended."""
        self._stopping.set()
        self.thread.join(_JOIN_S)
        return not self.thread.is_alive()


@dataclass(frozen=True, slots=True)
class ClockFault(TargetedFault):
    """Bump, strobe, rate or reset the targets' wall clocks (module docstring)."""

    action: str = "bump"
    offset_ms: int = 60_000
    other_offset_ms: int = 0
    period_ms: int = 1000
    factor: float = DEFAULT_FACTOR
    KIND: ClassVar[str] = "clock"
    _strobes: list[_Strobe] = field(default_factory=list, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        super(ClockFault, self).__post_init__()
        if self.action not in ACTIONS:
            raise BadFaultData(f"clock: `action` must be one of {ACTIONS}, got {self.action!r}")
        _int_field(self.describe(), "offset_ms", -MAX_OFFSET_MS, MAX_OFFSET_MS)
        _int_field(self.describe(), "other_offset_ms", -MAX_OFFSET_MS, MAX_OFFSET_MS)
        _int_field(self.describe(), "period_ms", MIN_PERIOD_MS, MAX_PERIOD_MS)
        _factor_field(self.describe())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(
            data,
            {"targets", "action", "offset_ms", "other_offset_ms", "period_ms", "factor"},
            cls.KIND,
        )
        return cls(
            targets_from(data, cls.KIND),
            str(data.get("action")),
            _int_field(data, "offset_ms", -MAX_OFFSET_MS, MAX_OFFSET_MS),
            _int_field(data, "other_offset_ms", -MAX_OFFSET_MS, MAX_OFFSET_MS),
            _int_field(data, "period_ms", MIN_PERIOD_MS, MAX_PERIOD_MS),
            _factor_field(data),
        )

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "action", "offset_ms", "other_offset_ms", "period_ms",
        "factor"}` (a description without `factor` rebuilds with the default)."""
        return {
            "targets": list(self.targets),
            "action": self.action,
            "offset_ms": self.offset_ms,
            "other_offset_ms": self.other_offset_ms,
            "period_ms": self.period_ms,
            "factor": self.factor,
        }

    def start(self, cluster: FaultTarget) -> None:
        """Write the offset (`bump`, and a strobe's first half), the rate (`rate`) or the
        real time (`reset`) to every target's clock file; a strobe then starts its thread."""
        if self.action == "rate":
            for_each(
                self.targets,
                lambda t: write_clock(cluster, t, rate_line(cluster, t, self.factor)),
            )
            return
        spec = REAL if self.action == "reset" else offset_spec(self.offset_ms)
        for_each(self.targets, lambda t: write_clock(cluster, t, spec))
        if self.action == "strobe" and not self._running():
            strobe = _Strobe(self, cluster)
            self._strobes.append(strobe)
            strobe.thread.start()

    def _running(self) -> bool:
        return any(s.thread.is_alive() for s in self._strobes)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """`bump`: every target's clock is `offset_ms` off the host's; `reset`: every one
        is real; `rate`: each target's clock runs `factor` times as fast as the host's;
        `strobe`: the thread runs and each target's clock was seen at both offsets within
        three periods."""
        if self.action == "bump":
            return Check.all([clock_at(cluster, t, self.offset_ms) for t in self.targets])
        if self.action == "rate":
            return Check.all([rate_check(cluster, t, self.factor) for t in self.targets])
        if self.action == "reset":
            return Check.all([clock_real(cluster, t) for t in self.targets])
        if not self._running():
            return Check(False, "the strobe thread does not run")
        checks = [self._strobing(cluster, t) for t in self.targets]
        errors = [e for s in self._strobes for e in s.errors]
        if errors:
            checks.append(Check(True, f"{len(errors)} strobe writes failed; last: {errors[-1]}"))
        return Check.all(checks)

    def _strobing(self, cluster: FaultTarget, target: str) -> Check:
        wanted = {self.offset_ms, self.other_offset_ms}
        seen: set[int] = set()
        samples: list[int] = []
        deadline = time.monotonic() + 3 * self.period_ms / 1000
        while seen != wanted and time.monotonic() < deadline:
            measured, uncertainty = skew_ms(cluster, target)
            samples.append(measured)
            seen |= {w for w in wanted if _near(measured, uncertainty, w)}
            time.sleep(min(0.2, self.period_ms / 4000))
        listed = ", ".join(f"{s:+d}" for s in samples[:12])
        return Check(
            seen == wanted,
            f"{target} clock seen {listed} ms off the host's "
            f"(want both {self.offset_ms:+d} and {self.other_offset_ms:+d})",
        )

    def stop(self, cluster: FaultTarget) -> None:
        """Stop the strobe thread, if any, and reset every target's clock (a target
        without a fault is reset all the same)."""
        stuck = [s for s in self._strobes if not s.stop()]
        for_each(self.targets, lambda t: reset_clock(cluster, t))
        if stuck:
            raise FaultFailed(f"the strobe thread of {', '.join(self.targets)} did not stop")

    def undone(self, cluster: FaultTarget) -> Check:
        """No strobe thread of this fault runs and every target's clock is real."""
        if self._running():
            return Check(False, "the strobe thread still runs")
        return Check.all([clock_real(cluster, t) for t in self.targets])
