"""Clock faults: move the wall clock of running brokers and ZooKeeper servers, as Jepsen's
clock nemesis does, and put it back.

Both images preload Debian's libfaketime for every process of the container (the server
and every `docker exec`), which reads its fake time from `CLOCK_FILE` at most
`FAKETIME_CACHE_DURATION` (1 s) after the file changes; the monotonic clock is left real
(docker/clock/README.md). A fault rewrites that file from the host (`docker exec` as root,
written beside and renamed, so a process never reads half a line):

    clock-offset  `+<offset_s>`: the wall clock jumps by offset_s seconds (may be negative)
    clock-strobe  a loop in the container writes `+<offset_s>` and the real time in turn,
                  each for period_s: the clock jumps back and forth
    clock-rate    `+0 x<rate>`: the clock runs rate times as fast. libfaketime counts a
                  rate from the start of each process, so a server running for T seconds
                  first jumps by (rate - 1) * T, then runs at that rate.

Took effect is measured: the node's wall clock, read by a process in the container
(`date +%s%3N`, which inherits the preload) against the host's clock around the call,
differs by the offset (for a strobe, both by the offset and by nothing within a few
periods); for a rate, a process there sees its wall clock advance `rate` times its
monotonic clock over a second. The undo of every kind is one reset: the strobe loop
killed, the file back to `REAL`; undone when no loop runs, the file reads `REAL` and the
node's clock agrees with the host's. The reset needs nothing but the targets, so
`python -m chaos heal` finishes it from `describe()`. Two clock faults on one node
overlap as the last written; the first undone resets both.

Thread-safety: the faults are immutable values; their methods run on the injector's
thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from chaos.errors import FaultFailed
from chaos.faults.base import Check, FaultTarget
from chaos.faults.fields import BadFaultData, TargetedFault, no_extra_fields, targets_from
from chaos.faults.process import for_each

#: The file libfaketime reads in both images (`FAKETIME_TIMESTAMP_FILE`).
CLOCK_FILE = "/var/lib/faketime/clock.rc"
#: What the file holds when the clock is real.
REAL = "+0 x1"
#: How far a measured clock may stray from the expected one, beyond the read's own
#: uncertainty (half the `docker exec` round trip).
TOLERANCE_MS = 500
#: The largest offset a fault may set, in seconds (a day).
MAX_OFFSET_S = 86_400
#: The rates a `clock-rate` fault may set.
MIN_RATE, MAX_RATE = 0.1, 10.0

_WRITE = 'printf "%s\\n" "$1" >"$2.new" && mv -f "$2.new" "$2"'
# $0 is the loop's tag (found by `pgrep -f`), $1 the offset spec, $2 the period.
_LOOP = (
    f"f={CLOCK_FILE}; "
    'while :; do printf "%s\\n" "$1" >"$f.new" && mv -f "$f.new" "$f"; sleep "$2"; '
    f'printf "%s\\n" "{REAL}" >"$f.new" && mv -f "$f.new" "$f"; sleep "$2"; done'
)
_STROBE_TAG = "clock-strobe"
# The pattern does not match its own command line (the [b]).
_STROBE_RUNNING = "pgrep -f 'clock-stro[b]e' || true"
_RESET = f"pkill -KILL -f 'clock-stro[b]e'; {_WRITE}"
#: A process in the container measures its wall clock's rate against its monotonic one.
_RATE_PROBE = (
    "import time; m, w = time.monotonic(), time.time(); time.sleep(1.0); "
    "print((time.time() - w) / (time.monotonic() - m))"
)
#: Libfaketime's own sleeps must not run at a faked rate in the strobe loop.
_UNFAKED = {"LD_PRELOAD": ""}


def offset_spec(offset_s: int) -> str:
    """The libfaketime line for a wall clock `offset_s` seconds off (`+300`, `-600`)."""
    return f"{offset_s:+d}"


def rate_spec(rate: float) -> str:
    """The libfaketime line for a wall clock running `rate` times as fast (`+0 x2`)."""
    return f"+0 x{rate:g}"


def write_clock(cluster: FaultTarget, target: str, spec: str) -> None:
    """Set the target's clock file to `spec`."""
    cluster.exec(target, ["sh", "-c", _WRITE, "sh", spec, CLOCK_FILE])


