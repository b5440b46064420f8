"""A failure followed from the front page to its witness on the run's timeline, without
Spark: the run's page writes a timeline marker for each witness shown that has a time
(its row's anchor, kind, the span of its proof, its words), each row links to the
timeline at its time, the whole verdict lies beside the page as `verdict.json`, and the
front page's grid and failing table name the earliest witness and link the JSON. A blind
bug hunt's summary found among the inputs is a table on the front page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from pipeline.hunt_summary import find_hunts, read_hunt
from pipeline.hunt_testing import write_hunt
from pipeline.index_page import failing, grid, write_index
from pipeline.run_page import RunPage, witness_marks, write_run_page
from pipeline.runs import RunConfig
from pipeline.witnesses import witness
from rundir.invariants import names

T0 = 1_700_000_000_000
THIRTEEN_DIGITS = re.compile(r"(?<!\d)\d{13,}(?!\d)")


def _run(root: Path, run_id: str = "run-1") -> RunConfig:
    return RunConfig(str(root / run_id), run_id, "s", 1, T0, "t", (), 30.0, False)


def _empty(*columns: str) -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in columns})


def _result(name: str, violations: list[dict[str, Any]], allowed: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "ok": allowed,
        "judged": True,
        "allowed": allowed,
        "checked": 1,
        "note": "",
        "violations": violations,
    }


def _event(node: str, line: int, ts: int) -> dict[str, Any]:
    return {"node": node, "line": line, "ts": ts, "kind": "controller_elected", "fields": {}}


VERDICT = {
    "ok": False,
    "not_judged": [],
    "invariants": [
        _result(
            names.ONE_CONTROLLER_PER_EPOCH,
            [
                {
                    "subject": "controller epoch 2",
                    "explanation": "won by broker1 and broker2",
                    "events": [_event("broker1", 3, T0 + 4_000), _event("broker2", 9, T0 + 6_500)],
                }
            ],
        ),
        _result(names.CONVERGES_AFTER_HEAL, [{"subject": "t-0", "explanation": "differ"}]),
        _result(
            "lost-write",
            [{"subject": "t-1", "explanation": "lost", "events": [], "ops": ["producer-0#7"]}],
            allowed=True,
        ),
    ],
}
OPS = [{"op": "producer-0#7", "type": "ok", "wall_ms": T0 + 2_000, "topic": "t", "partition": 1}]


def _write_page(root: Path) -> RunPage:
    page = {
        "verdict_json": json.dumps(VERDICT),
        "events_json": "[]",
        "events_total": 0,
        "faults_json": "[]",
        "ops_json": orjson.dumps(OPS).decode(),
    }
    tables = {
        "rates": _empty("window_start_ms", "ok", "fail", "info"),
        "latency": _empty("window_start_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"),
        "failovers": _empty("node", "controller_epoch", "elected_ms", "done_ms"),
        "elections": _empty("topic", "partition", "leader", "leader_epoch", "elected_ms"),
    }
    return write_run_page(root, _run(root), page, tables, 1_000, "violated")


def test_the_timeline_marks_each_timed_witness_and_each_row_links_to_it(tmp_path: Path) -> None:
    written = _write_page(tmp_path)
    where = (tmp_path / written.href).parent
    drawn = orjson.loads((where / "timeline.js").read_text().split("=", 1)[1].strip().rstrip(";"))
    assert [(m["id"], m["kind"], m["from"], m["t"]) for m in drawn["witnesses"]] == [
        ("witness-lost-write-1", "allowed", 2.0, 2.0),
        (f"witness-{names.ONE_CONTROLLER_PER_EPOCH}-1", "violation", 4.0, 6.5),
    ]
    assert drawn["witnesses"][1]["text"] == "controller epoch 2: won by broker1 and broker2"
    html = (where / "index.html").read_text()
    anchor = f"witness-{names.ONE_CONTROLLER_PER_EPOCH}-1"
    assert f'<li class="witness" id="{anchor}">' in html
    assert f'data-witness="{anchor}">on the timeline at 6.500 s (proof from 4.000 s)' in html
    assert f'<a href="#{anchor}">1</a>' in html  # the verdict table's count opens the row
    assert f'<li class="witness" id="witness-{names.CONVERGES_AFTER_HEAL}-1">' in html
    assert "1 of the witnesses below has no time" in html
    assert THIRTEEN_DIGITS.findall(re.sub(r"<[^>]+>", " ", html)) == []


def test_the_whole_verdict_lies_beside_the_page_as_json(tmp_path: Path) -> None:
    written = _write_page(tmp_path)
    assert written.verdict_href == "runs/run-1/verdict.json"
    assert json.loads((tmp_path / written.verdict_href).read_text()) == VERDICT
    html = (tmp_path / written.href).read_text()
    assert '<a id="verdict-json" href="verdict.json">verdict (JSON)</a>' in html
    assert written.first_witness == f"first witness {names.ONE_CONTROLLER_PER_EPOCH} at 6.500 s"


def test_a_long_witness_is_cut_on_its_marker_only() -> None:
    long = {"subject": "t-1", "explanation": "x" * 1_000, "events": [_event("b", 1, T0)]}
    shown = witness(names.LEADER_IN_ISR, long, T0)
    group = {"allowed": False, "anomaly": False, "witnesses": [("w-1", shown)]}
    (mark,) = witness_marks([group])
    assert len(mark["text"]) == 300
    assert mark["text"].endswith("\u2026")
    assert len(shown.words) > 1_000


def test_the_front_page_names_the_earliest_witness_and_links_the_json(tmp_path: Path) -> None:
    runs = [_run(tmp_path, "run-1"), _run(tmp_path, "run-2")]
    verdicts = pd.DataFrame(
        {"run_id": ["run-1", "run-2"], "ok": [False, True], "violated": [["a"], []]}
    )
    pages = {
        "run-1": RunPage("run-1", "runs/run-1/index.html", "runs/run-1/verdict.json", "first w"),
        "run-2": RunPage("run-2", "runs/run-2/index.html", "runs/run-2/verdict.json", None),
    }
    cells = [
        c for row in grid(runs, verdicts, pages)["rows"] for seed in row["cells"] for c in seed
    ]
    assert [c.title for c in cells] == ["run-1: violated a; first w", "run-2: ok"]
    (failed,) = failing(runs, verdicts, pages)
    assert failed["links"] == [
        {
            "run_id": "run-1",
            "href": "runs/run-1/index.html#witness-a-1",
            "json": "runs/run-1/verdict.json",
        }
    ]


def test_a_blind_hunts_summary_is_a_table_on_the_front_page(tmp_path: Path) -> None:
    hunt = write_hunt(tmp_path / "in", "hunt-20260101-000000")
    (tmp_path / "in" / "bugs-20260101-000000").mkdir()
    (tmp_path / "in" / "bugs-20260101-000000" / "summary.json").write_text(
        '{"ok": true, "bugs": []}'
    )
    out = tmp_path / "report"
    hunts, others = find_hunts(sorted((tmp_path / "in").iterdir()), out)
    assert others == [tmp_path / "in" / "bugs-20260101-000000"]  # a planned hunt's summary
    (found,) = hunts
    assert json.loads((out / found.summary_href).read_text()) == read_hunt(hunt)
    runs = [_run(tmp_path)]
    verdicts = pd.DataFrame({"run_id": ["run-1"], "ok": [True], "violated": [[]]})
    measured = _empty("run_id", "kind", "measure", "value_ms", "scenario")
    index = write_index(
        out, runs, {"verdicts": verdicts}, measured, [tmp_path], [], T0, hunts=hunts
    )
    html = index.read_text()
    rows = re.findall(
        r"<tr><td class=\"text\">([^<]+)</td>(.*?)</tr>", html.split('data-table="hunt"')[1]
    )
    cells = [[name, *re.findall(r"<td[^>]*>([^<]*)</td>", rest)] for name, rest in rows]
    assert cells == [
        ["unclean-election", "yes", "acknowledged_writes", "3", "4.5", "2"],
        ["kafka-1188", "no", "-", "-", "-", "-"],
    ]
    assert "1 of 2 bug(s) caught" in html
    assert "6 run(s) raised" in html
    assert "0 false alarm(s)" in html
    assert "38.2 runs per hour" in html
    assert f'href="hunts/{found.name}/summary.json"' in html
