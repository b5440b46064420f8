"""The chaos command line: `python -m chaos <command>`.

    python -m chaos heal [--project NAME] [--state-dir DIR]

`heal` undoes every fault that the heal state of the compose project still holds (left by
a run that was killed, or whose undo failed) and verifies each undo. The project defaults
to the repository's compose project: `COMPOSE_PROJECT_NAME`, else the repository
directory's name normalised as compose does. The state directory defaults to
`runs/.chaos-state` of the repository.

Exit codes: 0 nothing is left, 1 something could not be undone (or the state could not be
read), 2 bad arguments. Each command is one subparser and one handler in `COMMANDS`.

Runs on the main thread.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from chaos.cluster import ClusterHandle
from chaos.faults.base import FaultError
from chaos.heal_state import STATE_DIR, HealStateError, pointer_path, state_files, write_pointer
from chaos.injector import Injector

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_project(env: dict[str, str] | None = None, directory: Path = REPO_ROOT) -> str:
    """`COMPOSE_PROJECT_NAME`, else the directory name as compose normalises it
    (lower case; only letters, digits, `-` and `_`; starting with a letter or digit)."""
    env = dict(os.environ) if env is None else env
    if env.get("COMPOSE_PROJECT_NAME"):
        return env["COMPOSE_PROJECT_NAME"]
    name = re.sub(r"[^a-z0-9_-]", "", directory.name.lower())
    return name.lstrip("-_")


def build_parser() -> argparse.ArgumentParser:
    """The parser with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="python -m chaos", description="Faults on the compose cluster, with verified undo."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    heal = commands.add_parser(
        "heal",
        help="undo every fault the heal state still holds, and verify",
        description="Undo every fault that runs of the project left in effect, and verify "
        "each undo. Exit 0 when nothing is left, 1 when something could not be undone.",
    )
    heal.add_argument(
        "--project",
        default=None,
        help="compose project (default: COMPOSE_PROJECT_NAME or the repository's directory name)",
    )
    heal.add_argument(
        "--state-dir",
        type=Path,
        default=REPO_ROOT / "runs" / STATE_DIR,
        help="where the projects' heal pointers live (default: runs/.chaos-state)",
    )
    return parser


def heal(args: argparse.Namespace) -> int:
    """Undo what the project's runs left; 0 when nothing is left."""
    project = args.project or default_project()
    try:
        files = state_files(args.state_dir, project)
    except HealStateError as exc:
        print(f"heal: {exc}", file=sys.stderr)
        return 1
    if not files:
        print(f"heal: nothing to heal for project {project}")
        return 0
    present = [f for f in files if f.exists()]
    if len(present) < len(files):
        write_pointer(pointer_path(args.state_dir, project), project, present)
        print(f"heal: dropped {len(files) - len(present)} state file(s) that no longer exist")
    if not present:
        print(f"heal: project {project}: nothing left")
        return 0
    left = 0
    try:
        with ClusterHandle.for_project(project) as cluster:
            if not cluster.services():
                listed = ", ".join(map(str, present))
                print(f"heal: project {project} has no containers (is it up?); kept {listed}")
                return 1
            for state_file in present:
                injector = Injector(cluster, state_file.parent, state_dir=args.state_dir)
                try:
                    for outcome in injector.heal_all():
                        word = "undone" if outcome.ok else "NOT UNDONE"
                        kind = outcome.fault.kind if outcome.fault else "?"
                        print(f"heal: {outcome.fault_id} {kind} {word}: {outcome.check.detail}")
                        left += 0 if outcome.ok else 1
                finally:
                    injector.close()
    except (FaultError, HealStateError) as exc:
        print(f"heal: {exc}", file=sys.stderr)
        return 1
    print(f"heal: project {project}: " + (f"{left} fault(s) left" if left else "nothing left"))
    return 1 if left else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"heal": heal}


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run its command; the exit code."""
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
