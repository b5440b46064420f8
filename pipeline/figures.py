"""The per-run figures, decided for one run at a time from its rows as pandas frames: failure
detection, controller failover, leader elections, per-partition unavailability windows,
produce latency quantiles per time window and operation rates. Pure functions of plain
frames (any thread): the report's per-run pass (`pipeline.run_pass`) calls them on the
executors' Python workers, for the runs of one group at a time; every figure is computed
by run (`run_id`), never across runs.

The rows are those `pipeline.run_pass` hands over (`run_id` and the columns below); every
function returns its table's columns (`pipeline.schemas`). A comparison with a missing
value is false and a join never matches a missing key, as in SQL.

Definitions (docs/pipeline.md):

- detection: a fault's `start` (faults.jsonl) to the first `broker_change` with a dead
  broker logged at or after it, or the first `controller_elected` when that came first
  (a failed controller is noticed by the election of the next one).
- failover: the start of the last fault before a `controller_elected` (the old controller
  gone) to that epoch's `controller_failover_done`; and to the moment the last broker the
  new controller found live applied an UpdateMetadata of its epoch (`pipeline.metadata`).
- election: a partition's `leader_elected` after the run started (not `initial`), and
  the time since the last fault's start.
- unavailability: per partition, from the invoke of the first send that did not succeed
  after an acknowledged one, to the acknowledgement of the next one that did (as the
  producer saw it; open windows end at the last failed completion).
- healed: per partition, from the cluster snapshots after the final heal, the first
  snapshot at or after the heal in which ZooKeeper's leader is a live broker and the ISR
  holds every replica.
- latency: each acknowledged send's invoke-to-ok time; quantiles per `window_ms`.

Quantiles are exact and interpolated as Spark's `percentile` does (`percentiles`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.metadata import DONE, ELECTED, metadata_current

__all__ = [
    "EVENT_COLUMNS",
    "FAULT_COLUMNS",
    "QUANTILES",
    "SEND_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "detection",
    "elections",
    "failovers",
    "fault_windows",
    "group_codes",
    "healed",
    "latency",
    "left_join",
    "percentiles",
    "rates",
    "sends",
    "unavailability",
]

QUANTILES = (0.5, 0.95, 0.99)
#: One run's event rows: the envelope, the fields the figures read, and `noticed` (a
#: `broker_change` with a dead broker, or a `controller_elected`).
EVENT_COLUMNS = (
    "ts",
    "node",
    "kind",
    "api",
    "broker_id",
    "controller_epoch",
    "topic",
    "partition",
    "leader",
    "leader_epoch",
    "strategy",
    "duration_ms",
    "noticed",
)
#: One run's fault phases (`targets` joined with commas).
FAULT_COLUMNS = ("ts", "fault", "kind", "targets", "phase")
#: One run's history lines of sends (`time_ns` of a line without one is 0, and
#: `has_time_ns` false: the nanoseconds stay exact integers).
SEND_COLUMNS = (
    "type",
    "process",
    "op_id",
    "topic",
    "partition",
    "wall_ms",
    "time_ns",
    "has_time_ns",
)
#: One run's snapshot partitions after the heal (`whole`: the leader is live and the ISR
#: holds every replica).
SNAPSHOT_COLUMNS = ("after_heal_ms", "topic", "partition", "whole")


def percentiles(
    codes: np.ndarray, values: np.ndarray, groups: int, quantiles: Sequence[float]
) -> np.ndarray:
    """The exact quantiles of `values` by group (`codes`: each value's group, 0 to
    `groups` - 1), shape (groups, quantiles). Missing values are left out; a group with
    none left gets NaN. Interpolated between the two nearest ranks as Spark's `percentile`
    does, to the bit: `low + (position - lower) * (high - low)` at position `(n - 1) * q`."""
    values = np.asarray(values, dtype="float64")
    known = ~np.isnan(values)
    codes, values = np.asarray(codes)[known], values[known]
    ordered = values[np.lexsort((values, codes))]
    counts = np.bincount(codes, minlength=groups)
    offsets = np.cumsum(counts) - counts
    out = np.full((groups, len(quantiles)), np.nan)
    some = counts > 0
    for i, q in enumerate(quantiles):
        position = (counts[some] - 1).astype("float64") * q
        lower = np.floor(position)
        low = ordered[offsets[some] + lower.astype("int64")]
        high = ordered[offsets[some] + np.ceil(position).astype("int64")]
        out[some, i] = low + (position - lower) * (high - low)
    return out


def left_join(left: pd.DataFrame, right: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`left` joined with the rows of `right` of equal `keys`, as SQL's left outer join: a
    missing key matches nothing."""
    matchable = right.dropna(subset=keys)
    return left.merge(matchable, on=keys, how="left", sort=False)


