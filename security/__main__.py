"""`python -m security init --dir .secrets [--owner UID:GID]`: create every secret the
cluster needs that is missing (idempotent; `make setup` runs it), one function per kind
of secret, then, when run as root, hand the directory to the containers' user. Prints
which files exist, never their content. Main thread."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from security import tls, zk_credentials
from security.secret_files import SecretFileError, hand_over

#: One function per kind of secret: each creates its files under the directory if missing.
KINDS: tuple[Callable[[Path], Path], ...] = (
    zk_credentials.ensure_digest_file,
    tls.ensure_tls_files,
)


def _owner(text: str) -> tuple[int, int]:
    uid, _, gid = text.partition(":")
    try:
        return int(uid), int(gid or uid)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected UID:GID, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    """The command line of `python -m security`."""
    parser = argparse.ArgumentParser(prog="security", description="The cluster's secrets.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    init = sub.add_parser("init", help="create the missing secrets (idempotent)")
    init.add_argument("--dir", type=Path, required=True, help="the secrets directory")
    init.add_argument(
        "--owner",
        type=_owner,
        help="UID:GID of the containers' user; when run as root, the files are given to it",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 on success, 1 when a secret file is unusable."""
    args = build_parser().parse_args(argv)
    try:
        made = [kind(args.dir) for kind in KINDS]
        if args.owner is not None:
            hand_over(args.dir, *args.owner)
    except SecretFileError as exc:
        print(f"security: {exc}", file=sys.stderr)
        return 1
    for path in made:
        print(f"secret ready: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
