"""`BenchConfig`: the settings of one failover benchmark, built once from the command line.

Bad values end the process with a usage message and exit code 2 (argparse). Main thread.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.layout import ClusterLayout

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The test ensemble's session-timeout bounds (`minSessionTimeout`/`maxSessionTimeout`).
SESSION_TIMEOUT_RANGE_MS = (1000, 60000)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """One run's settings, built from the command line."""

    partitions: int
    topics: int
    brokers: int
    session_timeout_ms: int
    rounds: int
    out: Path
    floor_repetitions: int = 3
    write_floor: bool = True
    timeout_s: float = 180.0

    @property
    def layout(self) -> ClusterLayout:
        """The cluster to load into ZooKeeper."""
        return ClusterLayout(self.partitions, self.topics, self.brokers)


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.failover",
        description="Time controller failover for many partitions against a floor measured "
        "on the same ZooKeeper ensemble in the same run.",
    )
    parser.add_argument("--partitions", type=int, default=10_000, help="default 10000")
    parser.add_argument("--topics", type=int, default=100, help="default 100")
    parser.add_argument("--brokers", type=int, default=3, help="default 3")
    parser.add_argument(
        "--session-timeout-ms", type=int, default=6000, help="brokers' ZooKeeper session timeout"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="failovers to measure: the first election, then one per kill -9 (default 2)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output directory (default runs/bench-<UTC time>)"
    )
    parser.add_argument(
        "--floor-repetitions", type=int, default=3, help="floor measurements, best kept"
    )
    parser.add_argument("--no-write-floor", action="store_true", help="skip the fenced-write floor")
    parser.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="deadline in seconds for each wait (default 180)",
    )
    return parser


def parse_config(argv: Sequence[str] | None) -> BenchConfig:
    """Build and validate the settings; bad values exit with code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = args.out or REPO_ROOT / "runs" / time.strftime("bench-%Y%m%d-%H%M%S", time.gmtime())
    if (out / "events").exists() or (out / "bench.json").exists():
        parser.error(f"{out} already holds a run; choose another --out")
    low, high = SESSION_TIMEOUT_RANGE_MS
    if not low <= args.session_timeout_ms <= high:
        parser.error(f"--session-timeout-ms must be within {low}..{high}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.rounds > 1 and args.brokers < 2:
        parser.error("rounds after a kill need at least 2 brokers")
    if args.floor_repetitions < 1:
        parser.error("--floor-repetitions must be at least 1")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    config = BenchConfig(
        partitions=args.partitions,
        topics=args.topics,
        brokers=args.brokers,
        session_timeout_ms=args.session_timeout_ms,
        rounds=args.rounds,
        out=out.resolve(),  # the ZooKeeper JVMs run in their own directories
        floor_repetitions=args.floor_repetitions,
        write_floor=not args.no_write_floor,
        timeout_s=args.timeout,
    )
    try:
        _ = config.layout
    except ValueError as exc:
        parser.error(str(exc))
    return config
