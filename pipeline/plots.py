"""The report's pictures, drawn with matplotlib's Agg backend into PNG files: per run a
timeline (faults as shaded bands, controller elections and leader changes as marks, send
completions per second by outcome) and a latency plot shaded by faults, as Jepsen draws
them; across runs, the recovery measures' distributions by scenario and fault kind; for a
comparison of two builds, each recovery figure's values on base and head by seed.
Pure functions of pandas frames (a comparison's of its `summary.json` rows); the
driver's thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "BUILD_COLOURS",
    "OUTCOME_COLOURS",
    "comparison_plot",
    "latency_plot",
    "recovery_plot",
    "timeline_plot",
]

OUTCOME_COLOURS = {"ok": "#2c7fb8", "fail": "#d7301f", "info": "#fdae61"}
BUILD_COLOURS = {"base": "#2c7fb8", "head": "#d7301f"}
_FAULT_COLOUR = "#bbbbbb"


def _seconds(ms: pd.Series, origin: int) -> pd.Series:
    return (ms.astype("float64") - origin) / 1000.0


def _shade_faults(ax: Axes, faults: pd.DataFrame, origin: int, end_s: float) -> None:
    for i, f in enumerate(faults.itertuples()):
        start = (f.start_ms - origin) / 1000.0
        stop = end_s if pd.isna(f.stop_ms) else (f.stop_ms - origin) / 1000.0
        ax.axvspan(
            start,
            stop,
            color=_FAULT_COLOUR,
            alpha=0.35,
            label=f"{f.kind} {f.targets}" if i < 6 else None,
        )


def timeline_plot(
    path: Path,
    run_id: str,
    origin: int,
    faults: pd.DataFrame,
    rates: pd.DataFrame,
    controllers: pd.DataFrame,
    leaders: pd.DataFrame,
    window_ms: int,
) -> Path:
    """One run's timeline: send completions per second by outcome over the faults, with
    controller elections (epoch labelled) and leader elections marked."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    end_s = float(_seconds(rates["window_start_ms"], origin).max()) if len(rates) else 1.0
    _shade_faults(ax, faults, origin, end_s)
    x = _seconds(rates["window_start_ms"], origin) if len(rates) else pd.Series(dtype=float)
    for outcome, colour in OUTCOME_COLOURS.items():
        if outcome in rates:
            ax.step(
                x,
                rates[outcome] * 1000.0 / window_ms,
                where="post",
                color=colour,
                label=f"{outcome}/s",
            )
    top = ax.get_ylim()[1]
    for c in controllers.itertuples():
        at = (c.elected_ms - origin) / 1000.0
        ax.axvline(at, color="black", linestyle="--", linewidth=1)
        ax.annotate(
            f"controller epoch {c.controller_epoch}",
            (at, top),
            fontsize=7,
            rotation=90,
            va="top",
            ha="right",
        )
    if len(leaders):
        ax.plot(
            _seconds(leaders["elected_ms"], origin),
            [top * 0.05] * len(leaders),
            "v",
            color="purple",
            label="leader elected",
        )
    return _finish(fig, ax, path, f"{run_id}: timeline", "send completions per second")


def latency_plot(
    path: Path, run_id: str, origin: int, faults: pd.DataFrame, sends: pd.DataFrame
) -> Path:
    """One run's send latencies (log scale) by outcome over time, shaded by faults."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    done = sends.dropna(subset=["latency_ms"])
    end_s = float(_seconds(done["invoke_ms"], origin).max()) if len(done) else 1.0
    _shade_faults(ax, faults, origin, end_s)
    for outcome, colour in OUTCOME_COLOURS.items():
        part = done[done["type"] == outcome]
        if len(part):
            ax.scatter(
                _seconds(part["invoke_ms"], origin),
                part["latency_ms"].clip(lower=0.1),
                s=4,
                color=colour,
                label=outcome,
            )
    ax.set_yscale("log")
    return _finish(fig, ax, path, f"{run_id}: send latency", "latency (ms)")


def recovery_plot(path: Path, measured: pd.DataFrame) -> Path:
    """One box plot per recovery measure: its values by scenario and fault kind."""
    names = sorted(measured["measure"].unique()) if len(measured) else []
    fig, axes = plt.subplots(
        max(1, len(names)), 1, figsize=(10, 2.6 * max(1, len(names))), squeeze=False
    )
    for ax, name in zip(axes[:, 0], names, strict=False):
        rows = measured[measured["measure"] == name]
        groups = sorted(rows.groupby(["scenario", "kind"]), key=lambda g: g[0])
        ax.boxplot(
            [g["value_ms"].to_numpy() / 1000.0 for _, g in groups],
            orientation="horizontal",
            tick_labels=[f"{s} / {k}" for (s, k), _ in groups],
        )
        ax.set(title=name, xlabel="seconds")
    if not names:
        axes[0, 0].text(0.5, 0.5, "no recovery measured", ha="center")
    return _save(fig, path)


def comparison_plot(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """One panel per recovery figure: per scenario, base's and head's value of each seed
    (a grey line joins a seed's two), head's scenario labelled with the median ratio and
    SLOWER when the rank test says so. `rows` are `summary.json`'s `figures`; a figure
    measured on neither build is left out."""
    shown = [r for r in rows if any(v is not None for v in (*r["base"], *r["head"]))]
    names = list(dict.fromkeys(r["figure"] for r in shown))
    columns = 2 if len(names) > 1 else 1
    height = max(1, -(-len(names) // columns))
    scenarios = list(dict.fromkeys(r["scenario"] for r in shown))
    fig, axes = plt.subplots(
        height,
        columns,
        figsize=(6 * columns, (1.2 + 0.45 * max(2, len(scenarios))) * height),
        squeeze=False,
    )
    for ax, name in zip(axes.flat, names, strict=False):
        mine = {r["scenario"]: r for r in shown if r["figure"] == name}
        labels = []
        for y, scenario in enumerate(scenarios):
            row = mine.get(scenario)
            ratio = "" if row is None or row["ratio"] is None else f" x{row['ratio']:.2f}"
            slower = " SLOWER" if row is not None and row["slower"] else ""
            labels.append(f"{scenario}{ratio}{slower}")
            if row is None:
                continue
            for base, head in zip(row["base"], row["head"], strict=False):
                if base is not None and head is not None:
                    ax.plot([base, head], [y + 0.15, y - 0.15], color="#cccccc", linewidth=0.8)
            for build, offset, marker in (("base", 0.15, "o"), ("head", -0.15, "x")):
                values = [v for v in row[build] if v is not None]
                ax.scatter(
                    values,
                    [y + offset] * len(values),
                    color=BUILD_COLOURS[build],
                    marker=marker,
                    s=22,
                    label=build,
                )
        ax.set_yticks(range(len(scenarios)), labels, fontsize=7)
        ax.set_ylim(-0.6, len(scenarios) - 0.4)
        ax.invert_yaxis()
        ax.set(title=name, xlabel="ms")
        handles, texts = ax.get_legend_handles_labels()
        unique = dict(zip(texts, handles, strict=True))
        if unique:
            ax.legend(unique.values(), unique.keys(), loc="best", fontsize=7)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_axis_off()
    if not names:
        axes[0, 0].text(0.5, 0.5, "no recovery figure measured", ha="center")
    return _save(fig, path)


def _finish(fig: Figure, ax: Axes, path: Path, title: str, ylabel: str) -> Path:
    ax.set(title=title, xlabel="seconds since the run started", ylabel=ylabel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right", fontsize=7)
    return _save(fig, path)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
