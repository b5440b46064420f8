"""Every cluster benchmark by name, as `python -m bench <benchmark>` chooses them: failover
and the suite (`bench.control`), produce (`bench.produce`). Main thread."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.control import failover, suite
from bench.produce import throughput
from bench.shared.arguments import parse_command, parse_subcommand
from bench.shared.runner import Benchmark
from bench.shared.settings import Settings

BENCHMARKS: dict[str, Benchmark[Any]] = {
    b.name: b for b in (failover.BENCHMARK, throughput.BENCHMARK, suite.BENCHMARK)
}


def parse_settings(argv: Sequence[str] | None, benchmark: str | None = None) -> Settings[Any]:
    """Settings from `argv`: one benchmark's options when `benchmark` is given (as
    `python -m bench.<benchmark>`), else the benchmark as the first argument. Bad values
    exit with code 2 and say what is wrong."""
    if benchmark is not None:
        return parse_command(BENCHMARKS[benchmark].command, argv)
    return parse_subcommand({name: b.command for name, b in BENCHMARKS.items()}, argv)
