"""`python -m chaos check RUN_DIR [--json]` and `python -m chaos export-history RUN_DIR
--format jepsen [--out FILE]`: a recorded run directory judged again, or its history
handed to Jepsen, without a cluster. Each returns the process exit code. Main thread.

`check` re-judges the run with every invariant and the history checker
(`rundir.check_report`): 0 nothing is broken, 1 something is (or the run directory is
incomplete: `run_dir_complete`), 2 the run could not be read (not a run directory,
another run-directory version, a history of another version). `export-history` writes
the workload history as Jepsen's EDN (`rundir.jepsen_history`): 0 written, 2 no readable
history.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from rundir.check_report import EXIT_UNREADABLE, check_run
from rundir.errors import RunDirError
from rundir.jepsen_history import jepsen_lines
from rundir.reader import stream_run_history

__all__ = ["add_parsers", "check", "export_history"]


def add_parsers(commands: Any) -> None:
    """Add `check` and `export-history` to the subparsers `commands`."""
    check_parser = commands.add_parser(
        "check",
        help="judge a recorded run directory again, without a cluster",
        description="Re-judge RUN_DIR with every invariant and the history checker and "
        "print the verdict table. Exit 0 nothing broken, 1 something broken or the run "
        "directory incomplete, 2 the run could not be read.",
    )
    check_parser.add_argument("run_dir", type=Path, help="a run directory")
    check_parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    export = commands.add_parser(
        "export-history",
        help="write a run's workload history for Jepsen's checker",
        description="Write RUN_DIR's workload history as Jepsen's Kafka ops, one EDN map "
        'per line (docs/workload.md, "Jepsen export").',
    )
    export.add_argument("run_dir", type=Path, help="a run directory")
    export.add_argument(
        "--format", choices=("jepsen",), default="jepsen", help="the output form (jepsen)"
    )
    export.add_argument("--out", type=Path, default=None, help="write here (default: stdout)")


def check(args: argparse.Namespace) -> int:
    """`check RUN_DIR`: the run judged again; its verdict decides the exit code."""
    try:
        report = check_run(args.run_dir)
    except RunDirError as exc:
        print(f"python -m chaos check: unreadable run: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.json:
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        print(report.table())
    return report.exit_code


def export_history(args: argparse.Namespace) -> int:
    """`export-history RUN_DIR --format jepsen`: the history as EDN lines."""
    try:
        if not (args.run_dir / "config.json").exists():
            raise RunDirError(f"{args.run_dir}: not a run directory (no config.json)")
        history = stream_run_history(args.run_dir)
    except RunDirError as exc:
        print(f"python -m chaos export-history: unreadable run: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if history is None:
        print(f"python -m chaos export-history: {args.run_dir} has no history", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.out is None:
        _write_lines(sys.stdout, jepsen_lines(history))
    else:
        with args.out.open("w", encoding="utf-8") as out:
            _write_lines(out, jepsen_lines(history))
        print(f"export-history: {len(history)} ops written to {args.out}", file=sys.stderr)
    return 0


def _write_lines(out: TextIO, lines: Iterable[str]) -> None:
    """Each line, with its newline, as it is made (the history is not held)."""
    write = out.write
    for line in lines:
        write(line + "\n")
