"""A run's timeline as its page draws it (`static/timeline.js`): every time in seconds
since the run's start, on one axis: fault bands (took effect to undone), controller
tenures, each partition's leader and ISR over time, the produce and poll rates per
window, the produce latency quantiles and the failover and election markers. Pure
functions of the run's events, fault phases and per-run tables; the driver's thread.

Bounded for runs with thousands of partitions: it draws the lanes of the partitions a
witness or a fault names and the first `TIMELINE_LANES` others (in name order), and
election markers only for the lanes drawn; `partitions_total` and `elections_left_out`
count what it left out, which the event browser and `events.csv` still hold.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = ["TIMELINE_LANES", "Event", "named_partitions", "timeline"]

#: One event as the per-run pass hands it on: `[node, line, ts, kind, fields]`.
Event = Sequence[Any]

#: The partition lanes drawn at most besides those a witness or a fault names.
TIMELINE_LANES = 40


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


def _partition_name(fields: Mapping[str, Any]) -> str | None:
    topic, partition = fields.get("topic"), fields.get("partition")
    if isinstance(topic, str) and type(partition) is int:
        return f"{topic}-{partition}"
    return None


def _named_in(document: Mapping[str, Any] | None) -> Iterator[str]:
    for result in (document or {}).get("invariants", ()):
        for violation in result.get("violations", ()):
            yield str(violation.get("subject", "")).split(" ", 1)[0]
            for event in violation.get("events", ()):
                name = _partition_name(event.get("fields") or {})
                if name:
                    yield name


def named_partitions(
    document: Mapping[str, Any] | None, faults: Sequence[Mapping[str, Any]]
) -> set[str]:
    """The partitions (`<topic>-<partition>`) the verdict's witnesses (their subject's
    first word, their events' fields) and the faults' parameters name: always drawn."""
    named = set(_named_in(document))
    for phase in faults:
        params = phase.get("params")
        name = _partition_name(params) if isinstance(params, Mapping) else None
        if name:
            named.add(name)
    return named


def _lanes(
    lanes: Mapping[tuple[str, int], list[list[Any]]], named: Collection[str]
) -> list[tuple[str, int]]:
    """The lanes drawn: the named ones and the first `TIMELINE_LANES` others, in order."""
    drawn, others = [], 0
    for t, p in sorted(lanes):
        if f"{t}-{p}" in named:
            drawn.append((t, p))
        elif others < TIMELINE_LANES:
            drawn.append((t, p))
            others += 1
    return drawn


def _partitions(events: Sequence[Event], started_ms: int) -> dict[tuple[str, int], list[list[Any]]]:
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
    return lanes


def _series(frame: pd.DataFrame, started_ms: int, columns: Sequence[str]) -> dict[str, Any]:
    frame = frame.sort_values("window_start_ms")
    series: dict[str, Any] = {"t": [_t(v, started_ms) for v in frame["window_start_ms"].tolist()]}
    for c in columns:
        series[c] = [None if pd.isna(v) else round(float(v), 3) for v in frame[c].tolist()]
    return series


def _markers(
    failovers: pd.DataFrame,
    elections: pd.DataFrame,
    started_ms: int,
    drawn: Collection[str] | None,
) -> tuple[list[dict[str, Any]], int]:
    """The failover markers and the election markers of the lanes `drawn` (all when
    None), and how many elections were left out."""
    marks, left_out = [], 0
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
        if drawn is not None and f"{e.topic}-{e.partition}" not in drawn:
            left_out += 1
            continue
        marks.append(
            {
                "t": _t(e.elected_ms, started_ms),
                "kind": "election",
                "text": f"{e.topic}-{e.partition}: leader {e.leader} (epoch {e.leader_epoch})",
            }
        )
    return sorted(marks, key=lambda m: m["t"]), left_out


def timeline(
    started_ms: int,
    events: Sequence[Event],
    faults: Sequence[dict[str, Any]],
    tables: dict[str, pd.DataFrame],
    window_ms: int,
    named: Collection[str] = (),
) -> dict[str, Any]:
    """The run's timeline: `events` in time order, its fault phases and its rows of the
    per-run `tables` (`rates`, `latency`, `failovers`, `elections`); the partitions
    `named` (`named_partitions`) are drawn however many there are."""
    rates, latency = tables["rates"], tables["latency"]
    last = [ts for _, _, ts, _, _ in events[-1:]]
    last += [p["ts"] for p in faults if type(p.get("ts")) is int]
    last += [v + window_ms for v in rates["window_start_ms"].tolist()]
    end = max([_t(v, started_ms) for v in last] or [0.0])
    first = min([_t(ts, started_ms) for _, _, ts, _, _ in events[:1]] + [0.0])
    lanes = _partitions(events, started_ms)
    drawn = _lanes(lanes, frozenset(named))
    names = {f"{t}-{p}" for t, p in drawn} if len(drawn) < len(lanes) else None
    markers, elections_left_out = _markers(
        tables["failovers"], tables["elections"], started_ms, names
    )
    return {
        "start": first,
        "end": end,
        "window_s": window_ms / 1000,
        "faults": _faults(faults, started_ms, end),
        "controllers": _controllers(events, started_ms, end),
        "partitions": [{"name": f"{t}-{p}", "changes": lanes[(t, p)]} for t, p in drawn],
        "partitions_total": len(lanes),
        "rates": _series(rates, started_ms, ("ok", "fail", "info")),
        "latency": _series(latency, started_ms, ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
        "markers": markers,
        "elections_left_out": elections_left_out,
    }
