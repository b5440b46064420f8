"""The comparison of two builds' runs (`python -m chaos compare`, docs/chaos.md): per
scenario and seed each build's verdict and what it broke; per scenario and recovery
figure both builds' values side by side, the ratio of their medians (head / base) and the
rank test of whether head is slower beyond noise; the regressions that follow; the exit
code; and all of it as `summary.json`, a text table and a markdown page.

A regression is either an invariant or history anomaly that head broke in a run whose
base run of the same scenario and seed held it, or a figure where head is slower: the
one-sided Mann-Whitney test over the seeds gives p <= `alpha` and the median ratio is at
least `min_ratio` (with a handful of seeds the test alone would flag some figure by
chance). The figures are those the runs carry (`python -m pipeline figures`:
`pipeline.run_figures`), in the order first met; each is a time in ms where less is
better.

Pure values and functions apart from `write_summary`; caller's thread.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaos.compare.ranks import mann_whitney_greater

__all__ = [
    "ALPHA",
    "MIN_RATIO",
    "MIN_SEEDS",
    "BuildRun",
    "Comparison",
    "FigureRow",
    "Pair",
    "Regression",
    "compare",
    "write_summary",
]

#: The rank test's level, the median ratio a slower figure must reach, and the fewest
#: seeds with a value on each side for the test to be asked at all.
ALPHA = 0.05
MIN_RATIO = 1.25
MIN_SEEDS = 3


@dataclass(frozen=True, slots=True)
class BuildRun:
    """One build's run of a scenario and seed: its directory, whether it held (None: not
    run, `error` says why), the invariants and anomaly classes it broke, whether its
    whole schedule was performed, and its recovery figures (None: not measured)."""

    run_dir: Path | None
    ok: bool | None
    failed: tuple[str, ...] = ()
    error: str = ""
    exercised: bool = True
    figures: Mapping[str, float | None] = field(default_factory=dict)

    def word(self) -> str:
        """PASS, FAIL: what broke, or NOT RUN: why."""
        if self.ok is None:
            return f"NOT RUN: {self.error}"
        word = "PASS" if self.ok else "FAIL: " + ", ".join(self.failed)
        return word if self.exercised else f"{word} (not exercised)"


@dataclass(frozen=True, slots=True)
class Pair:
    """The same scenario and seed on both builds; `head_first` says which ran first."""

    scenario: str
    seed: int
    base: BuildRun
    head: BuildRun
    head_first: bool = False

    @property
    def broken_by_head(self) -> tuple[str, ...]:
        """What head broke that base held in the same scenario and seed (both ran)."""
        if self.base.ok is None or self.head.ok is None:
            return ()
        return tuple(n for n in self.head.failed if n not in self.base.failed)


@dataclass(frozen=True, slots=True)
class FigureRow:
    """One scenario's figure on both builds: the values by seed (None: not measured),
    the ratio of the medians head / base, the rank test's p (None: too few values), and
    whether head is slower beyond noise."""

    scenario: str
    figure: str
    base: tuple[float | None, ...]
    head: tuple[float | None, ...]
    ratio: float | None
    p: float | None
    slower: bool


@dataclass(frozen=True, slots=True)
class Regression:
    """What head does worse, in one line."""

    kind: str  # "invariant" or "slower"
    scenario: str
    name: str
    detail: str

    def __str__(self) -> str:
        return f"{self.scenario}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """The whole comparison of `base` and `head` (their descriptions)."""

    base: str
    head: str
    pairs: tuple[Pair, ...]
    figures: tuple[FigureRow, ...]
    regressions: tuple[Regression, ...]
    alpha: float = ALPHA
    min_ratio: float = MIN_RATIO

    @property
    def not_run(self) -> tuple[str, ...]:
        """The runs that could not be performed, each as `scenario seed N build: why`."""
        return tuple(
            f"{p.scenario} seed {p.seed} {name}: {run.error}"
            for p in self.pairs
            for name, run in (("base", p.base), ("head", p.head))
            if run.ok is None
        )

    def exit_code(self) -> int:
        """1 on a regression, else 2 when a run could not be performed, else 0."""
        if self.regressions:
            return 1
        return 2 if self.not_run or not self.pairs else 0

    def to_json(self) -> dict[str, Any]:
        """`summary.json`'s document."""
        return {
            "base": self.base,
            "head": self.head,
            "ok": self.exit_code() == 0,
            "alpha": self.alpha,
            "min_ratio": self.min_ratio,
            "runs": [_pair_json(p) for p in self.pairs],
            "figures": [
                {
                    "scenario": f.scenario,
                    "figure": f.figure,
                    "base": list(f.base),
                    "head": list(f.head),
                    "ratio": f.ratio,
                    "p": f.p,
                    "slower": f.slower,
                }
                for f in self.figures
            ],
            "regressions": [
                {"kind": r.kind, "scenario": r.scenario, "name": r.name, "detail": r.detail}
                for r in self.regressions
            ],
            "not_run": list(self.not_run),
        }

    def text(self) -> str:
        """The terminal's tables: verdicts by run, figures by scenario, the outcome."""
        runs: list[tuple[str, ...]] = [("SCENARIO", "SEED", "BASE", "HEAD")]
        runs += [(p.scenario, str(p.seed), p.base.word(), p.head.word()) for p in self.pairs]
        figures: list[tuple[str, ...]] = [
            ("SCENARIO", "FIGURE", "BASE ms", "HEAD ms", "HEAD/BASE", "P", "")
        ]
        figures += [_figure_cells(f) for f in self.figures if any(_known(f.base + f.head))]
        lines = [_aligned(runs), "", _aligned(figures), "", self.outcome()]
        return "\n".join(lines)

    def markdown(self) -> str:
        """The report's page: the same tables in markdown."""
        runs = [(p.scenario, str(p.seed), p.base.word(), p.head.word()) for p in self.pairs]
        shown = [_figure_cells(f) for f in self.figures if any(_known(f.base + f.head))]
        return "\n".join(
            [
                f"# Comparison: head {self.head} against base {self.base}",
                "",
                self.outcome(),
                "",
                "## Verdicts",
                "",
                _markdown(("scenario", "seed", "base", "head"), runs),
                "",
                "## Recovery figures (values by seed; ratio of medians; one-sided rank test)",
                "",
                _markdown(("scenario", "figure", "base", "head", "head/base", "p", ""), shown),
                "",
            ]
        )

    def outcome(self) -> str:
        """One paragraph: the regressions, or what could not be run, or that all is well."""
        if self.regressions:
            listed = "\n".join(f"  - {r}" for r in self.regressions)
            return f"REGRESSION: head does worse than base:\n{listed}"
        if self.not_run or not self.pairs:
            listed = "\n".join(f"  - {n}" for n in self.not_run) or "  - nothing was run"
            return f"NOT JUDGED: runs could not be performed:\n{listed}"
        return (
            "OK: head breaks nothing base holds, and no recovery figure is slower beyond "
            f"noise (p <= {self.alpha:g} and head/base >= {self.min_ratio:g})"
        )


