"""One measured phase of the checker benchmark, in a process of its own so that its peak
memory is its own (`resource.getrusage(...).ru_maxrss`):

    python -m bench.checker.phase decode RESULT_JSON HISTORY_FILE...
    python -m bench.checker.phase check RESULT_JSON HISTORY_FILE...

`decode` is the floor: the history files read and decoded into operations the way the
checker reads them (`rundir.history_stream.stream_history`: the files merged by `time_ns`
one line at a time), each operation dropped once decoded, nothing judged. `check` is what
judging a recorded run costs: the final read rebuilt from the `final-read` process's polls
and every check over the same stream (`rundir.checker.check_files`).
Both import the same modules before the baseline memory is taken, and the peak is
reset there (/proc/self/clear_refs), so what the imports took or freed is not counted.
The phase's seconds, its steps, the baseline and peak resident memory and the verdict go
to RESULT_JSON as one JSON object (`PhaseResult`). Main thread.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.shared import console
from rundir.checker import check_files
from rundir.history_stream import stream_history

DECODE = "decode"
CHECK = "check"
PHASES = (DECODE, CHECK)


@dataclass(frozen=True, slots=True)
class PhaseResult:
    """What one phase measured: `seconds` in all, per step, the lines decoded, resident
    memory after the imports (`baseline_kib`) and at its peak (`peak_kib`), and for
    `check` whether the verdict passed and how many violations it named."""

    phase: str
    seconds: float
    steps: dict[str, float]
    lines: int
    baseline_kib: int
    peak_kib: int
    verdict_ok: bool | None = None
    violations: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    #: the CPU seconds of the phase (`time.process_time`), which other work on a shared
    #: host moves far less than `seconds`
    cpu_seconds: float = 0.0

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> PhaseResult:
        """Back from the JSON a child wrote."""
        return cls(**document)


def _status_kib(field_name: str) -> int | None:
    """A `VmRSS:`/`VmHWM:` line of /proc/self/status in KiB; None where there is none."""
    try:
        text = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1])
    return None


def _reset_peak() -> int:
    """Forget the peak so far (the imports' transient allocations): Linux resets the peak
    resident memory to the current one on `5` written to /proc/self/clear_refs. The
    resident memory now, in KiB: the phase's baseline."""
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return _max_rss_kib()  # the peak stays; the baseline is then the peak so far
    return _status_kib("VmRSS") or _max_rss_kib()


def _max_rss_kib() -> int:
    """The process's peak resident memory since `_reset_peak`, in KiB."""
    peak = _status_kib("VmHWM")
    if peak is not None:
        return peak
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux


def run_phase(phase: str, paths: Sequence[Path]) -> PhaseResult:
    """Run one phase over `paths`; its result."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
    gc.collect()
    baseline = _reset_peak()
    steps: dict[str, float] = {}
    begun, cpu = time.monotonic(), time.process_time()

    def step(name: str) -> None:
        steps[name] = round(time.monotonic() - begun - sum(steps.values()), 3)
        console.detail(f"[{time.monotonic() - begun:6.1f} s] {phase}: {name}")

    if phase == DECODE:
        lines = sum(1 for _ in stream_history(paths))
        step(f"{lines:,} lines read and decoded")
        seconds, cpu = time.monotonic() - begun, time.process_time() - cpu
        return PhaseResult(phase, seconds, steps, lines, baseline, _max_rss_kib(), cpu_seconds=cpu)
    verdict = check_files(paths)
    lines = sum(verdict.op_counts.values())
    step(f"{lines:,} lines read, decoded and judged")
    seconds, cpu = time.monotonic() - begun, time.process_time() - cpu
    violations = sum(len(r.violations) for r in verdict.results)
    return PhaseResult(
        phase,
        seconds,
        steps,
        lines,
        baseline,
        _max_rss_kib(),
        verdict.ok,
        violations,
        cpu_seconds=cpu,
    )


def main(argv: Sequence[str]) -> int:
    """`python -m bench.checker.phase PHASE RESULT_JSON HISTORY_FILE...`; exit code."""
    if len(argv) < 3 or argv[0] not in PHASES:
        print(
            "usage: python -m bench.checker.phase {decode|check} RESULT_JSON HISTORY_FILE...",
            file=sys.stderr,
        )
        return 2
    result = run_phase(argv[0], [Path(p) for p in argv[2:]])
    Path(argv[1]).write_text(json.dumps(asdict(result)) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
