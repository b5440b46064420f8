"""The workload's command line: parse and check the arguments, make sure the topic exists
with enough partitions, run the workload (`chaos.client.workload_run`) until its duration ends or
SIGINT/SIGTERM, then print the checker's verdict.

    python -m chaos.workload --brokers 127.0.0.1:9091,127.0.0.1:9092 \\
        [--address-map broker1:9092=127.0.0.1:9091,...] --topic T --partitions N \\
        [--duration 30] [--producers 2] [--rate 50] [--batch 1] [--acks -1] \\
        [--max-sends N] [--timeout-ms 5000] [--final-read-timeout 60] \\
        --history-dir runs/<id>/history

Exit codes: 0 the verdict is OK, 1 it is not (or the cluster could not be reached),
2 bad arguments.

Threads: the main thread parses, installs the signal handlers, prints progress lines to
stderr and the verdict to stdout; the run's own threads are described in
`chaos.client.workload_run`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from chaos.client.workload_run import WorkloadConfig, judge, run_workload
from client import Client, ClientError, grpc_connect, parse_address_map, parse_addresses
from rpc.errors import Errors
from rundir.history import history_files
from security.tls_files import TlsMaterialError, client_identity, tls_dir_choice

__all__ = ["build_parser", "main"]


def _typed(convert: Callable[[str], object]) -> Callable[[str], object]:
    what = "an integer" if convert is int else "a number"

    def parse(text: str) -> object:
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None

    return parse


def _addresses(text: str) -> list[str]:
    try:
        return parse_addresses(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _address_map(text: str) -> dict[str, str]:
    try:
        return parse_address_map(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: Flag, converter, metavar, default, help. Flags whose default is `_REQUIRED` must be given.
_REQUIRED = object()
_OPTIONS: tuple[tuple[str, Callable[[str], object], str, object, str], ...] = (
    ("--brokers", _addresses, "HOST:PORT,...", _REQUIRED, "bootstrap addresses (ClientApi)"),
    ("--address-map", _address_map, "ADV=REACH,...", {}, "advertised host:port -> reachable"),
    ("--topic", str, "T", _REQUIRED, "the topic (must exist)"),
    ("--partitions", int, "N", _REQUIRED, "partitions 0..N-1 to write and read"),
    ("--duration", float, "SECONDS", 30.0, "seconds of load (default 30)"),
    ("--producers", int, "N", 2, "producer threads (default 2)"),
    ("--rate", float, "PER_S", 50.0, "values per second per producer (default 50)"),
    ("--batch", int, "N", 1, "values per Produce request (default 1)"),
    ("--max-sends", int, "N", None, "stop each producer after N values (default: no limit)"),
    ("--acks", int, "ACKS", -1, "-1 (all: judged for loss) or 1 (default -1)"),
    ("--timeout-ms", int, "MS", 5000, "deadline of an operation with retries (default 5000)"),
    ("--final-read-timeout", float, "SECONDS", 60.0, "seconds for the final read (default 60)"),
    ("--history-dir", Path, "DIR", _REQUIRED, "a new or empty directory for the history files"),
    (
        "--tls-dir",
        str,
        "DIR",
        None,
        "mutual TLS with the client certificate in DIR (TLS_DIR; default .secrets/tls when "
        "it exists; 'off': plaintext)",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """The workload's argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos.workload",
        description="Produce unique values and consume them, record the history, then check "
        "it: no acknowledged write lost, no duplicates, order kept.",
    )
    for flag, convert, metavar, default, help_text in _OPTIONS:
        kind = _typed(convert) if convert in (int, float) else convert
        required = default is _REQUIRED
        parser.add_argument(
            flag,
            type=kind,
            metavar=metavar,
            required=required,
            default=None if required else default,
            help=help_text,
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (main thread)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = WorkloadConfig(
            topic=args.topic,
            partitions=args.partitions,
            duration_s=args.duration,
            producers=args.producers,
            rate_per_s=args.rate,
            batch=args.batch,
            acks=args.acks,
            timeout_ms=args.timeout_ms,
            final_read_timeout_s=args.final_read_timeout,
            max_sends=args.max_sends,
        )
    except ValueError as exc:
        parser.error(str(exc))
    if args.history_dir.exists() and not args.history_dir.is_dir():
        parser.error(f"--history-dir {args.history_dir} is not a directory")
    if history_files(args.history_dir):
        parser.error(f"--history-dir {args.history_dir} already holds a history; use a new one")
    try:
        tls = client_identity(tls_dir_choice(args.tls_dir or os.environ.get("TLS_DIR")))
    except TlsMaterialError as exc:
        parser.error(str(exc))
    cluster = Client(
        args.brokers,
        topics=(config.topic,),
        address_map=args.address_map,
        timeout_s=config.timeout_ms / 1000,
        connect=grpc_connect(timeout_s=config.timeout_ms / 1000, tls=tls),
    )
    try:
        return _run(cluster, config, args.history_dir)
    finally:
        cluster.close()


def _run(cluster: Client, config: WorkloadConfig, history_dir: Path) -> int:
    try:
        metadata = cluster.refresh()
    except ClientError as exc:
        print(f"Error: cannot reach the cluster: {exc}", file=sys.stderr)
        return 1
    topic = next((t for t in metadata.topics if t.name == config.topic), None)
    if topic is None or topic.error is not Errors.NONE:
        print(f"Error: topic {config.topic} does not exist", file=sys.stderr)
        return 1
    if config.partitions > len(topic.partitions):
        print(
            f"Error: topic {config.topic} has {len(topic.partitions)} partitions, "
            f"fewer than --partitions {config.partitions}",
            file=sys.stderr,
        )
        return 1
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = run_workload(
            cluster, config, history_dir, stop, lambda p: print(p.line(), file=sys.stderr)
        )
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    for error in result.thread_errors:
        print(f"Error: thread died: {error}", file=sys.stderr)
    verdict = judge(result)
    print(verdict.report())
    return 0 if verdict.ok and not result.thread_errors else 1


if __name__ == "__main__":
    sys.exit(main())
