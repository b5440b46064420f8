"""One run's pages in the report, `runs/<run_id>/`: `index.html` (what ran, the verdict
table, every violation's witness in words with links to the events that prove it, and
the interactive timeline drawn by `static/timeline.js` from `timeline.js`, which marks
each witness shown at its time: the marker links to the witness's row, the row's time
zooms the timeline to it), `events.html` (the event browser, `static/events.js` over
`events.js`), the run's events the report holds as `events.csv` (`pipeline.page_rows`
bounds them; the run directory has all) and the whole verdict, every violation of it,
as `verdict.json`.
Plain files that open from disk: the data are scripts that set a global, as a browser
reads no JSON file beside a page opened from disk. The driver's thread.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from pipeline.human import iso, shown_value
from pipeline.pages import render
from pipeline.runs import RunConfig
from pipeline.timeline import Event, named_partitions, timeline
from pipeline.witnesses import Witness, witness

__all__ = [
    "BROWSER_BYTES",
    "VERDICT",
    "WITNESSES_SHOWN",
    "RunPage",
    "witness_id",
    "witness_marks",
    "write_run_page",
]

#: The bytes of events the browser holds at most, beyond those the witnesses name (which
#: it always holds), so that a run's page and its scripts stay under 2 MB; events.csv has
#: every event.
BROWSER_BYTES = 1_500_000
#: The witnesses shown per invariant at most; the verdict table counts them all.
WITNESSES_SHOWN = 20
#: The verdict's JSON beside the run's page.
VERDICT = "verdict.json"


@dataclass(frozen=True, slots=True)
class RunPage:
    """What the index needs of a written run page: where it and its verdict's JSON are
    (None when the run was not judged), relative to the report, and its earliest witness
    in words with its time (None when none has a time)."""

    run_id: str
    href: str
    verdict_href: str | None = None
    first_witness: str | None = None


def _script(path: Path, name: str, data: Any) -> None:
    """`data` as a script that sets `window[name]` (JSON, with `</` kept out of HTML)."""
    text = orjson.dumps(data).decode().replace("</", "<\\/")
    path.write_text(f"window.{name} = {text};\n", encoding="utf-8")


def _verdict_rows(document: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for r in (document or {}).get("invariants", ()):
        status = "not judged" if not r["judged"] else "ok" if r["ok"] else "VIOLATED"
        if r.get("allowed") and r["violations"]:
            status = "allowed"
        rows.append(
            {
                "name": r["name"],
                "status": status,
                "checked": r["checked"],
                "violations": len(r["violations"]),
                "note": r["note"],
            }
        )
    return rows


def witness_id(invariant: str, index: int) -> str:
    """The anchor of the witness row of `invariant`'s violation number `index` (from 0,
    in the verdict's order)."""
    return f"witness-{invariant}-{index + 1}"


