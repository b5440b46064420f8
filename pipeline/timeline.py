"""A run's timeline as its page draws it (`static/timeline.js`): every time in seconds
since the run's start, on one axis: fault bands (took effect to undone), controller
tenures, each partition's leader and ISR over time, the produce and poll rates per
window, the produce latency quantiles and the failover and election markers. Pure
functions of the run's events, fault phases and per-run tables; the driver's thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["Event", "timeline"]

#: One event as the per-run pass hands it on: `[node, line, ts, kind, fields]`.
Event = Sequence[Any]


def _t(ts_ms: float, started_ms: int) -> float:
    return round((ts_ms - started_ms) / 1000, 3)


def _faults(phases: Sequence[dict[str, Any]], started_ms: int, end: float) -> list[dict[str, Any]]:
    """One band per fault: from its effect (its start when none is logged) to its undo
    (its stop, or the run's end)."""
    by_fault: dict[str, dict[str, Any]] = {}
    for p in phases:
        if type(p.get("ts")) is not int or not p.get("fault"):
            continue
        fault = by_fault.setdefault(
            str(p["fault"]),
            {"fault": str(p["fault"]), "kind": str(p.get("kind")), "targets": p.get("targets")},
        )
        fault[str(p.get("phase"))] = _t(p["ts"], started_ms)
    bands = []
    for f in by_fault.values():
        start = f.get("took_effect", f.get("start"))
        if start is None:
            continue
        stop = f.get("undone", f.get("stop", end))
        targets = f["targets"] if isinstance(f["targets"], list) else []
        bands.append(
            {
                "fault": f["fault"],
                "kind": f["kind"],
                "node": ", ".join(map(str, targets)),
                "from": start,
                "to": stop,
                "started": f.get("start"),
                "stopped": f.get("stop"),
            }
        )
    return sorted(bands, key=lambda b: b["from"])


def _controllers(events: Sequence[Event], started_ms: int, end: float) -> list[dict[str, Any]]:
    """Each controller's tenure: its `controller_elected` to its `controller_resigned`,
    its process's next start or stop, or the run's end."""
    tenures: list[dict[str, Any]] = []
    open_by_node: dict[str, dict[str, Any]] = {}
    for node, _line, ts, kind, fields in events:
        at = _t(ts, started_ms)
        if kind == "controller_elected":
            tenure = {"node": node, "epoch": fields.get("controller_epoch"), "from": at, "to": end}
            tenures.append(tenure)
            open_by_node[node] = tenure
        elif kind in ("controller_resigned", "node_started", "node_stopped") and (
            node in open_by_node
        ):
            open_by_node.pop(node)["to"] = at
    return tenures


def _partitions(events: Sequence[Event], started_ms: int) -> list[dict[str, Any]]:
    """Each partition's changes of leader and ISR: `[t, leader, isr, leader epoch, by]`."""
    lanes: dict[tuple[str, int], list[list[Any]]] = {}
    for node, _line, ts, kind, fields in events:
        if kind not in ("leader_elected", "isr_changed"):
            continue
        topic, partition = fields.get("topic"), fields.get("partition")
        if not isinstance(topic, str) or type(partition) is not int:
            continue
        lanes.setdefault((topic, partition), []).append(
            [
                _t(ts, started_ms),
                fields.get("leader"),
                fields.get("isr"),
                fields.get("leader_epoch"),
                f"{kind} by {node}",
            ]
        )
    return [{"name": f"{t}-{p}", "changes": lanes[(t, p)]} for t, p in sorted(lanes)]


def _series(frame: pd.DataFrame, started_ms: int, columns: Sequence[str]) -> dict[str, Any]:
    frame = frame.sort_values("window_start_ms")
    series: dict[str, Any] = {"t": [_t(v, started_ms) for v in frame["window_start_ms"].tolist()]}
    for c in columns:
        series[c] = [None if pd.isna(v) else round(float(v), 3) for v in frame[c].tolist()]
    return series


def _markers(
    failovers: pd.DataFrame, elections: pd.DataFrame, started_ms: int
) -> list[dict[str, Any]]:
    marks = []
    for f in failovers.itertuples(index=False):
        epoch = "" if pd.isna(f.controller_epoch) else f" (epoch {int(f.controller_epoch)})"
        marks.append(
            {
                "t": _t(f.elected_ms, started_ms),
                "kind": "failover",
                "text": f"{f.node} elected{epoch}",
            }
        )
        if not pd.isna(f.done_ms):
            marks.append(
                {
                    "t": _t(f.done_ms, started_ms),
                    "kind": "failover",
                    "text": f"{f.node} failover done",
                }
            )
    for e in elections.itertuples(index=False):
        marks.append(
            {
                "t": _t(e.elected_ms, started_ms),
                "kind": "election",
                "text": f"{e.topic}-{e.partition}: leader {e.leader} (epoch {e.leader_epoch})",
            }
        )
    return sorted(marks, key=lambda m: m["t"])


def timeline(
    started_ms: int,
    events: Sequence[Event],
    faults: Sequence[dict[str, Any]],
    tables: dict[str, pd.DataFrame],
    window_ms: int,
) -> dict[str, Any]:
    """The run's timeline: `events` in time order, its fault phases and its rows of the
    per-run `tables` (`rates`, `latency`, `failovers`, `elections`)."""
    rates, latency = tables["rates"], tables["latency"]
    last = [ts for _, _, ts, _, _ in events[-1:]]
    last += [p["ts"] for p in faults if type(p.get("ts")) is int]
    last += [v + window_ms for v in rates["window_start_ms"].tolist()]
    end = max([_t(v, started_ms) for v in last] or [0.0])
    first = min([_t(ts, started_ms) for _, _, ts, _, _ in events[:1]] + [0.0])
    return {
        "start": first,
        "end": end,
        "window_s": window_ms / 1000,
        "faults": _faults(faults, started_ms, end),
        "controllers": _controllers(events, started_ms, end),
        "partitions": _partitions(events, started_ms),
        "rates": _series(rates, started_ms, ("ok", "fail", "info")),
        "latency": _series(latency, started_ms, ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
        "markers": _markers(tables["failovers"], tables["elections"], started_ms),
    }
