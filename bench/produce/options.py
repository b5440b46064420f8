"""The produce benchmark's options: `ProduceOptions` and their command line (`COMMAND`),
validated into the options once at the edge; the shared options are
`bench.shared.arguments`'. Pure values; main thread.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from bench.shared.arguments import Command
from rpc.limits import MAX_MESSAGE_BYTES

PRODUCE = "produce"
DEFAULT_DURATION_S = 10.0
QUICK_DURATION_S = 3.0
DEFAULT_FLOOR_S = 3.0
QUICK_FLOOR_S = 2.0
#: Produce requests (a batch per partition the broker leads) must fit gRPC's message cap
#: (`rpc.limits.MAX_MESSAGE_BYTES`) with room.
MAX_BATCH_BYTES = MAX_MESSAGE_BYTES // 2
MAX_PRODUCERS = 64


@dataclass(frozen=True, slots=True)
class ProduceOptions:
    """What only the produce benchmark asks for."""

    replication_factor: int = 3
    duration_s: float = 10.0
    producers: int = 4
    batch: int = 100
    value_bytes: int = 100
    floor_s: float = 3.0
    warmup_calls: int = 500
    produce_timeout_ms: int = 5000
    topic: str = "bench-produce"


#: A quick produce run: 3 s per acks setting, 2 s per floor.
QUICK_PRODUCE = ProduceOptions(duration_s=QUICK_DURATION_S, floor_s=QUICK_FLOOR_S)


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
    per_request = -(-args.partitions // args.brokers)  # a broker's share of the leaders
    if per_request * args.batch * (args.value_bytes + 16) > MAX_BATCH_BYTES:
        raise ValueError(
            "--batch x --value-bytes x partitions per broker must stay below "
            f"{MAX_BATCH_BYTES:,} bytes"
        )
    return ProduceOptions(
        replication_factor=args.replication_factor,
        duration_s=duration,
        producers=args.producers,
        batch=args.batch,
        value_bytes=args.value_bytes,
        floor_s=floor_s,
    )


COMMAND = Command(
    PRODUCE,
    "Measure acks=all and acks=1 produce throughput on broker processes "
    "against the gRPC round-trip floor (Metadata RPCs) measured in the same run.",
    partitions=3,
    timeout_s=120.0,
    out_prefix="bench-produce",
    add_options=_add_produce,
    options=_produce,
    quick_help=f"a fast check: {QUICK_DURATION_S:g} s per acks setting",
)
