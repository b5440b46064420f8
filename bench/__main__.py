"""`python -m bench <benchmark> [options]`: the same runs as `python -m bench.failover` and
`python -m bench.produce`, and the suite (`all`), chosen by a subcommand. Main thread."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bench.benchmarks import BENCHMARKS, parse_settings
from bench.shared.runner import run_benchmark


def main(argv: Sequence[str] | None = None) -> int:
    """Settings from `argv` (the benchmark first), then the run; the exit code."""
    settings = parse_settings(argv)
    return run_benchmark(BENCHMARKS[settings.benchmark], settings)


if __name__ == "__main__":
    sys.exit(main())
