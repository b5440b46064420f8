"""`python -m security init --dir .secrets`: make whatever secret of the cluster is missing or
stale (idempotent; `make setup` runs it). Main thread.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from security.tls import DEFAULT_BROKERS, ensure_tls


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m security")
    commands = parser.add_subparsers(dest="command", required=True)
    init = commands.add_parser("init", help="make the cluster's secrets that are missing")
    init.add_argument("--dir", type=Path, default=Path(".secrets"), help="secrets directory")
    init.add_argument(
        "--brokers",
        type=int,
        default=DEFAULT_BROKERS,
        help="broker1..brokerN named in the broker certificate",
    )
    args = parser.parse_args(argv)
    outcome = ensure_tls(args.dir, brokers=args.brokers)
    made = ", ".join(outcome.written) or "nothing (all present and valid)"
    print(f"tls: {outcome.files.directory}: made {made}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