def _nearest(
    left: pd.DataFrame, right: pd.DataFrame, on: tuple[str, str], direction: str
) -> pd.DataFrame:
    """`left` (its row order kept) with the columns of the row of `right` of the same run
    whose `on[1]` is the last at or before (`backward`) or the first at or after
    (`forward`) its `on[0]`; missing when there is none or a time is missing. Of equal
    times, the last (`backward`) or the first (`forward`) row of `right` counts."""
    at, key = on
    rows = left.reset_index(drop=True)
    rows = rows.assign(_order=np.arange(len(rows)), _at=rows[at].astype("float64"))
    candidates = right.dropna(subset=[key])
    candidates = candidates.assign(**{key: candidates[key].astype("float64")})
    timed = rows.dropna(subset=["_at"]).sort_values("_at", kind="stable")
    matched = pd.merge_asof(
        timed,
        candidates.sort_values(key, kind="stable"),
        left_on="_at",
        right_on=key,
        by="run_id",
        direction=direction,
        allow_exact_matches=True,
    )
    untimed = rows[rows["_at"].isna()]
    joined = pd.concat([matched, untimed], ignore_index=True) if len(untimed) else matched
    joined = joined.sort_values("_order", kind="stable", ignore_index=True)
    return joined.drop(columns=["_order", "_at"])


def fault_windows(faults: pd.DataFrame) -> pd.DataFrame:
    """run_id, fault, kind, targets, start_ms, stop_ms (missing: never stopped): one row
    per fault `start`."""
    starts = faults[faults["phase"] == "start"]
    columns = ["run_id", "fault", "kind", "targets", "ts"]
    windows = starts[columns].rename(columns={"ts": "start_ms"}).reset_index(drop=True)
    stopped = faults[faults["phase"] == "stop"]
    stops = stopped.groupby(["run_id", "fault"], sort=False)["ts"].min().rename("stop_ms")
    return left_join(windows, stops.reset_index(), ["run_id", "fault"])


def _last_fault_before(frame: pd.DataFrame, windows: pd.DataFrame, ts: str) -> pd.DataFrame:
    """`frame` with the `kind` and `start_ms` of the last fault of its run that started at
    or before its `ts` (missing: none did)."""
    starts = windows[["run_id", "kind", "start_ms"]].assign(_start=windows["start_ms"])
    out = _nearest(frame, starts.drop(columns="start_ms"), (ts, "_start"), "backward")
    out["start_ms"] = out.pop("_start")
    return out


def detection(events: pd.DataFrame, faults: pd.DataFrame) -> pd.DataFrame:
    """run_id, fault, kind, targets, start_ms, stop_ms, detected_ms, detection_ms
    (missing: not detected), detected_by (`broker_change` or `controller_elected`): one
    row per distinct fault window."""
    windows = fault_windows(faults).drop_duplicates(ignore_index=True)
    noticed = events[events["noticed"].fillna(False).astype(bool)]
    changes = pd.DataFrame(
        {"run_id": noticed["run_id"], "detected_ms": noticed["ts"], "detected_by": noticed["kind"]}
    )
    changes["_change"] = changes["detected_ms"]
    out = _nearest(windows, changes.drop(columns="detected_ms"), ("start_ms", "_change"), "forward")
    out["detected_ms"] = out.pop("_change")
    out["detection_ms"] = out["detected_ms"] - out["start_ms"]
    return out[
        [
            "run_id",
            "fault",
            "kind",
            "targets",
            "start_ms",
            "stop_ms",
            "detected_ms",
            "detection_ms",
            "detected_by",
        ]
    ]


def _since_start(events: pd.DataFrame, started_ms: Mapping[str, int]) -> pd.DataFrame:
    return events[events["ts"] >= events["run_id"].map(started_ms).astype("float64")]


