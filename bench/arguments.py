"""The benchmarks' command line, turned once into `Settings`.

    python -m bench.failover [options]     python -m bench failover [options]
    python -m bench.produce [options]      python -m bench produce [options]

Options every benchmark has: `--partitions`, `--brokers`, `--session-timeout-ms`,
`--timeout`, `--out`, `--results`; each benchmark adds its own (`--topics`, `--rounds`...
for failover; `--duration`, `--producers`, `--quick`... for produce). A bad value ends the
process with a usage line, `<prog>: error: <what is wrong>` and exit code 2 (argparse).
Main thread.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.layout import ClusterLayout
from bench.settings import (
    BENCHMARKS,
    DEFAULT_RESULTS_DIR,
    FAILOVER,
    PRODUCE,
    REPO_ROOT,
    SUITE,
    FailoverOptions,
    PipelineSettings,
    ProduceOptions,
    Settings,
    SuiteOptions,
)
from rpc.limits import MAX_MESSAGE_BYTES
from security.tls_files import DEFAULT_TLS_DIR, tls_dir_choice

#: The ensemble's session-timeout bounds (`minSessionTimeout`/`maxSessionTimeout`).
SESSION_TIMEOUT_RANGE_MS = (1000, 60000)
DEFAULT_DURATION_S = 10.0
QUICK_DURATION_S = 3.0
DEFAULT_FLOOR_S = 3.0
QUICK_FLOOR_S = 2.0
#: Produce requests must fit gRPC's message cap (`rpc.limits.MAX_MESSAGE_BYTES`) with room.
MAX_BATCH_BYTES = MAX_MESSAGE_BYTES // 2
MAX_PRODUCERS = 64
#: Each run of a failover, broker failure or controlled shutdown at 10,000 partitions takes
#: about 15 s with the restart that follows it.
MAX_RUNS = 9
_SUITE_PREFIX = "bench-all"


@dataclass(frozen=True, slots=True)
class _Defaults:
    """What differs between the benchmarks in their shared options."""

    description: str
    partitions: int
    timeout_s: float
    out_prefix: str


_DEFAULTS = {
    FAILOVER: _Defaults(
        "Time controller failover for many partitions against a floor measured "
        "on the same ZooKeeper ensemble in the same run.",
        partitions=10_000,
        timeout_s=180.0,
        out_prefix="bench",
    ),
    PRODUCE: _Defaults(
        "Measure acks=all and acks=1 produce throughput on broker processes "
        "against the gRPC round-trip floor (Metadata RPCs) measured in the same run.",
        partitions=3,
        timeout_s=120.0,
        out_prefix="bench-produce",
    ),
    SUITE: _Defaults(
        "Every measure of the controller and the data plane at scale (failover at 1,000 "
        "and 10,000 partitions, broker failure, controlled shutdown, topic creation, "
        "produce), each against floors measured on the same ensemble in the same run, in "
        "one table. --partitions adds a failover size (e.g. 100000).",
        partitions=10_000,
        timeout_s=300.0,
        out_prefix=_SUITE_PREFIX,
    ),
}
#: A quick suite: every measure, small.
QUICK_SUITE = SuiteOptions(
    sizes=(1_000,),
    scenario_partitions=1_000,
    runs=1,
    creation_topics=100,
    floor_repetitions=1,
    produce=ProduceOptions(duration_s=QUICK_DURATION_S, floor_s=QUICK_FLOOR_S),
)


def _add_shared(parser: argparse.ArgumentParser, defaults: _Defaults) -> None:
    if defaults.out_prefix == _SUITE_PREFIX:
        parser.add_argument(
            "--partitions",
            type=int,
            default=None,
            help="a further failover size next to 1,000 and 10,000 (e.g. 100000)",
        )
    else:
        parser.add_argument(
            "--partitions",
            type=int,
            default=defaults.partitions,
            help=f"default {defaults.partitions}",
        )
    parser.add_argument("--brokers", type=int, default=3, help="broker processes (default 3)")
    parser.add_argument(
        "--session-timeout-ms",
        type=int,
        default=6000,
        help="brokers' ZooKeeper session timeout (default 6000)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=defaults.timeout_s,
        help=f"deadline in seconds for each wait (default {defaults.timeout_s:g})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output directory (default runs/{defaults.out_prefix}-<UTC time>)",
    )
    parser.add_argument(
        "--tls-dir",
        default=os.environ.get("TLS_DIR"),
        help="brokers and benchmark speak mutual TLS with the certificates in this directory "
        "(TLS_DIR; default .secrets/tls when it exists; 'off': plaintext)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS_DIR,
        help="where latest.jsonl and its dated copy go (default bench/results)",
    )


def _add_failover(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topics", type=int, default=100, help="default 100")
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="failovers to measure: the first election, then one per kill -9 (default 2)",
    )
    parser.add_argument(
        "--floor-repetitions", type=int, default=3, help="floor measurements, best kept"
    )
    parser.add_argument("--no-write-floor", action="store_true", help="skip the fenced-write floor")


def _add_produce(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--replication-factor", type=int, default=3, help="default 3")
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help=f"seconds of produce per acks setting (default {DEFAULT_DURATION_S:g}, "
        f"{QUICK_DURATION_S:g} with --quick)",
    )
    parser.add_argument("--producers", type=int, default=4, help="producer threads (default 4)")
    parser.add_argument("--batch", type=int, default=100, help="records per request (default 100)")
    parser.add_argument(
        "--value-bytes", type=int, default=100, help="bytes per record value (default 100)"
    )
    parser.add_argument(
        "--floor-seconds",
        type=float,
        default=None,
        help=f"seconds per floor measurement (default {DEFAULT_FLOOR_S:g}, "
        f"{QUICK_FLOOR_S:g} with --quick)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a fast check: {QUICK_DURATION_S:g} s per acks setting",
    )


def _add_suite(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-produce", action="store_true", help="skip the produce measures")
    parser.add_argument("--no-profile", action="store_true", help="no py-spy flame graphs")
    parser.add_argument(
        "--quick", action="store_true", help="every measure at 1,000 partitions, produce 3 s"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs of each failover up to 10,000 partitions, of broker failure and of "
        f"controlled shutdown, the median reported (default {SuiteOptions().runs}, "
        f"{QUICK_SUITE.runs} with --quick)",
    )


def _fill(parser: argparse.ArgumentParser, benchmark: str) -> argparse.ArgumentParser:
    _add_shared(parser, _DEFAULTS[benchmark])
    {FAILOVER: _add_failover, PRODUCE: _add_produce, SUITE: _add_suite}[benchmark](parser)
    parser.set_defaults(benchmark=benchmark)
    return parser


def build_parser(benchmark: str) -> argparse.ArgumentParser:
    """The command line of one benchmark, as `python -m bench.<benchmark>`."""
    return _fill(
        argparse.ArgumentParser(
            prog=f"python -m bench.{benchmark}", description=_DEFAULTS[benchmark].description
        ),
        benchmark,
    )


def build_main_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """`python -m bench <benchmark> ...`, and each benchmark's subparser by name."""
    parser = argparse.ArgumentParser(
        prog="python -m bench", description="Benchmarks against floors measured in the same run."
    )
    commands = parser.add_subparsers(dest="command", metavar="benchmark", required=True)
    subparsers = {
        name: _fill(
            commands.add_parser(
                name, help=_DEFAULTS[name].description, description=_DEFAULTS[name].description
            ),
            name,
        )
        for name in BENCHMARKS
    }
    return parser, subparsers