def compare(
    base: str,
    head: str,
    pairs: Sequence[Pair],
    alpha: float = ALPHA,
    min_ratio: float = MIN_RATIO,
) -> Comparison:
    """The comparison of `pairs` (see the module docstring)."""
    regressions = [
        Regression(
            "invariant",
            p.scenario,
            name,
            f"seed {p.seed}: head broke {name}, which base held ({p.head.run_dir})",
        )
        for p in pairs
        for name in p.broken_by_head
    ]
    rows = []
    names = dict.fromkeys(f for p in pairs for run in (p.base, p.head) for f in run.figures)
    for scenario in dict.fromkeys(p.scenario for p in pairs):
        mine = [p for p in pairs if p.scenario == scenario]
        for figure in names:
            row = _figure_row(scenario, figure, mine, alpha, min_ratio)
            rows.append(row)
            if row.slower:
                regressions.append(
                    Regression(
                        "slower",
                        scenario,
                        figure,
                        f"{figure} is slower on head: median ratio {row.ratio:.2f}, "
                        f"p = {row.p:.3f} over {len(mine)} seeds",
                    )
                )
    return Comparison(base, head, tuple(pairs), tuple(rows), tuple(regressions), alpha, min_ratio)


def _known(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _figure_row(
    scenario: str, figure: str, pairs: Sequence[Pair], alpha: float, min_ratio: float
) -> FigureRow:
    base = tuple(p.base.figures.get(figure) for p in pairs)
    head = tuple(p.head.figures.get(figure) for p in pairs)
    known_base, known_head = _known(base), _known(head)
    ratio = None
    if known_base and known_head and statistics.median(known_base) > 0:
        ratio = statistics.median(known_head) / statistics.median(known_base)
    p = None
    if len(known_base) >= MIN_SEEDS and len(known_head) >= MIN_SEEDS:
        p = mann_whitney_greater(known_base, known_head).p
    slower = p is not None and ratio is not None and p <= alpha and ratio >= min_ratio
    return FigureRow(scenario, figure, base, head, ratio, p, slower)


def _pair_json(pair: Pair) -> dict[str, Any]:
    def side(run: BuildRun) -> dict[str, Any]:
        return {
            "run_dir": None if run.run_dir is None else str(run.run_dir),
            "ok": run.ok,
            "failed": list(run.failed),
            "error": run.error,
            "exercised": run.exercised,
            "figures": dict(run.figures),
        }

    return {
        "scenario": pair.scenario,
        "seed": pair.seed,
        "base_ok": pair.base.ok,
        "head_ok": pair.head.ok,
        "base_failed": list(pair.base.failed),
        "head_failed": list(pair.head.failed),
        "head_broke": list(pair.broken_by_head),
        "order": "head first" if pair.head_first else "base first",
        "base": side(pair.base),
        "head": side(pair.head),
    }


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _figure_cells(row: FigureRow) -> tuple[str, ...]:
    return (
        row.scenario,
        row.figure,
        " ".join(_number(v) for v in row.base),
        " ".join(_number(v) for v in row.head),
        "-" if row.ratio is None else f"{row.ratio:.2f}",
        "-" if row.p is None else f"{row.p:.3f}",
        "SLOWER" if row.slower else "",
    )


def _aligned(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def _markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_summary(directory: Path, comparison: Comparison) -> tuple[Path, Path]:
    """`summary.json` and `summary.md` in `directory`; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    as_json = directory / "summary.json"
    as_json.write_text(json.dumps(comparison.to_json(), indent=2) + "\n")
    as_md = directory / "summary.md"
    as_md.write_text(comparison.markdown())
    return as_json, as_md