def _witnesses(
    document: Mapping[str, Any] | None, started_ms: int, ops: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    shown = []
    for r in (document or {}).get("invariants", ()):
        if not r["violations"]:
            continue
        found: list[Witness] = [
            witness(r["name"], v, started_ms, ops) for v in r["violations"][:WITNESSES_SHOWN]
        ]
        shown.append(
            {
                "name": r["name"],
                "allowed": bool(r.get("allowed")),
                "meaning": found[0].meaning,
                "anomaly": found[0].anomaly,
                "witnesses": [(witness_id(r["name"], i), w) for i, w in enumerate(found)],
                "more": max(0, len(r["violations"]) - WITNESSES_SHOWN),
            }
        )
    return sorted(shown, key=lambda w: w["allowed"])


#: The characters of a witness's words a timeline marker's hover text holds at most.
_MARK_WORDS = 300


def witness_marks(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The timeline's marker of each witness shown that has a time (`_witnesses`'
    groups): its row's anchor, invariant, kind (`violation`, `anomaly` or `allowed`),
    the span of its proof (`from`, `t`) and its words; in time order."""
    marks = []
    for group in groups:
        kind = "allowed" if group["allowed"] else "anomaly" if group["anomaly"] else "violation"
        for anchor, w in group["witnesses"]:
            if w.at is None:
                continue
            words = (
                w.words if len(w.words) <= _MARK_WORDS else w.words[: _MARK_WORDS - 1] + "\u2026"
            )
            marks.append(
                {
                    "id": anchor,
                    "invariant": w.invariant,
                    "kind": kind,
                    "from": w.since,
                    "t": w.at,
                    "text": words,
                }
            )
    return sorted(marks, key=lambda m: (m["t"], m["id"]))


def _first_witness(marks: Sequence[Mapping[str, Any]]) -> str | None:
    """The earliest failing witness (an allowed one when none fails) in words."""
    failing = [m for m in marks if m["kind"] != "allowed"] or list(marks)
    if not failing:
        return None
    first = min(failing, key=lambda m: m["t"])
    return f"first witness {first['invariant']} at {first['t']:.3f} s"


def _partition_of(fields: Mapping[str, Any]) -> str:
    topic, partition = fields.get("topic"), fields.get("partition")
    return f"{topic}-{partition}" if topic is not None and partition is not None else ""


def _browser(
    events: Sequence[Event],
    total: int,
    ops: Sequence[Mapping[str, Any]],
    document: Any,
    started_ms: int,
) -> dict[str, Any]:
    """The event browser's rows, every value as people read it: the first events up to
    `BROWSER_BYTES` and every event a witness names, and the operations the witnesses
    name."""
    named = {
        (e["node"], e["line"])
        for r in (document or {}).get("invariants", ())
        for v in r["violations"]
        for e in v.get("events", ())
    }
    shown = ("v", "seq", "mono_ms", "topic", "partition")
    rows = []
    budget = BROWSER_BYTES
    for node, line, ts, kind, fields in events:
        text = ", ".join(
            f"{k} {shown_value(k, v, started_ms)}" for k, v in fields.items() if k not in shown
        )
        row = [round((ts - started_ms) / 1000, 3), node, line, kind, _partition_of(fields), text]
        budget -= len(text) + len(node) + len(kind) + 40
        if budget >= 0 or (node, line) in named:
            rows.append(row)
    op_rows = [
        [
            round((op.get("wall_ms", started_ms) - started_ms) / 1000, 3),
            op["op"],
            f"{op.get('type')} {op.get('f')}",
            f"{op.get('topic')}-{op.get('partition')}",
            ", ".join(
                f"{k} {shown_value(k, v, started_ms)}"
                for k, v in op.items()
                if k not in ("op", "v", "type", "f", "topic", "partition", "time_ns", "wall_ms")
            ),
        ]
        for op in ops
    ]
    return {"events": rows, "kept": len(events), "total": total, "ops": op_rows}


def _write_csv(path: Path, events: Sequence[Event]) -> None:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["ts_ms", "node", "line", "kind", "fields"])
        for node, line, ts, kind, fields in events:
            writer.writerow([ts, node, line, kind, json.dumps(fields, sort_keys=True)])


def write_run_page(
    out: Path,
    run: RunConfig,
    page: Mapping[str, Any],
    tables: dict[str, pd.DataFrame],
    window_ms: int,
    verdict_words: str,
) -> RunPage:
    """Write the pages of `run` under `out/runs/<run_id>/` from its row of
    `schemas.PAGES` (`page`) and its rows of the per-run `tables`."""
    where = out / "runs" / run.run_id
    where.mkdir(parents=True, exist_ok=True)
    events: list[Event] = orjson.loads(page["events_json"] or "[]")
    faults: list[dict[str, Any]] = orjson.loads(page["faults_json"] or "[]")
    ops: list[dict[str, Any]] = orjson.loads(page["ops_json"] or "[]")
    document = json.loads(page["verdict_json"]) if page["verdict_json"] else None
    drawn = timeline(
        run.started_ms, events, faults, tables, window_ms, named_partitions(document, faults)
    )
    violations = _witnesses(document, run.started_ms, ops)
    drawn["witnesses"] = witness_marks(violations)
    _script(where / "timeline.js", "RUN_TIMELINE", drawn)
    if document is not None:
        (where / VERDICT).write_text(
            json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    total = len(events) if pd.isna(page["events_total"]) else int(page["events_total"])
    browser = _browser(events, total, ops, document, run.started_ms)
    _script(where / "events.js", "RUN_EVENTS", browser)
    _write_csv(where / "events.csv", events)
    try:
        config = json.loads((Path(run.path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    settings = [
        (key, shown_value(key, value, None))
        for key, value in sorted(config.items())
        if key != "started_ms"
    ]
    common = {"run": run, "started": iso(run.started_ms), "static": "../../static"}
    render(
        "run.html.j2",
        where / "index.html",
        **common,
        settings=settings,
        verdict=verdict_words,
        ok=None if document is None else bool(document["ok"]),
        invariants=_verdict_rows(document),
        violations=violations,
        untimed=sum(w.at is None for group in violations for _, w in group["witnesses"]),
        verdict_json=VERDICT if document is not None else None,
        unread=(document or {}).get("unread", []),
        lanes=(len(drawn["partitions"]), drawn["partitions_total"]),
        elections_left_out=drawn["elections_left_out"],
    )
    render("events.html.j2", where / "events.html", **common)
    return RunPage(
        run.run_id,
        f"runs/{run.run_id}/index.html",
        f"runs/{run.run_id}/{VERDICT}" if document is not None else None,
        _first_witness(drawn["witnesses"]),
    )
