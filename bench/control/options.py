"""The control-plane benchmarks' options: `FailoverOptions` (`python -m bench.failover`),
`SuiteOptions` (`python -m bench all`), and their command lines (`FAILOVER_COMMAND`,
`SUITE_COMMAND`), validated into the options once at the edge; the shared options are
`bench.shared.arguments`'. Pure values; main thread.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace

from bench.control.layout import ClusterLayout
from bench.produce.options import QUICK_PRODUCE, ProduceOptions
from bench.shared.arguments import Command
from bench.shared.settings import Settings

FAILOVER = "failover"
SUITE = "all"
#: Each run of a failover, broker failure or controlled shutdown at 10,000 partitions takes
#: about 15 s with the restart that follows it.
MAX_RUNS = 9


@dataclass(frozen=True, slots=True)
class FailoverOptions:
    """What only the failover benchmark asks for."""

    topics: int = 100
    rounds: int = 2
    floor_repetitions: int = 3
    write_floor: bool = True


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """What `make bench` measures: failover at each of `sizes` partitions, broker failure
    and controlled shutdown at `scenario_partitions`, topic creation of
    `creation_topics` x `creation_partitions`, and produce (`produce`, unless None). The
    failover at up to `LONG_MEASURE_PARTITIONS` partitions, broker failure and controlled
    shutdown run `runs` times each; their rows are the median run."""

    sizes: tuple[int, ...] = (1_000, 10_000)
    scenario_partitions: int = 10_000
    runs: int = 3
    topics: int = 100
    creation_topics: int = 1_000
    creation_partitions: int = 10
    floor_repetitions: int = 3
    profile: bool = True
    produce: ProduceOptions | None = field(default_factory=ProduceOptions)


#: A quick suite: every measure, small.
QUICK_SUITE = SuiteOptions(
    sizes=(1_000,),
    scenario_partitions=1_000,
    runs=1,
    creation_topics=100,
    floor_repetitions=1,
    produce=QUICK_PRODUCE,
)


def cluster_layout(settings: Settings[FailoverOptions]) -> ClusterLayout:
    """The failover benchmark's synthetic cluster (`ValueError` if it cannot exist)."""
    return ClusterLayout(settings.partitions, settings.options.topics, settings.brokers)


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


def _add_suite(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-produce", action="store_true", help="skip the produce measures")
    parser.add_argument("--no-profile", action="store_true", help="no py-spy flame graphs")
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs of each failover up to 10,000 partitions, of broker failure and of "
        f"controlled shutdown, the median reported (default {SuiteOptions().runs}, "
        f"{QUICK_SUITE.runs} with --quick)",
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


def _largest_size(args: argparse.Namespace, suite: SuiteOptions) -> int:
    """The suite's cluster size: its largest failover."""
    return max(suite.sizes)


FAILOVER_COMMAND = Command(
    FAILOVER,
    "Time controller failover for many partitions against a floor measured "
    "on the same ZooKeeper ensemble in the same run.",
    partitions=10_000,
    timeout_s=180.0,
    out_prefix="bench",
    add_options=_add_failover,
    options=_failover,
)
SUITE_COMMAND = Command(
    SUITE,
    "Every measure of the controller and the data plane at scale (failover at 1,000 "
    "and 10,000 partitions, broker failure, controlled shutdown, topic creation, "
    "produce), each against floors measured on the same ensemble in the same run, in "
    "one table. --partitions adds a failover size (e.g. 100000).",
    partitions=None,
    timeout_s=300.0,
    out_prefix="bench-all",
    add_options=_add_suite,
    options=_suite,
    partitions_help="a further failover size next to 1,000 and 10,000 (e.g. 100000)",
    quick_help="every measure at 1,000 partitions, produce 3 s",
    size=_largest_size,
)
