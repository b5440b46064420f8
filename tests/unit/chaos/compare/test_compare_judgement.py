"""The comparison of two builds' runs: which invariants head broke that base held, the
figures side by side with their ratio and rank test, the regressions, the exit code, and
summary.json's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.compare.judgement import BuildRun, Pair, compare, write_summary


def _run(ok: bool | None, *failed: str, **figures: float | None) -> BuildRun:
    run_dir = None if ok is None else Path(f"/runs/r-{ok}-{'-'.join(failed)}")
    return BuildRun(run_dir, ok, failed, error="" if ok is not None else "cluster not ready",
                    figures=figures)  # fmt: skip


def _pairs(base: list[float], head: list[float], figure: str = "failover_ms") -> list[Pair]:
    return [
        Pair("controller-failover", seed, _run(True, **{figure: b}), _run(True, **{figure: h}))
        for seed, (b, h) in enumerate(zip(base, head, strict=True), 1)
    ]


def test_an_invariant_head_breaks_and_base_holds_is_a_regression() -> None:
    pairs = [Pair("deposed-controller", 1, _run(True), _run(False, "controller_epoch_fencing"))]
    found = compare("HEAD", "work tree", pairs)
    assert [(r.kind, r.name) for r in found.regressions] == [
        ("invariant", "controller_epoch_fencing")
    ]
    assert found.exit_code() == 1
    assert "head broke controller_epoch_fencing, which base held" in found.text()


def test_what_base_breaks_too_is_no_regression() -> None:
    pairs = [
        Pair(
            "last-replica-standing",
            1,
            _run(False, "acknowledged_writes"),
            _run(False, "acknowledged_writes", "lost-write"),
        )
    ]
    found = compare("a", "b", pairs)
    assert [r.name for r in found.regressions] == ["lost-write"]


def test_both_failing_alike_and_both_passing_exit_zero() -> None:
    pairs = [
        Pair("s", 1, _run(False, "acknowledged_writes"), _run(False, "acknowledged_writes")),
        Pair("s", 2, _run(True), _run(True)),
    ]
    found = compare("a", "b", pairs)
    assert found.regressions == ()
    assert found.exit_code() == 0
    assert found.outcome().startswith("OK")


def test_a_run_not_performed_is_a_set_up_error_not_a_verdict() -> None:
    pairs = [Pair("s", 1, _run(True), _run(None))]
    found = compare("a", "b", pairs)
    assert found.regressions == ()
    assert found.exit_code() == 2
    assert found.not_run == ("s seed 1 head: cluster not ready",)
    assert "NOT RUN: cluster not ready" in found.text()


def test_no_runs_at_all_is_a_set_up_error() -> None:
    assert compare("a", "b", []).exit_code() == 2


def test_consistently_slower_beyond_the_ratio_is_a_regression() -> None:
    found = compare("a", "b", _pairs([1000, 1100, 1200], [2000, 2100, 2500]))
    (row,) = [f for f in found.figures if f.figure == "failover_ms"]
    assert row.base == (1000, 1100, 1200)
    assert row.head == (2000, 2100, 2500)
    assert row.ratio == pytest.approx(2100 / 1100)
    assert row.p == pytest.approx(0.05)
    assert row.slower
    assert [(r.kind, r.name) for r in found.regressions] == [("slower", "failover_ms")]
    assert found.exit_code() == 1
    assert "failover_ms is slower on head: median ratio 1.91, p = 0.050" in found.outcome()


def test_slower_within_the_ratio_is_noise() -> None:
    found = compare("a", "b", _pairs([1000, 1100, 1200], [1210, 1220, 1230]))
    (row,) = [f for f in found.figures if f.figure == "failover_ms"]
    assert row.p == pytest.approx(0.05)
    assert not row.slower
    assert found.exit_code() == 0


def test_a_large_ratio_without_a_consistent_rank_is_noise() -> None:
    found = compare("a", "b", _pairs([1000, 5000, 1200], [3000, 900, 4000]))
    (row,) = [f for f in found.figures if f.figure == "failover_ms"]
    assert row.ratio is not None
    assert row.ratio > 2
    assert row.p is not None
    assert row.p > 0.05
    assert not row.slower


def test_fewer_seeds_than_the_test_needs_give_no_p() -> None:
    found = compare("a", "b", _pairs([1000, 1000], [9000, 9000]))
    (row,) = [f for f in found.figures if f.figure == "failover_ms"]
    assert row.ratio == 9
    assert row.p is None
    assert not row.slower


def test_unmeasured_figures_are_left_out_of_the_ratio() -> None:
    pairs = [
        Pair("s", 1, _run(True, detection_ms=None), _run(True, detection_ms=300)),
        Pair("s", 2, _run(True, detection_ms=200), _run(True, detection_ms=None)),
    ]
    found = compare("a", "b", pairs)
    (row,) = [f for f in found.figures if f.figure == "detection_ms"]
    assert row.base == (None, 200)
    assert row.head == (300, None)
    assert row.ratio == 1.5


def test_every_figure_met_has_a_row_per_scenario_in_the_order_first_met() -> None:
    pairs = [
        *_pairs([1, 2, 3], [1, 2, 3]),
        Pair("zk-leader-loss", 1, _run(True, detection_ms=5), _run(True, produce_p99_ms=9)),
    ]
    found = compare("a", "b", pairs)
    figures = ("failover_ms", "detection_ms", "produce_p99_ms")
    assert [(f.scenario, f.figure) for f in found.figures] == [
        (s, f) for s in ("controller-failover", "zk-leader-loss") for f in figures
    ]
    (row,) = [f for f in found.figures if f == found.figures[-1]]
    assert row.base == (None,)
    assert row.head == (9,)


def test_the_summary_holds_runs_figures_and_regressions(tmp_path: Path) -> None:
    pairs = [
        Pair("s", 1, _run(True, failover_ms=10), _run(False, "one_controller_per_epoch"), True)
    ]
    json_path, md_path = write_summary(tmp_path, compare("HEAD", "work tree", pairs))
    summary = json.loads(json_path.read_text())
    assert summary["base"] == "HEAD"
    assert summary["head"] == "work tree"
    (run,) = summary["runs"]
    assert run["scenario"] == "s"
    assert run["seed"] == 1
    assert run["base_ok"] is True
    assert run["head_ok"] is False
    assert run["base_failed"] == []
    assert run["head_failed"] == ["one_controller_per_epoch"]
    assert run["order"] == "head first"
    assert run["base"]["figures"] == {"failover_ms": 10}
    assert [f["figure"] for f in summary["figures"]] == ["failover_ms"]
    assert summary["regressions"][0]["name"] == "one_controller_per_epoch"
    assert summary["ok"] is False
    page = md_path.read_text()
    assert page.startswith("# Comparison: head work tree against base HEAD")
    assert "| s | 1 | PASS | FAIL: one_controller_per_epoch |" in page


def test_the_report_draws_the_page_of_what_the_summary_holds(tmp_path: Path) -> None:
    """`summary.json` is the contract with the report's page (`pipeline.comparison`): what
    `write_summary` writes, the page shows, a verdict word for word as the terminal."""
    from pipeline.comparison import write_comparison_page

    broke = {2: ("one_controller_per_epoch",)}
    pairs = [
        Pair(
            "s",
            seed,
            _run(True, failover_ms=10.0 * seed),
            _run(seed not in broke, *broke.get(seed, ()), failover_ms=40.0 * seed),
        )
        for seed in (1, 2, 3)
    ]
    found = compare("HEAD", "work tree", pairs)
    write_summary(tmp_path, found)
    html = write_comparison_page(tmp_path).read_text()
    for regression in found.regressions:
        assert str(regression) in html
    assert {r.kind for r in found.regressions} == {"invariant", "slower"}
    assert f">{pairs[1].head.word()}</a></td>" in html
    assert "<td>10 20 30</td><td>40 80 120</td><td>4.00</td><td>0.050</td>" in html
