"""The history checker over a generated history of a million operations, against a plain
decode of the same lines, with the peak memory of each.

    python -m bench.checker [--operations 1000000] [--short-operations 250000] [--quick]
                            [--partitions 64] [--producers 4] [--seed 0]
                            [--out DIR] [--results DIR] [--keep-histories]

Runbook (no ZooKeeper, no broker, no container):

1. Generate two clean workload histories under DIR/histories (`bench.checker.generator`:
   producers sending batches to every partition with ok/fail/info outcomes, a consumer
   polling, the final read), a long one of `--operations` lines and a short one of
   `--short-operations` with the same partitions and processes, with progress. Not
   measured.
2. For each history, in a fresh child process each (`bench.checker.phase`): the floor, the
   lines read and decoded as the checker reads them; then the checker, the final read
   rebuilt from its process's file and every check judged as the same lines are read.
   Each floor runs before and after the checker and the floor is their mean (other work
   on a shared box moves both). Each child reports its seconds, its steps and its peak
   resident memory (`ru_maxrss`) above what the imports took.
3. Report: per history, the checker's seconds against the floor and their ratio (the
   target is 3x), both peaks and how much the peak grew from the short history to the long
   one; `bench.json` in DIR and the JSON lines in `bench/results` (`measure`
   `history_checker`). The histories are deleted unless `--keep-histories`.

Main thread; one child process at a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.checker.generator import Generated, Mix, write_history
from bench.checker.options import CHECKER, CheckerSettings, parse_checker_settings
from bench.checker.phase import CHECK, DECODE, PhaseResult
from bench.shared import console
from bench.shared.report import Measure, Report
from bench.shared.standalone import run_standalone
from rundir.checker.spill import bucket_count
from rundir.checker.stream import BUCKET_BYTES

MEASURE = "history_checker"
#: The ratio of the checker's time to the floor that the checker is held to.
TARGET_RATIO = 3.0
FLOOR_PHRASE = (
    "the same history files read and decoded into operations as the checker reads them "
    "(rundir.history_stream.stream_history), nothing judged, in a child process of its own"
)


def _generate(settings: CheckerSettings, operations: int, name: str) -> tuple[Generated, float]:
    history_dir = settings.out / "histories" / name
    console.phase(f"generating a history of {operations:,} operations under {history_dir}")
    begun = time.monotonic()
    step = max(1, operations // 10)
    shown = [0]

    def progress(lines: int) -> None:
        if lines // step > shown[0]:
            shown[0] = lines // step
            console.detail(
                f"{lines:>10,} lines ({lines / operations:4.0%}), {time.monotonic() - begun:5.1f} s"
            )

    mix = Mix(producers=settings.producers, partitions=settings.partitions)
    made = write_history(history_dir, operations, seed=settings.seed, mix=mix, progress=progress)
    seconds = time.monotonic() - begun
    console.detail(
        ", ".join(f"{f} {t} {n:,}" for (f, t), n in sorted(made.counts.items()))
        + f"; {made.log_records:,} records in the logs; {seconds:.1f} s (not measured)"
    )
    return made, seconds


def run_child(phase: str, paths: Sequence[Path]) -> PhaseResult:
    """Run one phase in a fresh Python process over `paths`; what it measured."""
    with tempfile.TemporaryDirectory(prefix="bench-checker-") as scratch:
        result = Path(scratch) / "phase.json"
        command = [sys.executable, "-m", "bench.checker.phase", phase, str(result)]
        subprocess.run([*command, *map(str, paths)], check=True)
        document: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    return PhaseResult.from_json(document)


def _timed(phase: str, made: Generated, when: str) -> PhaseResult:
    what = "floor: read and decode only" if phase == DECODE else "checker: read, final read, check"
    console.phase(f"{what}, {made.operations:,} operations{when}")
    result = run_child(phase, made.paths)
    console.detail(
        f"{result.seconds:.2f} s ({result.cpu_seconds:.2f} s of CPU), "
        f"peak {mib(result.peak_kib - result.baseline_kib):.0f} MiB "
        f"above the imports' {mib(result.baseline_kib):.0f} MiB"
    )
    if phase == CHECK and not result.verdict_ok:
        console.warn(f"the checker found {result.violations} violations in a clean history")
    return result


def mib(kib: int) -> float:
    """KiB in MiB."""
    return kib / 1024


def _row(
    made: Generated, partitions: int, checker: PhaseResult, floors: Sequence[PhaseResult]
) -> Measure:
    """One history's row: the checker's seconds against the mean of its floors."""
    floor_s = sum(f.seconds for f in floors) / len(floors)
    floor_cpu = sum(f.cpu_seconds for f in floors) / len(floors)
    floor_peak = max(f.peak_kib - f.baseline_kib for f in floors)
    return Measure(
        measure=MEASURE,
        label=f"history checker, {made.operations:,} operations",
        partitions=partitions,
        figure=checker.seconds,
        floor=floor_s,
        floor_phrase=FLOOR_PHRASE,
        note=f"target {TARGET_RATIO:g}x; CPU {_ratio(checker.cpu_seconds, floor_cpu)}; peak "
        f"{mib(checker.peak_kib - checker.baseline_kib):.0f} MiB (floor {mib(floor_peak):.0f} MiB)",
        extra={
            "operations": made.operations,
            "log_records": made.log_records,
            "checker_steps_seconds": checker.steps,
            "checker_peak_kib": checker.peak_kib - checker.baseline_kib,
            "checker_cpu_seconds": round(checker.cpu_seconds, 3),
            "floor_cpu_seconds": round(floor_cpu, 3),
            "floor_peak_kib": floor_peak,
            "baseline_kib": checker.baseline_kib,
            "floor_runs_seconds": [round(f.seconds, 3) for f in floors],
            "verdict_ok": checker.verdict_ok,
        },
    )


def _buckets(made: Generated) -> int:
    """How many buckets `rundir.checker.check_files` splits the history into."""
    return bucket_count(made.paths, BUCKET_BYTES)


def _ratio(figure: float, floor: float) -> str:
    """`figure / floor` as a ratio, or "n/a" for a floor of nothing."""
    return f"{figure / floor:.2f}x" if floor > 0 else "n/a"


def measure(settings: CheckerSettings) -> Report:
    """Generate both histories, time the floor and the checker over each; the report."""
    long, long_gen_s = _generate(settings, settings.operations, "long")
    short, short_gen_s = _generate(settings, settings.short_operations, "short")
    floors = [_timed(DECODE, long, ", before the checker")]
    checker = _timed(CHECK, long, "")
    floors.append(_timed(DECODE, long, ", after the checker"))
    short_floors = [_timed(DECODE, short, ", before the checker")]
    short_checker = _timed(CHECK, short, "")
    short_floors.append(_timed(DECODE, short, ", after the checker"))
    rows = (
        _row(long, settings.partitions, checker, floors),
        _row(short, settings.partitions, short_checker, short_floors),
    )
    long_peak = checker.peak_kib - checker.baseline_kib
    short_peak = short_checker.peak_kib - short_checker.baseline_kib
    growth = long_peak / short_peak if short_peak > 0 else float("nan")
    length = long.operations / short.operations
    notes = (
        f"peak memory above the imports: checker {mib(long_peak):.0f} MiB over "
        f"{long.operations:,} operations, {mib(short_peak):.0f} MiB over "
        f"{short.operations:,}: {growth:.2f}x the memory for {length:.2f}x the history "
        f"({settings.partitions} partitions, {settings.producers} producers in both); "
        f"judged in {_buckets(long)} and {_buckets(short)} buckets of partitions "
        f"(about {mib(BUCKET_BYTES // 1024):.0f} MiB of history each)",
        f"generation took {long_gen_s + short_gen_s:.1f} s and is not measured; every phase "
        "ran in a fresh child process",
    )
    details: dict[str, Any] = {
        "generation_seconds": round(long_gen_s + short_gen_s, 3),
        "phases": [asdict(p) for p in (*floors, checker, *short_floors, short_checker)],
        "memory_growth": round(growth, 3),
        "length_growth": round(length, 3),
        "counts": {f"{f} {t}": n for (f, t), n in sorted(long.counts.items())},
    }
    title = "History checker vs. a plain decode of the same history"
    return Report(CHECKER, title, rows, notes, details)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.checker`: settings from `argv`, the run, the results; exit code."""
    settings = parse_checker_settings(argv)
    return run_standalone(
        CHECKER,
        settings,
        lambda: measure(settings),
        out=settings.out,
        results_dir=settings.results_dir,
        generated=settings.out / "histories",
        keep_generated=settings.keep_histories,
    )
