"""The report in local Spark mode over synthetic runs: every run's verdict equals the
runner's verdict.json, each broken run is caught by its invariant, the figures hold the
run's known timings, each broken run's witnesses are marked on its timeline at times
within the run and its verdict lies beside its page as JSON, and the HTML page links
images that exist, tables with rows and the comparison of two builds found among the
runs."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from pipeline.report import SERIES_TABLES, TABLE_TITLES, Report
from pipeline.testing import BREAKS

#: Spark starts slowly on a shared 2-core machine (docs/pipeline.md, Cost).
pytestmark = pytest.mark.timeout(900)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.tables: dict[str, int] = {}
        self.declared: dict[str, int] = {}
        self._table: str | None = None
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.images.append(str(a["src"]))
        elif tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        elif tag == "table":
            self._table = str(a["data-table"])
            self.tables[self._table] = 0
            self.declared[self._table] = int(str(a["data-rows"]))
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body and self._table:
            self.tables[self._table] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._table = None


def test_every_verdict_equals_the_runners(local_report: Report) -> None:
    verdicts = local_report.tables["verdicts"].set_index("run_id")
    assert len(verdicts) == 2 + len(BREAKS)
    assert verdicts["matches_runner"].tolist() == [True] * len(verdicts)
    assert verdicts["error"].isna().all()
    for name, invariant in BREAKS.items():
        row = verdicts.loc[next(i for i in verdicts.index if i.endswith(name))]
        assert not row["ok"]
        assert list(row["violated"]) == [invariant]
    clean = verdicts[verdicts.index.str.contains("-s1")]
    assert clean["ok"].tolist() == [True, True]


def test_each_broken_runs_witnesses_are_timed_on_its_timeline(local_report: Report) -> None:
    for name, invariant in BREAKS.items():
        page = next(p for r, p in local_report.run_pages.items() if r.endswith(name))
        script = (page.parent / "timeline.js").read_text()
        drawn = json.loads(script.split("=", 1)[1].strip().rstrip(";"))
        marks = [w for w in drawn["witnesses"] if w["invariant"] == invariant]
        assert marks, name
        assert all(drawn["start"] <= w["from"] <= w["t"] <= drawn["end"] for w in marks), name
        assert all(f'id="{w["id"]}"' in page.read_text() for w in marks), name
        verdict = json.loads((page.parent / "verdict.json").read_text())
        assert invariant in {r["name"] for r in verdict["invariants"] if r["violations"]}


def test_the_figures_hold_the_synthetic_timings(local_report: Report) -> None:
    t = local_report.tables
    # broker1 was the controller: its successor's election noticed it first
    assert set(t["detection"]["detection_ms"]) == {6_000}
    assert set(t["detection"]["detected_by"]) == {"controller_elected"}
    failed_over = t["failovers"].dropna(subset=["failover_ms"])
    assert set(failed_over["failover_ms"]) == {6_150}
    # ... and the last live broker (broker3) applied the new epoch's UpdateMetadata 30 ms
    # after the failover was done; a controller whose failover never ended has no figure
    assert set(failed_over["metadata_failover_ms"]) == {6_180}
    assert set(failed_over["live_brokers"]) == {2}
    unfinished = t["failovers"][t["failovers"]["failover_ms"].isna()]
    assert (unfinished["live_brokers"] == 0).all()
    assert unfinished["metadata_failover_ms"].isna().all()
    first = t["elections"].groupby("run_id")["since_fault_ms"].min()
    assert set(first) == {6_250}
    assert t["unavailability"]["closed"].all()
    assert (t["unavailability"]["partition"] == 0).all()
    # the synthetic snapshots are whole from the first one on (400 ms; 700 ms with offset)
    assert set(t["healed"]["healed_after_ms"]) == {400, 700}
    assert len(t["healed"]) == 2 * len(t["verdicts"])
    assert (t["latency"]["p50_ms"] <= t["latency"]["p99_ms"]).all()
    runs = t["runs"].set_index("run_id")
    assert runs["faults"].tolist() == [1] * len(runs)
    assert set(runs["max_metadata_failover_ms"]) == {6_180}
    assert runs["controller_elections"].sum() == len(runs) + 1  # two_controllers: one more
    assert (
        runs.loc[runs.index.str.endswith("leader_epoch_regression"), "leader_elections"].item() == 2
    )
    violations = t["violations"].set_index(["scenario", "kind"])
    assert violations.loc[("broker-failure", "kill"), "runs"] == 1 + len(BREAKS)
    recovery = t["recovery"]
    assert {
        "failure detection",
        "controller failover",
        "failover until metadata current",
        "leader election",
        "partition unavailability",
        "convergence after heal",
    } <= set(recovery["measure"])


def test_the_html_links_existing_images_and_every_table_has_its_rows(
    local_report: Report,
) -> None:
    out = local_report.html.parent
    page = _Page()
    page.feed(local_report.html.read_text())
    assert len(page.images) == 1 + 2 * len(local_report.tables["verdicts"])
    for src in page.images:
        assert (out / src).is_file(), src
    assert set(page.tables) == {*TABLE_TITLES, "comparisons"} - SERIES_TABLES
    assert page.tables["comparisons"] == page.declared["comparisons"] == 1
    (comparison,) = [link for link in page.links if link.endswith("/report.html")]
    assert comparison == "comparisons/compare-20260101-001000/report.html"
    assert "REGRESSION" in (out / comparison).read_text()
    for name, rows in page.tables.items():
        if name == "comparisons":
            continue
        assert rows == page.declared[name] == len(local_report.tables[name]), name
        assert rows > 0, name
        assert f"tables/{name}.parquet" in page.links
        assert f"tables/{name}.csv" in page.links
        parquet = pd.read_parquet(out / "tables" / f"{name}.parquet")
        assert len(parquet) == rows, name
    html = local_report.html.read_text()
    assert "docker-tier-leftovers" in html
    assert "compare-20260101-001000/" not in html.split("Not runs")[1].split("</p>")[0]


def test_pictures_are_pngs(local_report: Report) -> None:
    for picture in local_report.pictures:
        assert Path(picture).read_bytes()[:4] == b"\x89PNG"
