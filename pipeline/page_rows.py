"""One run's row of `schemas.PAGES`, made in the report's per-run pass (`pipeline.run_pass`)
from the lines it read already: the verdict document, the run's events in time order,
its fault phases and the history operations its witnesses name. Bounded, so that a
thousand large runs fit in the driver: every event the timeline draws or a witness
names, and the others up to `PAGE_EVENT_BYTES`. Pure; an executor's Python worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from rundir.history import FINAL_READ_PROCESS, HistoryOp
from rundir.reader import RunLines

__all__ = ["PAGE_EVENT_BYTES", "TIMELINE_KINDS", "page_row"]

#: The bytes of JSON of the events a run's row holds at most besides those always kept.
PAGE_EVENT_BYTES = 3_000_000
#: The event kinds the timeline draws (`pipeline.timeline`): always kept.
TIMELINE_KINDS = frozenset(
    (
        "controller_elected",
        "controller_resigned",
        "node_started",
        "node_stopped",
        "leader_elected",
        "isr_changed",
    )
)
#: The keys of an event line that its place in the row already says.
_EVENT_PLACE = frozenset(("v", "ts", "node", "kind"))


def _named(verdict: Mapping[str, Any] | None) -> tuple[set[tuple[str, int]], set[str]]:
    """The events (node, line) and operations (`<process>#<op_id>`) the witnesses name; a
    violation naming the final read (`final-read`) names its operations on the violation's
    partition (`final-read@<topic>-<partition>`, the subject's first word)."""
    events: set[tuple[str, int]] = set()
    ops: set[str] = set()
    for result in (verdict or {}).get("invariants", ()):
        for violation in result["violations"]:
            events.update((e["node"], e["line"]) for e in violation.get("events", ()))
            for op in violation.get("ops", ()):
                if op == FINAL_READ_PROCESS:
                    subject = str(violation.get("subject", "")).split(" ", 1)[0]
                    ops.add(f"{FINAL_READ_PROCESS}@{subject}")
                else:
                    ops.add(op)
    return events, ops


def _is_named(op: HistoryOp, named: set[str]) -> bool:
    if op.process == FINAL_READ_PROCESS:
        return f"{FINAL_READ_PROCESS}@{op.topic}-{op.partition}" in named
    return f"{op.process}#{op.op_id}" in named


def page_row(
    run_id: str,
    verdict_json: str | None,
    lines: RunLines,
    faults: list[Any],
    decoded: Mapping[Path, Sequence[HistoryOp]] | None,
) -> dict[str, Any]:
    """The run's row of `schemas.PAGES`: its events as `[node, line, ts, kind, fields]`
    in time order (lines without an integer `ts` or a `kind` left out; bounded as the
    module says, `events_total` counting them all), and the history operations its
    verdict's witnesses name."""
    named_events, named_ops = _named(orjson.loads(verdict_json) if verdict_json else None)
    ops = [
        {"op": f"{op.process}#{op.op_id}", **orjson.loads(op.to_json())}
        for history in (decoded or {}).values()
        for op in history
        if _is_named(op, named_ops)
    ]
    every = sorted(
        (
            (value["ts"], node, line, value)
            for node, numbered in lines.events.items()
            for line, value in numbered
            if isinstance(value, dict) and type(value.get("ts")) is int and "kind" in value
        ),
        key=lambda e: e[:3],
    )
    events = []
    budget = PAGE_EVENT_BYTES
    for ts, node, line, value in every:
        fields = {k: v for k, v in value.items() if k not in _EVENT_PLACE}
        event = [node, line, ts, value["kind"], fields]
        if budget > 0:
            budget -= len(orjson.dumps(event))
        if budget > 0 or value["kind"] in TIMELINE_KINDS or (node, line) in named_events:
            events.append(event)
    return {
        "run_id": run_id,
        "verdict_json": verdict_json,
        "events_json": orjson.dumps(events).decode(),
        "events_total": len(every),
        "faults_json": orjson.dumps([f for f in faults if isinstance(f, dict)]).decode(),
        "ops_json": orjson.dumps(ops).decode(),
    }