def parse_settings(argv: Sequence[str] | None, benchmark: str | None = None) -> Settings:
    """Settings from `argv`: one benchmark's options when `benchmark` is given, else the
    benchmark as the first argument. Bad values exit with code 2 and say what is wrong."""
    if benchmark is not None:
        parser = build_parser(benchmark)
        args = parser.parse_args(argv)
    else:
        main, subparsers = build_main_parser()
        args = main.parse_args(argv)
        parser = subparsers[args.benchmark]
    try:
        return _settings(args)
    except ValueError as exc:
        parser.error(str(exc))


def _settings(args: argparse.Namespace) -> Settings:
    """Validate `args` into `Settings`; `ValueError` names the first bad value."""
    defaults = _DEFAULTS[args.benchmark]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out or REPO_ROOT / "runs" / f"{defaults.out_prefix}-{stamp}"
    if (out / "events").exists() or (out / "bench.json").exists():
        raise ValueError(f"{out} already holds a run; choose another --out")
    if args.brokers < 1:
        raise ValueError("--brokers must be at least 1")
    if args.benchmark == SUITE:
        suite = _suite(args)
        partitions = max(suite.sizes)
    else:
        partitions = args.partitions
    if partitions < 1:
        raise ValueError("--partitions must be at least 1")
    low, high = SESSION_TIMEOUT_RANGE_MS
    if not low <= args.session_timeout_ms <= high:
        raise ValueError(f"--session-timeout-ms must be within {low}..{high}")
    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    options: FailoverOptions | ProduceOptions | SuiteOptions
    if args.benchmark == SUITE:
        options = suite
    else:
        options = _failover(args) if args.benchmark == FAILOVER else _produce(args)
    return Settings(
        benchmark=args.benchmark,
        partitions=partitions,
        brokers=args.brokers,
        session_timeout_ms=args.session_timeout_ms,
        timeout_s=args.timeout,
        out=out.resolve(),  # the ZooKeeper JVMs run in their own directories
        results_dir=args.results.resolve(),
        options=options,
        tls_dir=_tls_dir(args.tls_dir),
    )


