"""`python -m pipeline report [--runs DIR ...] [--out DIR] [--master URL]`: the report of
every chaos run under the given directories (default `runs/`), built with Spark in local
mode or on the cluster at `--master`; its front page's path (`index.html`) on stdout. Exit
status 0 with the report written, 1 when no run could be read, 2 on bad arguments.

`python -m pipeline figures RUN_DIR ...`: each run's recovery figures as one JSON object
by run directory on stdout (`pipeline.run_figures`, no Spark); exit 1 when a run cannot be
read.

`python -m pipeline comparison DIR ...`: the page of each comparison of two builds
(`python -m chaos compare`'s `compare-<time>/`), `DIR/report.html`, from its
`summary.json` (`pipeline.comparison`, no Spark); each page's path on stdout; exit 1 when
a directory holds no comparison. The main thread does everything.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="verdicts, figures and pictures of chaos runs")
    report.add_argument(
        "--runs",
        type=Path,
        action="append",
        metavar="DIR",
        help="a run directory or a directory of runs (repeatable; runs/)",
    )
    report.add_argument(
        "--out",
        type=Path,
        default=Path("runs/report"),
        metavar="DIR",
        help="where the report goes (default runs/report)",
    )
    report.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="a Spark master, e.g. spark://host:7077 (default local[2])",
    )
    figures = commands.add_parser("figures", help="each run's recovery figures as JSON")
    figures.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    comparison = commands.add_parser(
        "comparison", help="the page of a comparison of two builds, from its summary.json"
    )
    comparison.add_argument("directories", type=Path, nargs="+", metavar="DIR")
    return parser


def _comparisons(directories: Sequence[Path]) -> int:
    from pipeline.comparison import write_comparison_page
    from pipeline.runs import PipelineInputError

    try:
        for directory in directories:
            print(write_comparison_page(directory))
    except PipelineInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _figures(run_dirs: Sequence[Path]) -> int:
    import json

    from pipeline.run_figures import run_figures
    from pipeline.runs import PipelineInputError

    try:
        found = {str(path): run_figures(path) for path in run_dirs}
    except PipelineInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "figures":
        return _figures(args.run_dirs)
    if args.command == "comparison":
        return _comparisons(args.directories)
    from pipeline.report import build_report
    from pipeline.runs import PipelineInputError
    from pipeline.session import DEFAULT_MASTER, spark_session

    sources = args.runs or [Path("runs")]
    out = args.out.resolve()
    spark = spark_session(args.master or DEFAULT_MASTER)
    try:
        report = build_report(spark, sources, out, say=lambda s: print(s, file=sys.stderr))
    except PipelineInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    print(report.index or report.html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
