"""The picture of a run's results: each cost against partition count, next to its floor.

`plot_results(lines, path)` draws one panel per measure from the JSON lines of a run
(`bench.shared.report.result_lines`): durations against partitions on log-log axes with the
floor dashed beside them (1,000, 10,000 and 100,000 partitions when the run has them; the
pipeline's against the records it read),
and rates (produce) as bars against their floor. matplotlib with the Agg backend, so no
display is needed. Main thread.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

#: Lines that are a latency beside a rate (produce p50s) are left out of the picture.
_SKIPPED_SUFFIX = "_p50"


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def x_axis(lines: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """What a measure's panel is drawn against: the records it read (`events`, the
    pipeline's lines) when every line names them, else partitions; the key and the label."""
    if lines and all(_finite(line.get("events")) for line in lines):
        return "events", "records"
    return "partitions", "partitions"


def plot_results(lines: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """Write the picture of `lines` to `path` (PNG); None if no line has a figure."""
    durations: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    rates: list[Mapping[str, Any]] = []
    for line in lines:
        name = str(line["measure"])
        if name.endswith(_SKIPPED_SUFFIX):
            continue
        if _finite(line.get("seconds")) and _finite(line.get("floor_seconds")):
            durations[name].append(line)
        elif _finite(line.get("per_second")) and _finite(line.get("floor_per_second")):
            rates.append(line)
    panels = len(durations) + (1 if rates else 0)
    if panels == 0:
        return None
    columns = min(3, panels)
    rows = math.ceil(panels / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, (name, of_measure) in zip(flat, sorted(durations.items()), strict=False):
        key, label = x_axis(of_measure)
        of_measure = sorted(of_measure, key=lambda line: int(line[key]))
        xs = [int(line[key]) for line in of_measure]
        ax.plot(xs, [line["seconds"] for line in of_measure], "o-", label="measured")
        ax.plot(xs, [line["floor_seconds"] for line in of_measure], "s--", label="floor")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel(label)
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    if rates:
        ax = flat[len(durations)]
        names = [str(line["measure"]) for line in rates]
        positions = list(range(len(rates)))
        ax.bar(
            [p - 0.2 for p in positions],
            [line["per_second"] for line in rates],
            0.4,
            label="measured",
        )
        ax.bar(
            [p + 0.2 for p in positions],
            [line["floor_per_second"] for line in rates],
            0.4,
            label="floor",
        )
        ax.set_xticks(positions, names, fontsize="small")
        ax.set_ylabel("per second")
        ax.set_title("produce")
        ax.legend(fontsize="small")
    for ax in flat[panels:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
