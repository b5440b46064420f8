"""`testbed`: the command line of the testbed.

    testbed cluster [--zk HOSTS] [--wait-brokers N] [--timeout S]

Exit codes: 0 success, 1 the cluster could not be reached or did not become ready,
2 bad arguments. Main thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from kazoo.handlers.threading import KazooTimeoutError

from testbed.cluster_view import read_cluster, render

DEFAULT_ZK = "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="testbed", description="Drive and inspect the testbed.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cluster = sub.add_parser(
        "cluster",
        help="show ZooKeeper servers, brokers and their epochs, the controller",
        description="Show each ZooKeeper server's mode, the registered brokers with their "
        "broker epochs, the controller and the controller epoch.",
    )
    cluster.add_argument(
        "--zk",
        default=os.environ.get("ZK_CONNECT", DEFAULT_ZK),
        help=f"ZooKeeper connect string (ZK_CONNECT, default {DEFAULT_ZK})",
    )
    cluster.add_argument(
        "--wait-brokers",
        type=int,
        default=0,
        metavar="N",
        help="first wait until N brokers are registered and a controller is elected",
    )
    cluster.add_argument(
        "--timeout", type=_positive, default=60.0, help="seconds to wait (default 60)"
    )
    return parser


def _cluster(args: argparse.Namespace) -> int:
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            view = read_cluster(args.zk, timeout_s=min(10.0, args.timeout))
        except KazooTimeoutError:
            print(f"testbed: cannot reach ZooKeeper at {args.zk}", file=sys.stderr)
            return 1
        ready = len(view.brokers) >= args.wait_brokers and (
            args.wait_brokers == 0 or view.controller_id is not None
        )
        if ready or time.monotonic() >= deadline:
            print(render(view))
            if not ready:
                print(
                    f"\ntestbed: not ready after {args.timeout:g}s: {len(view.brokers)} of "
                    f"{args.wait_brokers} brokers registered",
                    file=sys.stderr,
                )
                return 1
            return 0
        time.sleep(0.5)  # polling the cluster until it is ready


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    if args.command == "cluster":
        return _cluster(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