def reset_clock(cluster: FaultTarget, target: str) -> None:
    """Kill the target's strobe loop, if any, and set its clock file to `REAL`."""
    cluster.exec(target, ["sh", "-c", _RESET, "sh", REAL, CLOCK_FILE])


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


def clock_at(cluster: FaultTarget, target: str, offset_s: float) -> Check:
    """The target's wall clock is `offset_s` off the host's (within the tolerance)."""
    measured, uncertainty = skew_ms(cluster, target)
    want = round(offset_s * 1000)
    ok = abs(measured - want) <= TOLERANCE_MS + uncertainty
    return Check(ok, f"{target} clock {measured:+d} ms off the host's (want {want:+d})")


def strobe_running(cluster: FaultTarget, target: str) -> bool:
    """Whether a strobe loop runs in the target."""
    return bool(cluster.exec(target, ["sh", "-c", _STROBE_RUNNING]).strip())


def clock_real(cluster: FaultTarget, target: str) -> Check:
    """No strobe loop runs, the clock file reads `REAL` and the clock agrees with the
    host's."""
    spec = cluster.exec(target, ["cat", CLOCK_FILE]).strip()
    if spec != REAL:
        return Check(False, f"{target} clock file holds {spec!r}, not {REAL!r}")
    if strobe_running(cluster, target):
        return Check(False, f"{target} still runs a strobe loop")
    return clock_at(cluster, target, 0)


def _offset_from(data: Mapping[str, Any], kind: str) -> int:
    value = data.get("offset_s")
    if isinstance(value, bool) or not isinstance(value, int) or not value:
        raise BadFaultData(f"{kind}: `offset_s` must be a non-zero integer, got {value!r}")
    if abs(value) > MAX_OFFSET_S:
        raise BadFaultData(f"{kind}: `offset_s` must be within +-{MAX_OFFSET_S}, got {value}")
    return value


