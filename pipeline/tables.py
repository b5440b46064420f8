"""The across-run tables, in pandas on the driver's thread from the small per-run tables of
the per-run pass (`pipeline.run_pass`): recovery times by scenario and fault kind (count,
p50, p95, p99, max of each measure), invariant violations per 100 runs, and one summary
row per run. A run without faults counts under the kind `none`. Each table is typed by its
schema (`pipeline.schemas`) as Spark's `toPandas` would type it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from pipeline import schemas
from pipeline.figures import group_codes, percentiles
from pipeline.runs import RunConfig

__all__ = [
    "NO_FAULT",
    "measures",
    "recovery_table",
    "run_kinds",
    "run_summary",
    "violations_table",
]

NO_FAULT = "none"


def _typed(frame: pd.DataFrame, schema: StructType) -> pd.DataFrame:
    arrow = to_arrow_schema(schema)
    return pa.Table.from_pandas(frame[schema.names], schema=arrow, preserve_index=False).to_pandas()


def _runs(runs: Sequence[RunConfig]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [r.run_id for r in runs],
            "scenario": [r.scenario for r in runs],
            "bug_switches": [r.bug_switches for r in runs],
        },
        dtype="object",
    )


def _or_none(kind: pd.Series) -> pd.Series:
    return kind.astype("object").where(kind.notna(), NO_FAULT)


def run_kinds(runs: Sequence[RunConfig], detection: pd.DataFrame) -> pd.DataFrame:
    """run_id, scenario, kind: each fault kind a run injected (`none` for no fault), from
    the `detection` table (one row per fault window)."""
    kinds = detection[["run_id", "kind"]].drop_duplicates()
    joined = _runs(runs)[["run_id", "scenario"]].merge(kinds, on="run_id", how="left")
    return joined.assign(kind=_or_none(joined["kind"]))


def measures(
    runs: Sequence[RunConfig], verdicts: pd.DataFrame, per_run: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """run_id, kind, measure, value_ms, scenario: every recovery measure of every run, from
    the verdicts and the per-run figures (`detection`, `failovers`, `elections`,
    `unavailability`, `healed`)."""
    kinds = run_kinds(runs, per_run["detection"])[["run_id", "kind"]]

    def of(frame: pd.DataFrame, column: str, name: str) -> pd.DataFrame:
        known = frame[frame[column].notna()]
        return pd.DataFrame(
            {
                "run_id": known["run_id"].astype("object"),
                "kind": _or_none(known["kind"]),
                "measure": name,
                "value_ms": known[column].astype("float64"),
            }
        )

    convergence = verdicts[verdicts["recovery_ms"].notna()].merge(kinds, on="run_id")
    windows = per_run["unavailability"].merge(kinds, on="run_id")
    healed = per_run["healed"].merge(kinds, on="run_id")
    parts = [
        of(per_run["detection"], "detection_ms", "failure detection"),
        of(per_run["failovers"], "failover_ms", "controller failover"),
        of(per_run["failovers"], "metadata_failover_ms", "failover until metadata current"),
        of(per_run["elections"], "since_fault_ms", "leader election"),
        of(windows, "duration_ms", "partition unavailability"),
        of(healed, "healed_after_ms", "partition healed after heal"),
        of(convergence, "recovery_ms", "convergence after heal"),
    ]
    union = pd.concat(parts, ignore_index=True)
    scenarios = _runs(runs)[["run_id", "scenario"]]
    return _typed(union.merge(scenarios, on="run_id"), schemas.MEASURED)


def recovery_table(measured: pd.DataFrame) -> pd.DataFrame:
    """measure, scenario, kind, n, p50_ms, p95_ms, p99_ms, max_ms."""
    keys = ["measure", "scenario", "kind"]
    codes, out = group_codes(measured[keys])
    values = measured["value_ms"].to_numpy(dtype="float64")
    out["n"] = np.bincount(codes, minlength=len(out))
    quantiles = percentiles(codes, values, len(out), (0.5, 0.95, 0.99, 1.0))
    for i, name in enumerate(("p50_ms", "p95_ms", "p99_ms", "max_ms")):
        out[name] = quantiles[:, i]
    ordered = out.sort_values(keys, na_position="first", ignore_index=True)
    return _typed(ordered, schemas.RECOVERY)


def violations_table(
    runs: Sequence[RunConfig], verdicts: pd.DataFrame, detection: pd.DataFrame
) -> pd.DataFrame:
    """scenario, kind, runs, runs_violated, violations, failed_runs (the judging failed),
    invariants (those violated), violations_per_100_runs."""
    joined = run_kinds(runs, detection).merge(verdicts, on="run_id")
    rows = []
    for (scenario, kind), group in joined.groupby(["scenario", "kind"], sort=True):
        violated = sorted({str(n) for names in group["violated"] for n in names})
        violations = int(group["violations"].fillna(0).sum())
        rows.append(
            {
                "scenario": scenario,
                "kind": kind,
                "runs": len(group),
                "runs_violated": int((group["ok"] == False).sum()),  # noqa: E712
                "violations": violations,
                "failed_runs": int(group["error"].notna().sum()),
                "invariants": ", ".join(violated),
                "violations_per_100_runs": violations * 100.0 / len(group),
            }
        )
    return _typed(pd.DataFrame(rows, columns=schemas.VIOLATIONS.names), schemas.VIOLATIONS)


def run_summary(
    runs: Sequence[RunConfig], verdicts: pd.DataFrame, per_run: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """run_id, scenario, bug_switches, ok, convergence_ms, faults, max_detection_ms,
    controller_elections, max_failover_ms, max_metadata_failover_ms, leader_elections,
    median_election_ms, max_unavailable_ms: one row per run, from the figures of
    `per_run`."""
    judged = verdicts[["run_id", "ok", "recovery_ms"]].rename(
        columns={"recovery_ms": "convergence_ms"}
    )
    summary = _runs(runs).merge(judged, on="run_id")

    def per(name: str, **aggs: tuple[str, str]) -> pd.DataFrame:
        return per_run[name].groupby("run_id", sort=False).agg(**aggs).reset_index()

    elections = per_run["elections"]
    codes, ids = pd.factorize(elections["run_id"])
    medians = percentiles(codes, elections["since_fault_ms"].to_numpy("float64"), len(ids), (0.5,))
    parts = [
        per("detection", faults=("run_id", "size"), max_detection_ms=("detection_ms", "max")),
        per(
            "failovers",
            controller_elections=("run_id", "size"),
            max_failover_ms=("failover_ms", "max"),
            max_metadata_failover_ms=("metadata_failover_ms", "max"),
        ),
        per("elections", leader_elections=("run_id", "size")).merge(
            pd.DataFrame(
                {"run_id": np.asarray(ids, dtype=object), "median_election_ms": medians[:, 0]}
            ),
            on="run_id",
        ),
        per("unavailability", max_unavailable_ms=("duration_ms", "max")),
    ]
    for part in parts:
        part["run_id"] = part["run_id"].astype("object")
        summary = summary.merge(part, on="run_id", how="left")
    for count in ("faults", "controller_elections", "leader_elections"):
        summary[count] = summary[count].fillna(0)
    return _typed(summary.sort_values("run_id", ignore_index=True), schemas.RUN_SUMMARY)
