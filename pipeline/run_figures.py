"""One run's recovery figures as a handful of numbers, for comparing two builds'
runs (`python -m pipeline figures RUN_DIR ...`, which `python -m chaos compare` calls):
the report's per-run pass (`pipeline.run_pass.per_run`, the same reading and the same
`pipeline.figures`) on one run at a time, without Spark, each table reduced to the
number that says how bad the run was:

- `detection_ms`: the slowest fault detection;
- `failover_ms`: the slowest controller failover (fault start to failover done);
- `election_ms`: the latest leader election after the fault before it;
- `unavailability_ms`: the longest window of a partition without an acknowledged send;
- `convergence_ms`: the last partition whole again after the final heal;
- `produce_p50_ms`, `produce_p95_ms`, `produce_p99_ms`: the acknowledged sends' latency
  quantiles over the whole run (Spark's interpolation, `pipeline.figures.percentiles`).

A figure with nothing to measure (no fault detected, no election) is None. Pure file
reading on the caller's thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline import figures
from pipeline.run_pass import PER_RUN_TABLES, PLOTTING_TABLES, per_run, typed
from pipeline.runs import read_config

__all__ = ["FIGURE_NAMES", "run_figures"]

#: The figures, in the order `run_figures` gives them (and a comparison shows them).
FIGURE_NAMES = (
    "detection_ms",
    "failover_ms",
    "election_ms",
    "unavailability_ms",
    "convergence_ms",
    "produce_p50_ms",
    "produce_p95_ms",
    "produce_p99_ms",
)
#: The latency table's window (the figures here use the whole run).
WINDOW_MS = 1_000


def _worst(frame: pd.DataFrame, column: str) -> float | None:
    values = pd.to_numeric(frame[column], errors="coerce").dropna()
    return None if values.empty else float(values.max())


def run_figures(path: Path) -> dict[str, float | None]:
    """The figures of the run at `path` (`PipelineInputError` when it is not one)."""
    config = read_config(path)
    body = per_run({config.run_id: config}, WINDOW_MS, plotting=True)
    tables = {**PER_RUN_TABLES, **PLOTTING_TABLES}
    made: Mapping[str, pd.DataFrame] = {
        name: typed([pa.ipc.open_stream(data).read_all()], tables[name])
        for name, data in body([[config.run_id]])
    }
    ok = made["sends"][made["sends"]["type"] == "ok"]
    values = ok["latency_ms"].to_numpy(dtype="float64")
    quantiles = figures.percentiles(
        np.zeros(len(values), dtype="int64"), values, 1, figures.QUANTILES
    )
    out: dict[str, float | None] = {
        "detection_ms": _worst(made["detection"], "detection_ms"),
        "failover_ms": _worst(made["failovers"], "failover_ms"),
        "election_ms": _worst(made["elections"], "since_fault_ms"),
        "unavailability_ms": _worst(made["unavailability"], "duration_ms"),
        "convergence_ms": _worst(made["healed"], "healed_after_ms"),
    }
    for q, value in zip(figures.QUANTILES, quantiles[0], strict=True):
        out[f"produce_p{round(q * 100)}_ms"] = None if math.isnan(value) else float(value)
    return out
