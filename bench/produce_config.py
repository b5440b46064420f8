"""`ProduceConfig`: the settings of one produce-throughput benchmark, from the command line.

Bad values end the process with a usage message and exit code 2 (argparse). Main thread.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.config import REPO_ROOT

DEFAULT_DURATION_S = 10.0
QUICK_DURATION_S = 3.0
DEFAULT_FLOOR_S = 3.0
QUICK_FLOOR_S = 2.0
#: Produce requests must fit gRPC's message cap (`rpc.wire.MAX_MESSAGE_BYTES`) with room.
MAX_BATCH_BYTES = 64 * 1024 * 1024
MAX_PRODUCERS = 64


@dataclass(frozen=True, slots=True)
class ProduceConfig:
    """One run's settings."""

    brokers: int
    partitions: int
    replication_factor: int
    duration_s: float
    producers: int
    batch: int
    value_bytes: int
    out: Path
    floor_s: float
    warmup_calls: int = 500
    produce_timeout_ms: int = 5000
    session_timeout_ms: int = 6000
    timeout_s: float = 120.0
    topic: str = "bench-produce"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.produce",
        description="Measure acks=all and acks=1 produce throughput on broker processes "
        "against the gRPC round-trip floor (Metadata RPCs) measured in the same run.",
    )
    parser.add_argument("--brokers", type=int, default=3, help="broker processes (default 3)")
    parser.add_argument("--partitions", type=int, default=3, help="default 3")
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
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default runs/bench-produce-<UTC time>)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="deadline in seconds for each wait (default 120)",
    )
    return parser


def parse_produce_config(argv: Sequence[str] | None) -> ProduceConfig:
    """Build and validate the settings; bad values exit with code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = args.out or REPO_ROOT / "runs" / time.strftime(
        "bench-produce-%Y%m%d-%H%M%S", time.gmtime()
    )
    if (out / "events").exists() or (out / "bench.json").exists():
        parser.error(f"{out} already holds a run; choose another --out")
    duration = args.duration
    if duration is None:
        duration = QUICK_DURATION_S if args.quick else DEFAULT_DURATION_S
    floor_s = args.floor_seconds
    if floor_s is None:
        floor_s = QUICK_FLOOR_S if args.quick else DEFAULT_FLOOR_S
    if args.brokers < 1:
        parser.error("--brokers must be at least 1")
    if args.partitions < 1:
        parser.error("--partitions must be at least 1")
    if not 1 <= args.replication_factor <= args.brokers:
        parser.error("--replication-factor must be within 1..--brokers")
    if not 0 < duration <= 3600:
        parser.error("--duration must be within (0, 3600] seconds")
    if not 0 < floor_s <= 600:
        parser.error("--floor-seconds must be within (0, 600] seconds")
    if not 1 <= args.producers <= MAX_PRODUCERS:
        parser.error(f"--producers must be within 1..{MAX_PRODUCERS}")
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    if args.value_bytes < 0:
        parser.error("--value-bytes must not be negative")
    if args.batch * (args.value_bytes + 16) > MAX_BATCH_BYTES:
        parser.error(f"--batch x --value-bytes must stay below {MAX_BATCH_BYTES:,} bytes")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    return ProduceConfig(
        brokers=args.brokers,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        duration_s=duration,
        producers=args.producers,
        batch=args.batch,
        value_bytes=args.value_bytes,
        out=out.resolve(),  # the ZooKeeper JVMs run in their own directories
        floor_s=floor_s,
        timeout_s=args.timeout,
    )