def _positive_from(data: Mapping[str, Any], key: str, low: float, high: float, kind: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise BadFaultData(
            f"{kind}: `{key}` must be a number in [{low:g}, {high:g}], got {value!r}"
        )
    return float(value)


@dataclass(frozen=True, slots=True)
class ClockReset(TargetedFault):
    """The undo all clock faults share: the targets' clocks reset to the real time."""

    def stop(self, cluster: FaultTarget) -> None:
        """Reset every target's clock (a target without a fault is reset all the same)."""
        for_each(self.targets, lambda t: reset_clock(cluster, t))

    def undone(self, cluster: FaultTarget) -> Check:
        """Every target's clock is real (`clock_real`)."""
        return Check.all([clock_real(cluster, t) for t in self.targets])


@dataclass(frozen=True, slots=True)
class ClockOffset(ClockReset):
    """Jump the targets' wall clocks by `offset_s` seconds."""

    offset_s: int = 300
    KIND: ClassVar[str] = "clock-offset"

    def __post_init__(self) -> None:
        super(ClockOffset, self).__post_init__()
        _offset_from({"offset_s": self.offset_s}, self.KIND)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "offset_s"}, cls.KIND)
        return cls(targets_from(data, cls.KIND), _offset_from(data, cls.KIND))

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "offset_s": ...}`."""
        return {"targets": list(self.targets), "offset_s": self.offset_s}

    def start(self, cluster: FaultTarget) -> None:
        """Write the offset to every target's clock file."""
        for_each(self.targets, lambda t: write_clock(cluster, t, offset_spec(self.offset_s)))

    def took_effect(self, cluster: FaultTarget) -> Check:
        """Every target's clock is `offset_s` off the host's."""
        return Check.all([clock_at(cluster, t, self.offset_s) for t in self.targets])


@dataclass(frozen=True, slots=True)
class ClockStrobe(ClockReset):
    """Jump the targets' wall clocks by `offset_s` and back, each for `period_s`."""

    offset_s: int = 300
    period_s: float = 2.0
    KIND: ClassVar[str] = "clock-strobe"
    #: The shortest period: a running process reads the clock file once a second.
    MIN_PERIOD_S: ClassVar[float] = 1.0
    MAX_PERIOD_S: ClassVar[float] = 60.0

    def __post_init__(self) -> None:
        super(ClockStrobe, self).__post_init__()
        self._check(self.describe())

    @classmethod
    def _check(cls, data: Mapping[str, Any]) -> tuple[int, float]:
        period = _positive_from(data, "period_s", cls.MIN_PERIOD_S, cls.MAX_PERIOD_S, cls.KIND)
        return _offset_from(data, cls.KIND), period

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "offset_s", "period_s"}, cls.KIND)
        offset, period = cls._check(data)
        return cls(targets_from(data, cls.KIND), offset, period)

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "offset_s": ..., "period_s": ...}`."""
        return {"targets": list(self.targets), "offset_s": self.offset_s, "period_s": self.period_s}

    def start(self, cluster: FaultTarget) -> None:
        """Start the loop in every target that does not run one yet."""
        for_each(self.targets, lambda t: self._start_loop(cluster, t))

    def _start_loop(self, cluster: FaultTarget, target: str) -> None:
        if strobe_running(cluster, target):
            return
        launch = f'sh -c "$1" {_STROBE_TAG} "$2" "$3" </dev/null >/dev/null 2>&1 &'
        argv = ["sh", "-c", launch, "sh", _LOOP, offset_spec(self.offset_s), f"{self.period_s:g}"]
        cluster.exec(target, argv, env=_UNFAKED)

    def took_effect(self, cluster: FaultTarget) -> Check:
        """In every target a loop runs, and its clock was seen both `offset_s` off and
        real within three periods."""
        return Check.all([self._strobing(cluster, t) for t in self.targets])

    def _strobing(self, cluster: FaultTarget, target: str) -> Check:
        if not strobe_running(cluster, target):
            return Check(False, f"{target} runs no strobe loop")
        seen_off = seen_real = False
        deadline = time.monotonic() + 3 * self.period_s
        while not (seen_off and seen_real) and time.monotonic() < deadline:
            seen_off = seen_off or clock_at(cluster, target, self.offset_s).ok
            seen_real = seen_real or clock_at(cluster, target, 0).ok
        ok = seen_off and seen_real
        return Check(
            ok, f"{target} clock seen {self.offset_s:+d} s off: {seen_off}, real: {seen_real}"
        )


@dataclass(frozen=True, slots=True)
class ClockRate(ClockReset):
    """Run the targets' wall clocks `rate` times as fast (see the module docstring for
    the jump a running process makes first)."""

    rate: float = 2.0
    KIND: ClassVar[str] = "clock-rate"
    #: How far a measured rate may stray from the one set.
    RATE_TOLERANCE: ClassVar[float] = 0.05

    def __post_init__(self) -> None:
        super(ClockRate, self).__post_init__()
        _positive_from({"rate": self.rate}, "rate", MIN_RATE, MAX_RATE, self.KIND)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild from `describe()`."""
        no_extra_fields(data, {"targets", "rate"}, cls.KIND)
        rate = _positive_from(data, "rate", MIN_RATE, MAX_RATE, cls.KIND)
        return cls(targets_from(data, cls.KIND), rate)

    def describe(self) -> dict[str, Any]:
        """`{"targets": [...], "rate": ...}`."""
        return {"targets": list(self.targets), "rate": self.rate}

    def start(self, cluster: FaultTarget) -> None:
        """Write the rate to every target's clock file."""
        for_each(self.targets, lambda t: write_clock(cluster, t, rate_spec(self.rate)))

    def took_effect(self, cluster: FaultTarget) -> Check:
        """In every target, a process's wall clock runs `rate` times its monotonic one."""
        return Check.all([self._running_at(cluster, t) for t in self.targets])

    def _running_at(self, cluster: FaultTarget, target: str) -> Check:
        out = cluster.exec(target, ["python3", "-c", _RATE_PROBE]).strip()
        try:
            measured = float(out)
        except ValueError:
            raise FaultFailed(f"{target}: the rate probe printed {out!r}") from None
        ok = abs(measured - self.rate) <= self.RATE_TOLERANCE * self.rate
        return Check(ok, f"{target} wall clock runs x{measured:.3f} (want x{self.rate:g})")
