"""`python -m security init --dir .secrets [--owner UID:GID]`: create every secret the
cluster needs that is missing (idempotent; `make setup` runs it), one function per kind
of secret, then, when run as root, hand the directory to the containers' user. Prints
which files exist, never their content.

`python -m security rotate --dir .secrets [--project NAME]`: rotate the cluster's CA
while the compose project serves (`security.rolling`), one line per step; run again after
a failure, it resumes. Main thread."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from docker.client import DockerClient
from docker.errors import DockerException

from security import tls, zk_credentials
from security.compose_rolling import ComposeRolling
from security.rolling import RestartTimes, RotationError, rotate
from security.secret_files import SecretFileError, hand_over

#: One function per kind of secret: each creates its files under the directory if missing.
KINDS: tuple[Callable[[Path], Path], ...] = (
    zk_credentials.ensure_digest_file,
    tls.ensure_tls_files,
)


def _default_project() -> str:
    """Compose's project name for the working directory: `COMPOSE_PROJECT_NAME`, else the
    directory's name, lower case, letters, digits, `-` and `_` only."""
    if os.environ.get("COMPOSE_PROJECT_NAME"):
        return os.environ["COMPOSE_PROJECT_NAME"]
    return re.sub(r"[^a-z0-9_-]", "", Path.cwd().name.lower()).lstrip("-_")


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
    rotate = sub.add_parser(
        "rotate", help="rotate the CA of a running compose cluster, one server at a time"
    )
    rotate.add_argument("--dir", type=Path, required=True, help="the secrets directory")
    rotate.add_argument(
        "--project",
        default=_default_project(),
        help="the compose project (default: COMPOSE_PROJECT_NAME, else the directory's name)",
    )
    rotate.add_argument(
        "--serve-timeout",
        type=float,
        default=RestartTimes().serve_s,
        help="seconds a restarted server has to serve again (default %(default)s)",
    )
    return parser


def _rotate(args: argparse.Namespace) -> int:
    try:
        docker = DockerClient.from_env()
    except DockerException as exc:
        print(f"security: cannot reach the docker daemon: {exc}", file=sys.stderr)
        return 1
    try:
        cluster = ComposeRolling(args.project, args.dir / "tls", docker)
        if not cluster.zookeepers() or not cluster.brokers():
            print(f"security: compose project {args.project} has no cluster", file=sys.stderr)
            return 1
        times = RestartTimes(serve_s=args.serve_timeout)
        rotate(args.dir / "tls", cluster, lambda line: print(line, flush=True), times)
    except (RotationError, OSError, DockerException) as exc:
        print(f"security: rotation stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        docker.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 on success, 1 when a secret file is unusable."""
    args = build_parser().parse_args(argv)
    if args.command == "rotate":
        return _rotate(args)
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