def failovers(
    events: pd.DataFrame, faults: pd.DataFrame, started_ms: Mapping[str, int]
) -> pd.DataFrame:
    """run_id, node, controller_epoch, elected_ms, done_ms, duration_ms (the new
    controller's own `on_failover` time), live_brokers, brokers_updated, metadata_ms (the
    last live broker applied an UpdateMetadata of the epoch; missing: not all did), kind,
    start_ms, failover_ms, metadata_failover_ms (from start_ms to metadata_ms): one row per
    controller election after its run started (`started_ms` by run)."""
    since = _since_start(events, started_ms)
    keys = ["run_id", "node", "controller_epoch"]
    chosen = since[since["kind"] == ELECTED]
    elected = pd.DataFrame(
        {
            "run_id": chosen["run_id"],
            "node": chosen["node"],
            "controller_epoch": chosen["controller_epoch"].astype("float64"),
            "elected_ms": chosen["ts"],
        }
    )
    finished = since[since["kind"] == DONE]
    done = (
        finished.groupby(keys, dropna=False, sort=False)
        .agg(done_ms=("ts", "min"), duration_ms=("duration_ms", "min"))
        .reset_index()
    )
    done["controller_epoch"] = done["controller_epoch"].astype("float64")
    current = metadata_current(events)
    current["controller_epoch"] = pd.to_numeric(current["controller_epoch"]).astype("float64")
    pairs = left_join(left_join(elected, done, keys), current, keys)
    out = _last_fault_before(pairs, fault_windows(faults), "elected_ms")
    out["failover_ms"] = out["done_ms"] - out["start_ms"]
    out["metadata_failover_ms"] = out["metadata_ms"].astype("float64") - out["start_ms"]
    return out


def elections(
    events: pd.DataFrame, faults: pd.DataFrame, started_ms: Mapping[str, int]
) -> pd.DataFrame:
    """run_id, topic, partition, leader, leader_epoch, strategy, elected_ms, kind,
    start_ms, since_fault_ms: every leader election after its run started (`started_ms` by
    run), but the initial ones."""
    since = _since_start(events, started_ms)
    strategy = since["strategy"]
    chosen = since[(since["kind"] == "leader_elected") & strategy.notna() & (strategy != "initial")]
    picked = chosen[["run_id", "topic", "partition", "leader", "leader_epoch", "strategy", "ts"]]
    out = _last_fault_before(
        picked.rename(columns={"ts": "elected_ms"}), fault_windows(faults), "elected_ms"
    )
    out["since_fault_ms"] = out["elected_ms"] - out["start_ms"]
    return out


def _nanos(history: pd.DataFrame) -> pd.Series:
    """`time_ns` as exact nullable integers (float64 would round epoch nanoseconds)."""
    return history["time_ns"].astype("Int64").where(history["has_time_ns"].to_numpy(bool))


def sends(history: pd.DataFrame) -> pd.DataFrame:
    """run_id, process, op_id, topic, partition, invoke_ms, type (ok/fail/info; info when
    it never completed), done_ms, latency_ms: every send paired with its completion."""
    keys = ["run_id", "process", "op_id"]
    invoked = history[history["type"] == "invoke"]
    invokes = (
        invoked[[*keys, "topic", "partition", "wall_ms"]]
        .rename(columns={"wall_ms": "invoke_ms"})
        .assign(invoke_ns=_nanos(invoked))
    )
    completed = history[history["type"].notna() & (history["type"] != "invoke")]
    done = (
        completed[[*keys, "type", "wall_ms"]]
        .rename(columns={"wall_ms": "done_ms"})
        .assign(done_ns=_nanos(completed))
    )
    out = left_join(invokes, done, keys)
    out["type"] = out["type"].astype("object").where(out["type"].notna(), "info")
    nanos = (out["done_ns"] - out["invoke_ns"]).astype("float64")
    out["latency_ms"] = nanos.to_numpy(dtype="float64", na_value=np.nan) / 1e6
    return out.drop(columns=["invoke_ns", "done_ns"])