def _suite(args: argparse.Namespace) -> SuiteOptions:
    suite = QUICK_SUITE if args.quick else SuiteOptions()
    if args.brokers < 3:
        raise ValueError("the suite needs at least 3 brokers (replication factor 3)")
    if args.partitions is not None:
        if args.partitions < suite.topics:
            raise ValueError(f"--partitions must be at least {suite.topics}")
        suite = replace(suite, sizes=tuple(sorted({*suite.sizes, args.partitions})))
    if args.no_produce:
        suite = replace(suite, produce=None)
    if args.runs is not None:
        if not 1 <= args.runs <= MAX_RUNS:
            raise ValueError(f"--runs must be in [1, {MAX_RUNS}]")
        suite = replace(suite, runs=args.runs)
    return replace(suite, profile=not args.no_profile)


def _tls_dir(raw: str | None) -> Path | None:
    found = tls_dir_choice(raw, REPO_ROOT / DEFAULT_TLS_DIR)
    if found is not None and not found.is_dir():
        raise ValueError(f"--tls-dir {found} is not a directory (run `make setup`)")
    return found.resolve() if found is not None else None


def _failover(args: argparse.Namespace) -> FailoverOptions:
    if args.rounds < 1:
        raise ValueError("--rounds must be at least 1")
    if args.rounds > 1 and args.brokers < 2:
        raise ValueError("rounds after a kill need at least 2 brokers")
    if args.floor_repetitions < 1:
        raise ValueError("--floor-repetitions must be at least 1")
    ClusterLayout(args.partitions, args.topics, args.brokers)  # raises ValueError
    return FailoverOptions(
        topics=args.topics,
        rounds=args.rounds,
        floor_repetitions=args.floor_repetitions,
        write_floor=not args.no_write_floor,
    )


def _produce(args: argparse.Namespace) -> ProduceOptions:
    duration = args.duration
    if duration is None:
        duration = QUICK_DURATION_S if args.quick else DEFAULT_DURATION_S
    floor_s = args.floor_seconds
    if floor_s is None:
        floor_s = QUICK_FLOOR_S if args.quick else DEFAULT_FLOOR_S
    if not 1 <= args.replication_factor <= args.brokers:
        raise ValueError("--replication-factor must be within 1..--brokers")
    if not 0 < duration <= 3600:
        raise ValueError("--duration must be within (0, 3600] seconds")
    if not 0 < floor_s <= 600:
        raise ValueError("--floor-seconds must be within (0, 600] seconds")
    if not 1 <= args.producers <= MAX_PRODUCERS:
        raise ValueError(f"--producers must be within 1..{MAX_PRODUCERS}")
    if args.batch < 1:
        raise ValueError("--batch must be at least 1")
    if args.value_bytes < 0:
        raise ValueError("--value-bytes must not be negative")
    if args.batch * (args.value_bytes + 16) > MAX_BATCH_BYTES:
        raise ValueError(f"--batch x --value-bytes must stay below {MAX_BATCH_BYTES:,} bytes")
    return ProduceOptions(
        replication_factor=args.replication_factor,
        duration_s=duration,
        producers=args.producers,
        batch=args.batch,
        value_bytes=args.value_bytes,
        floor_s=floor_s,
    )


PIPELINE_EVENTS = 1_000_000
QUICK_PIPELINE_EVENTS = 100_000


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
    parser.add_argument("--quick", action="store_true", help="a fast check")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default runs/bench-pipeline-<UTC time>)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS_DIR,
        help="where latest.jsonl and its dated copy go (default bench/results)",
    )
    parser.add_argument(
        "--keep-runs", action="store_true", help="keep the generated runs (deleted by default)"
    )
    args = parser.parse_args(argv)
    events = args.events or (QUICK_PIPELINE_EVENTS if args.quick else PIPELINE_EVENTS)
    if events < 1_000:
        parser.error("--events must be at least 1000")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = args.out or REPO_ROOT / "runs" / f"bench-pipeline-{stamp}"
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
