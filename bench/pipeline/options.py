"""The pipeline benchmark's settings (`PipelineSettings`) and its command line, parsed once
at the edge (`parse_pipeline_settings`); `--quick`, `--out` and `--results` are the shared
options of `bench.shared.arguments`. Pure values; main thread.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.shared.arguments import add_output, add_quick, output_dir

PIPELINE = "pipeline"
PIPELINE_EVENTS = 1_000_000
QUICK_PIPELINE_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """The pipeline benchmark (`bench.pipeline`): no ZooKeeper or brokers, only synthetic
    run directories and one Spark session. `events` is the records to generate (event-log
    lines, history lines, fault phases, snapshots); `out` holds the runs and `bench.json`."""

    events: int
    out: Path
    results_dir: Path
    master: str
    seed: int = 0
    keep_runs: bool = False


def parse_pipeline_settings(argv: Sequence[str] | None) -> PipelineSettings:
    """`python -m bench.pipeline [--events N] [--quick] [--seed N] [--master URL] [--out DIR]
    [--results DIR] [--keep-runs]`; bad values exit with code 2."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.pipeline",
        description="Time the PySpark report's Spark job over synthetic chaos runs against a "
        "plain Spark read and group-by of the same files, in the same session.",
    )
    parser.add_argument(
        "--events",
        type=int,
        default=None,
        help=f"records to generate (default {PIPELINE_EVENTS:,}; {QUICK_PIPELINE_EVENTS:,} "
        "with --quick)",
    )
    add_quick(parser, "a fast check")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    add_output(parser, "bench-pipeline")
    parser.add_argument(
        "--keep-runs", action="store_true", help="keep the generated runs (deleted by default)"
    )
    args = parser.parse_args(argv)
    events = args.events or (QUICK_PIPELINE_EVENTS if args.quick else PIPELINE_EVENTS)
    if events < 1_000:
        parser.error("--events must be at least 1000")
    out = output_dir(args.out, "bench-pipeline")
    if (out / "runs").exists():
        parser.error(f"{out} already holds runs; choose another --out")
    return PipelineSettings(
        events=events,
        out=out.resolve(),
        results_dir=args.results.resolve(),
        master=args.master,
        seed=args.seed,
        keep_runs=args.keep_runs,
    )
