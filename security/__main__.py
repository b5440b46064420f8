"""`python -m security init --dir .secrets`: create every secret the cluster needs that is
missing or stale (idempotent; `make setup` runs it), one function per kind of secret.
Prints which directories are ready, never their content. Main thread."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from security import tls

#: One function per kind of secret: each creates its files under the directory if missing.
KINDS: tuple[Callable[[Path], Path], ...] = (tls.ensure_tls_files,)


def build_parser() -> argparse.ArgumentParser:
    """The command line of `python -m security`."""
    parser = argparse.ArgumentParser(prog="security", description="The cluster's secrets.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    init = sub.add_parser("init", help="create the missing secrets (idempotent)")
    init.add_argument("--dir", type=Path, required=True, help="the secrets directory")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 on success."""
    args = build_parser().parse_args(argv)
    for kind in KINDS:
        print(f"secret ready: {kind(args.dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