def unavailability(sent: pd.DataFrame) -> pd.DataFrame:
    """run_id, topic, partition, start_ms, end_ms, duration_ms, closed (an acknowledged
    send ended the window), failed (sends in it), from `sends`."""
    part = ["run_id", "topic", "partition"]
    order = [*part, "invoke_ms", "op_id"]
    s = sent.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)
    ok = (s["type"] == "ok").astype("int64")
    running = ok.groupby([s[c] for c in part], dropna=False, sort=False).cumsum()
    # rows equal in the window's order are peers: each counts the acknowledgements of all
    s["island"] = running.groupby([s[c] for c in order], dropna=False, sort=False).transform("max")
    bad = s[s["type"] != "ok"]
    windows = (
        bad.groupby([*part, "island"], dropna=False, sort=False)
        .agg(
            start_ms=("invoke_ms", "min"),
            last_failed_ms=("done_ms", "max"),
            failed=("invoke_ms", "size"),
        )
        .reset_index()
    )
    acked = s[s["type"] == "ok"]
    closing = pd.DataFrame(
        {
            "run_id": acked["run_id"],
            "topic": acked["topic"],
            "partition": acked["partition"],
            "island": acked["island"] - 1,
            "ok_ms": acked["done_ms"],
        }
    )
    out = left_join(windows, closing, [*part, "island"])
    out["closed"] = out["ok_ms"].notna()
    out["end_ms"] = out["ok_ms"].where(out["ok_ms"].notna(), out["last_failed_ms"])
    out["duration_ms"] = out["end_ms"] - out["start_ms"]
    return out[
        ["run_id", "topic", "partition", "start_ms", "end_ms", "duration_ms", "closed", "failed"]
    ]


def _window(ms: pd.Series, window_ms: int) -> pd.Series:
    return np.floor(ms.astype("float64") / window_ms) * window_ms


def latency(sent: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    """run_id, window_start_ms, sends, p50_ms, p95_ms, p99_ms, max_ms: acknowledged sends
    by run and the window their invoke fell in."""
    ok = sent[sent["type"] == "ok"]
    keys = pd.DataFrame(
        {"run_id": ok["run_id"], "window_start_ms": _window(ok["invoke_ms"], window_ms)}
    )
    codes, groups = group_codes(keys)
    values = ok["latency_ms"].to_numpy(dtype="float64")
    out = groups.copy()
    out["sends"] = np.bincount(codes, minlength=len(groups))
    quantiles = percentiles(codes, values, len(groups), (*QUANTILES, 1.0))
    for i, q in enumerate(QUANTILES):
        out[f"p{round(q * 100)}_ms"] = quantiles[:, i]
    out["max_ms"] = quantiles[:, len(QUANTILES)]
    return out


def group_codes(keys: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """For `percentiles`: each row's group among the distinct rows of `keys` (missing
    values a group of their own), and those distinct rows."""
    groups = keys.drop_duplicates(ignore_index=True)
    if groups.empty:
        return np.zeros(0, dtype="int64"), groups
    index = pd.MultiIndex.from_frame(groups)
    return index.get_indexer(pd.MultiIndex.from_frame(keys)), groups


#: The outcomes of a completed or never completed send, as `rates` counts them.
OUTCOMES = ("ok", "fail", "info")


def rates(sent: pd.DataFrame, window_ms: int) -> pd.DataFrame:
    """run_id, window_start_ms, ok, fail, info: send completions per run and window."""
    at = sent["done_ms"].where(sent["done_ms"].notna(), sent["invoke_ms"])
    flags = pd.DataFrame({o: (sent["type"] == o).astype("int64") for o in OUTCOMES})
    by = [sent["run_id"].rename("run_id"), _window(at, window_ms).rename("window_start_ms")]
    return flags.groupby(by, dropna=False, sort=False).sum().reset_index()


def healed(snapshots: pd.DataFrame) -> pd.DataFrame:
    """run_id, topic, partition, snapshots, healed_after_ms (missing: never within the
    snapshots): when each partition was whole again after the final heal."""
    whole_at = snapshots["after_heal_ms"].where(snapshots["whole"].fillna(False).astype(bool))
    grouped = snapshots.assign(whole_at=whole_at).groupby(
        ["run_id", "topic", "partition"], dropna=False, sort=False
    )
    return grouped.agg(
        snapshots=("after_heal_ms", "size"), healed_after_ms=("whole_at", "min")
    ).reset_index()
