"""The page of a comparison of two builds (`python -m chaos compare`, docs/chaos.md):
`report.html` beside the comparison's `summary.json`, rendered from it alone, without
Spark (`python -m pipeline comparison DIR`, which `compare` calls at its end). The
regressions at the top; per scenario and seed each build's verdict and what it broke; per
scenario and recovery figure both builds' values by seed, the ratio of their medians
(head / base) and the rank test's verdict; and `img/figures.png`, each figure's base and
head values by seed (`pipeline.plots.comparison_plot`). The report over a directory of
runs links the comparisons it finds there (`find_comparisons`).

    summary = read_summary(directory)          # PipelineInputError when it is not one
    page = write_comparison_page(directory)    # directory / "report.html"

`summary.json` is read as data (its writer is `chaos.compare.judgement`, which the
report may not import). Pure file reading and writing on the caller's thread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.pages import render
from pipeline.runs import PipelineInputError

__all__ = [
    "PAGE",
    "PLOT",
    "SUMMARY",
    "ComparisonLink",
    "find_comparisons",
    "outcome",
    "read_summary",
    "write_comparison_page",
]

SUMMARY = "summary.json"
PAGE = "report.html"
#: The figures' plot, relative to the page.
PLOT = "img/figures.png"
_KEYS = ("base", "head", "runs", "figures", "regressions", "not_run")


def read_summary(directory: Path) -> dict[str, Any]:
    """The comparison in `directory`'s `summary.json`; `PipelineInputError` when there
    is none or it is not a comparison's."""
    path = directory / SUMMARY
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PipelineInputError(f"{path}: not a readable comparison: {exc}") from None
    if not isinstance(summary, dict):
        raise PipelineInputError(f"{path}: not a comparison's summary (not an object)")
    missing = [key for key in _KEYS if key not in summary]
    if missing:
        raise PipelineInputError(f"{path}: not a comparison's summary (no {', '.join(missing)})")
    checked: dict[str, Any] = summary
    return checked


def outcome(summary: Mapping[str, Any]) -> str:
    """REGRESSION, NOT JUDGED (a run could not be performed) or OK, as `compare` exits."""
    if summary["regressions"]:
        return "REGRESSION"
    return "NOT JUDGED" if summary["not_run"] or not summary["runs"] else "OK"


def _word(side: Mapping[str, Any]) -> str:
    """PASS, FAIL: what broke, or NOT RUN: why (as the terminal's table says it)."""
    if side.get("ok") is None:
        return f"NOT RUN: {side.get('error', '')}"
    word = "PASS" if side["ok"] else "FAIL: " + ", ".join(side.get("failed", ()))
    return word if side.get("exercised", True) else f"{word} (not exercised)"


def _href(run_dir: str | None, page_dir: Path) -> str | None:
    if not run_dir:
        return None
    return Path(os.path.relpath(run_dir, page_dir)).as_posix()


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _verdict_rows(runs: Sequence[Mapping[str, Any]], page_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        sides = {}
        for name in ("base", "head"):
            side = run[name]
            sides[name] = {
                "value": _word(side),
                "bad": side.get("ok") is not True,
                "href": _href(side.get("run_dir"), page_dir),
            }
        rows.append(
            {
                "scenario": run["scenario"],
                "seed": run["seed"],
                "order": run.get("order", ""),
                **sides,
                "head_broke": ", ".join(run.get("head_broke", ())),
            }
        )
    return rows


def _rank_verdict(figure: Mapping[str, Any]) -> str:
    if figure["slower"]:
        return "SLOWER"
    return "not tested" if figure["p"] is None else "not slower"


def _figure_rows(figures: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The figures measured on at least one build, as the page shows them."""
    return [
        {
            "scenario": f["scenario"],
            "figure": f["figure"],
            "base": " ".join(_number(v) for v in f["base"]),
            "head": " ".join(_number(v) for v in f["head"]),
            "ratio": "-" if f["ratio"] is None else f"{f['ratio']:.2f}",
            "p": "-" if f["p"] is None else f"{f['p']:.3f}",
            "verdict": _rank_verdict(f),
            "slower": bool(f["slower"]),
        }
        for f in figures
        if any(v is not None for v in (*f["base"], *f["head"]))
    ]


def write_comparison_page(directory: Path, page_dir: Path | None = None) -> Path:
    """`report.html` and its plot for the comparison in `directory`, written into
    `page_dir` (default: `directory` itself); the page's path."""
    from pipeline.plots import comparison_plot  # matplotlib only when a page is drawn

    summary = read_summary(directory)
    page_dir = (page_dir or directory).resolve()
    page_dir.mkdir(parents=True, exist_ok=True)
    comparison_plot(page_dir / PLOT, summary["figures"])
    page = page_dir / PAGE
    render(
        "comparison.html.j2",
        page,
        base=summary["base"],
        head=summary["head"],
        outcome=outcome(summary),
        alpha=summary.get("alpha"),
        min_ratio=summary.get("min_ratio"),
        regressions=summary["regressions"],
        not_run=summary["not_run"],
        verdicts=_verdict_rows(summary["runs"], page_dir),
        figures=_figure_rows(summary["figures"]),
        plot=PLOT,
        summary=Path(os.path.relpath(directory.resolve() / SUMMARY, page_dir)).as_posix(),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    return page


@dataclass(frozen=True, slots=True)
class ComparisonLink:
    """A comparison the report links: its directory's name, its builds, its outcome and
    regressions, and its page."""

    name: str
    base: str
    head: str
    outcome: str
    regressions: int
    page: Path


def find_comparisons(
    candidates: Iterable[Path], out: Path
) -> tuple[list[ComparisonLink], list[Path]]:
    """The comparisons among `candidates` (directories holding a comparison's
    `summary.json`), each with its page (drawn into `out/comparisons/<name>/` when the
    comparison has none), and the candidates that are not comparisons."""
    found: list[ComparisonLink] = []
    others: list[Path] = []
    for candidate in candidates:
        try:
            summary = read_summary(candidate)
        except PipelineInputError:
            others.append(candidate)
            continue
        page = candidate / PAGE
        if not page.exists():
            page = write_comparison_page(candidate, out / "comparisons" / candidate.name)
        found.append(
            ComparisonLink(
                candidate.name,
                str(summary["base"]),
                str(summary["head"]),
                outcome(summary),
                len(summary["regressions"]),
                page,
            )
        )
    return found, others
