"""The report's pages keep their size budgets without Spark: the front page of 1,000 runs
stays under 5 MB, and a run's page with its scripts under 2 MB however many events the
run logged (the event browser holds the first `BROWSER_BYTES` and those a witness names);
neither holds a raw wall-clock number in what it shows, and what the run logged is
escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pandas as pd

from pipeline.index_page import write_index
from pipeline.run_page import write_run_page
from pipeline.runs import RunConfig
from pipeline.timeline import TIMELINE_LANES

T0 = 1_700_000_000_000
THIRTEEN_DIGITS = re.compile(r"(?<!\d)\d{13,}(?!\d)")


def _run(root: Path, i: int) -> RunConfig:
    return RunConfig(
        str(root / f"run-{i}"),
        f"run-{i:04d}",
        f"scenario-{i % 50}",
        i // 50,
        T0 + i,
        "t",
        ("acknowledged_writes",),
        30.0,
        False,
        "kafka-1188" if i % 7 == 0 else "",
    )


def test_the_front_page_of_a_thousand_runs_stays_under_5_mb(tmp_path: Path) -> None:
    runs = [_run(tmp_path, i) for i in range(1_000)]
    verdicts = pd.DataFrame(
        {
            "run_id": [r.run_id for r in runs],
            "ok": [i % 3 != 0 for i in range(1_000)],
            "violated": [
                ["acknowledged_writes", "lost-write"] if i % 3 == 0 else [] for i in range(1_000)
            ],
        }
    )
    measured = pd.DataFrame(
        {
            "run_id": [r.run_id for r in runs] * 4,
            "kind": ["kill"] * 4_000,
            "measure": [
                "failure detection",
                "leader election",
                "controller failover",
                "convergence",
            ]
            * 1_000,
            "value_ms": [float(i % 977) for i in range(4_000)],
            "scenario": [r.scenario for r in runs] * 4,
        }
    )
    index = write_index(tmp_path, runs, {"verdicts": verdicts}, measured, [tmp_path], [], T0)
    html = index.read_text()
    assert len(index.read_bytes()) < 5_000_000
    assert html.count('<a class="cell ') == 1_000
    assert THIRTEEN_DIGITS.findall(re.sub(r"<[^>]+>", " ", html)) == []


def _empty(*columns: str) -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in columns})


def test_a_run_page_stays_under_2_mb_and_keeps_its_witness_events(tmp_path: Path) -> None:
    run = _run(tmp_path, 1)
    (tmp_path / "run-1").mkdir()
    (tmp_path / "run-1" / "config.json").write_text(json.dumps({"started_ms": T0, "seed": 1}))
    events = [
        ["broker1", i, T0 + i, "request_accepted", {"api": "LeaderAndIsr", "registered_ms": T0}]
        for i in range(1, 60_001)
    ]
    witness = {"node": "broker1", "line": 59_999, "ts": T0 + 59_999, "kind": "request_accepted"}
    verdict = {
        "ok": False,
        "not_judged": [],
        "invariants": [
            {
                "name": "controller_epoch_fencing",
                "ok": False,
                "judged": True,
                "allowed": False,
                "checked": 1,
                "note": "",
                "violations": [
                    {"subject": "s", "explanation": "<b>e</b> & more", "events": [witness]}
                ],
            }
        ],
    }
    page = {
        "verdict_json": json.dumps(verdict),
        "events_json": orjson.dumps(events).decode(),
        "events_total": 90_000,
        "faults_json": "[]",
        "ops_json": "[]",
    }
    tables = {
        "rates": _empty("window_start_ms", "ok", "fail", "info"),
        "latency": _empty("window_start_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"),
        "failovers": _empty("node", "controller_epoch", "elected_ms", "done_ms"),
        "elections": _empty("topic", "partition", "leader", "leader_epoch", "elected_ms"),
    }
    written = write_run_page(tmp_path, run, page, tables, 1_000, "violated")
    where = tmp_path / written.href
    assert sum(p.stat().st_size for p in where.parent.iterdir() if p.suffix != ".csv") < 2_000_000
    browser = (where.parent / "events.js").read_text()
    assert '"broker1",59999,"request_accepted"' in browser
    assert '"total":90000' in browser
    assert THIRTEEN_DIGITS.findall(browser) == []
    html = where.read_text()
    assert 'href="events.html#node=broker1&amp;line=59999"' in html
    assert "s: &lt;b&gt;e&lt;/b&gt; &amp; more" in html  # the pages are autoescaped


def test_a_run_page_of_ten_thousand_partitions_draws_a_bounded_timeline(tmp_path: Path) -> None:
    run = _run(tmp_path, 2)
    parts = range(10_000)
    events = [
        ["broker1", 3 * p + k, T0 + 1_000 + p, kind, {"topic": "t", "partition": p, **fields}]
        for p in parts
        for k, (kind, fields) in enumerate(
            (
                ("leader_elected", {"leader": 1, "isr": [1, 2, 3], "leader_epoch": 1}),
                ("isr_changed", {"leader": 1, "isr": [1, 2], "leader_epoch": 1}),
                ("isr_changed", {"leader": 1, "isr": [1, 2, 3], "leader_epoch": 1}),
            )
        )
    ]
    named = {"subject": "t-7777", "explanation": "leader not in its ISR", "events": []}
    verdict = {
        "ok": False,
        "not_judged": [],
        "invariants": [
            {
                "name": "leader_in_isr",
                "ok": False,
                "judged": True,
                "allowed": False,
                "checked": 1,
                "note": "",
                "violations": [named],
            }
        ],
    }
    page = {
        "verdict_json": json.dumps(verdict),
        "events_json": orjson.dumps(events).decode(),
        "events_total": len(events),
        "faults_json": "[]",
        "ops_json": "[]",
    }
    elections = pd.DataFrame(
        {
            "topic": ["t"] * 10_000,
            "partition": list(parts),
            "leader": [1] * 10_000,
            "leader_epoch": [1] * 10_000,
            "elected_ms": [T0 + 1_000 + p for p in parts],
        }
    )
    tables = {
        "rates": _empty("window_start_ms", "ok", "fail", "info"),
        "latency": _empty("window_start_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"),
        "failovers": _empty("node", "controller_epoch", "elected_ms", "done_ms"),
        "elections": elections,
    }
    written = write_run_page(tmp_path, run, page, tables, 1_000, "violated")
    where = (tmp_path / written.href).parent
    assert sum(p.stat().st_size for p in where.iterdir() if p.suffix != ".csv") < 2_000_000
    drawn = orjson.loads((where / "timeline.js").read_text().split("=", 1)[1].strip().rstrip(";"))
    lanes = [lane["name"] for lane in drawn["partitions"]]
    assert lanes == [f"t-{p}" for p in range(TIMELINE_LANES)] + ["t-7777"]
    assert drawn["partitions_total"] == 10_000
    assert {m["text"].split(":")[0] for m in drawn["markers"]} == set(lanes)
    assert drawn["elections_left_out"] == 10_000 - len(lanes)
    html = (where / "index.html").read_text()
    assert f"draws {len(lanes)} of the run's 10000 partitions" in html
    assert len((where / "events.csv").read_text().splitlines()) == len(events) + 1
