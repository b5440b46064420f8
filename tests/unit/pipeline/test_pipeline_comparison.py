"""A comparison of two builds gets a page of its own from its `summary.json` alone: the
regressions at the top, each build's verdict per scenario and seed, each figure's values
side by side with head/base and the rank test's verdict, and a plot; the report over a
directory of runs links the comparisons it finds there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.comparison import find_comparisons, read_summary, write_comparison_page
from pipeline.comparison_testing import comparison_summary, write_comparison
from pipeline.runs import PipelineInputError

PNG = b"\x89PNG"


def test_the_page_names_the_regressions_first_then_verdicts_figures_and_plot(
    tmp_path: Path,
) -> None:
    directory = write_comparison(tmp_path)
    page = write_comparison_page(directory)
    assert page == directory / "report.html"
    html = page.read_text()
    regressions = html.index('<ul class="regressions">')
    assert regressions < html.index('id="verdicts"') < html.index('id="figures"')
    assert "broker-failure: seed 2: head broke acknowledged_writes, which base held" in html
    assert "failover_ms is slower on head: median ratio 2.82" in html
    assert '<h2 id="outcome" class="bad">REGRESSION</h2>' in html
    # the verdict cells: base held, head failed, each linked to its run
    assert '<td class="text"><a href="base/b-s2">PASS</a></td>' in html
    assert '<td class="text bad"><a href="head/h-s2">FAIL: acknowledged_writes</a></td>' in html
    # the figures side by side, with the ratio and the rank test's verdict
    assert "<td>1000 1100 1200</td><td>3000 3100 3200</td><td>2.82</td><td>0.050</td>" in html
    assert '<td class="text bad">SLOWER</td>' in html
    assert "<td>6173 - 6000</td><td>5572 5600 -</td><td>0.90</td><td>-</td>" in html
    assert "election_ms" not in html  # measured on neither build
    assert (directory / "img" / "figures.png").read_bytes()[:4] == PNG
    assert 'src="img/figures.png"' in html
    assert "font-family: sans-serif" in html  # the report's look


def test_a_comparison_without_regressions_says_ok(tmp_path: Path) -> None:
    directory = tmp_path / "compare-ok"
    directory.mkdir()
    held = comparison_summary(directory)
    held.update(regressions=[], ok=True, figures=held["figures"][1:], runs=held["runs"][:1])
    (directory / "summary.json").write_text(json.dumps(held))
    html = write_comparison_page(directory).read_text()
    assert '<h2 id="outcome" class="good">OK</h2>' in html
    assert "regressions" not in html.split('id="verdicts"')[0].split("</h2>", 2)[1]
    assert (directory / "img" / "figures.png").exists()


def test_a_directory_without_a_comparison_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PipelineInputError, match="not a readable comparison"):
        read_summary(tmp_path)
    (tmp_path / "summary.json").write_text('{"base": "x"}')
    with pytest.raises(PipelineInputError, match="no head, runs, figures"):
        read_summary(tmp_path)


def test_the_command_draws_the_page_and_prints_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_comparison(tmp_path)
    assert main(["comparison", str(directory)]) == 0
    assert capsys.readouterr().out.strip() == str(directory.resolve() / "report.html")
    assert main(["comparison", str(tmp_path)]) == 1
    assert "not a readable comparison" in capsys.readouterr().err


def test_the_report_links_each_comparison_and_draws_a_missing_page(tmp_path: Path) -> None:
    drawn = write_comparison(tmp_path, "compare-1")
    write_comparison_page(drawn)
    undrawn = write_comparison(tmp_path, "compare-2")
    other = tmp_path / "scratch"
    other.mkdir()
    out = tmp_path / "report"
    found, others = find_comparisons([drawn, undrawn, other], out)
    assert others == [other]
    assert [(c.name, c.outcome, c.regressions) for c in found] == [
        ("compare-1", "REGRESSION", 2),
        ("compare-2", "REGRESSION", 2),
    ]
    assert found[0].page == drawn / "report.html"
    assert found[1].page == out.resolve() / "comparisons" / "compare-2" / "report.html"
    assert '<a href="../../../compare-2/head/h-s2">' in found[1].page.read_text()
    assert not (undrawn / "report.html").exists()  # the comparison's directory is read only
