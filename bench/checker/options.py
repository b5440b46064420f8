"""The checker benchmark's settings (`CheckerSettings`) and its command line, parsed once
at the edge (`parse_checker_settings`); `--quick`, `--out` and `--results` are the shared
options of `bench.shared.arguments`. Pure values; main thread.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.shared.arguments import add_output, add_quick, output_dir

CHECKER = "checker"
#: The long history, and the shorter one that shows memory does not grow with length.
CHECKER_OPERATIONS = 1_000_000
SHORT_OPERATIONS = 250_000
QUICK_OPERATIONS = 100_000
QUICK_SHORT_OPERATIONS = 25_000
PARTITIONS = 64
PRODUCERS = 4
#: The smallest history either size may be.
MIN_OPERATIONS = 10_000


@dataclass(frozen=True, slots=True)
class CheckerSettings:
    """The checker benchmark (`bench.checker`): no cluster, two generated histories of
    `operations` and `short_operations` lines over `partitions` partitions written by
    `producers` producers, a consumer and the final read; `out` holds the histories and
    `bench.json`."""

    operations: int
    short_operations: int
    partitions: int
    producers: int
    out: Path
    results_dir: Path
    seed: int = 0
    keep_histories: bool = False


def parse_checker_settings(argv: Sequence[str] | None) -> CheckerSettings:
    """`python -m bench.checker [--operations N] [--short-operations N] [--quick]
    [--partitions N] [--producers N] [--seed N] [--out DIR] [--results DIR]
    [--keep-histories]`; bad values exit with code 2."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.checker",
        description="Time the history checker over a generated workload history against a "
        "plain decode of the same lines, and measure the peak memory of each.",
    )
    parser.add_argument(
        "--operations",
        type=int,
        default=None,
        help=f"history lines (invokes and completions) of the long history (default "
        f"{CHECKER_OPERATIONS:,}; {QUICK_OPERATIONS:,} with --quick)",
    )
    parser.add_argument(
        "--short-operations",
        type=int,
        default=None,
        help=f"of the short history, for memory (default {SHORT_OPERATIONS:,}; "
        f"{QUICK_SHORT_OPERATIONS:,} with --quick)",
    )
    add_quick(parser, "a fast check")
    parser.add_argument("--partitions", type=int, default=PARTITIONS, help=f"default {PARTITIONS}")
    parser.add_argument("--producers", type=int, default=PRODUCERS, help=f"default {PRODUCERS}")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    add_output(parser, "bench-checker")
    parser.add_argument(
        "--keep-histories",
        action="store_true",
        help="keep the generated histories (deleted by default)",
    )
    args = parser.parse_args(argv)
    operations = args.operations or (QUICK_OPERATIONS if args.quick else CHECKER_OPERATIONS)
    short = args.short_operations or (QUICK_SHORT_OPERATIONS if args.quick else SHORT_OPERATIONS)
    if min(operations, short) < MIN_OPERATIONS:
        parser.error(f"--operations and --short-operations must be at least {MIN_OPERATIONS:,}")
    if short >= operations:
        parser.error("--short-operations must be fewer than --operations")
    if not 1 <= args.partitions <= MIN_OPERATIONS // 10:
        parser.error(f"--partitions must be between 1 and {MIN_OPERATIONS // 10:,}")
    if args.producers < 1:
        parser.error("--producers must be at least 1")
    out = output_dir(args.out, "bench-checker")
    if (out / "histories").exists():
        parser.error(f"{out} already holds histories; choose another --out")
    return CheckerSettings(
        operations=operations,
        short_operations=short,
        partitions=args.partitions,
        producers=args.producers,
        out=out.resolve(),
        results_dir=args.results.resolve(),
        seed=args.seed,
        keep_histories=args.keep_histories,
    )
