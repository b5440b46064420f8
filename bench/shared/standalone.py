"""The run of a benchmark that starts no cluster (`bench.pipeline`, `bench.checker`):
measure into a report, delete what it generated unless kept, then publish the table,
`bench.json` and the JSON lines (`bench.shared.runner.publish`). Main thread.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.shared.machine import environment, utc_now
from bench.shared.report import Report
from bench.shared.runner import publish


def run_standalone(
    benchmark: str,
    settings: Any,
    measure: Callable[[], Report],
    *,
    out: Path,
    results_dir: Path,
    generated: Path,
    keep_generated: bool,
) -> int:
    """Run `measure` with `out` created; `generated` (inside `out`) is deleted afterwards,
    even when the measure fails, unless `keep_generated`. `settings` is the benchmark's
    settings dataclass, written to `bench.json` as strings. The exit code: 0."""
    load_at_start = os.getloadavg()
    out.mkdir(parents=True, exist_ok=True)
    try:
        report = measure()
    finally:
        if not keep_generated:
            shutil.rmtree(generated, ignore_errors=True)
    env = environment(load_at_start, utc_now())
    plain = {"benchmark": benchmark, **{k: str(v) for k, v in asdict(settings).items()}}
    publish(report, plain, env, out, results_dir)
    return 0
