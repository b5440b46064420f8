"""The pipeline benchmark's command line: its sizes, its output and bad values that end
with exit code 2. No process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.pipeline.options import PIPELINE_EVENTS, QUICK_PIPELINE_EVENTS, parse_pipeline_settings
from bench.shared.settings import DEFAULT_RESULTS_DIR


def test_a_million_records_by_default_and_a_tenth_when_quick(tmp_path: Path) -> None:
    full = parse_pipeline_settings(["--out", str(tmp_path / "a")])
    assert full.events == PIPELINE_EVENTS == 1_000_000
    assert (full.master, full.seed, full.keep_runs) == ("local[2]", 0, False)
    assert full.out == (tmp_path / "a").resolve()
    assert full.results_dir == DEFAULT_RESULTS_DIR
    quick = parse_pipeline_settings(["--quick", "--out", str(tmp_path / "b")])
    assert quick.events == QUICK_PIPELINE_EVENTS == 100_000


def test_every_flag(tmp_path: Path) -> None:
    settings = parse_pipeline_settings(
        [
            "--events",
            "5000",
            "--seed",
            "7",
            "--master",
            "spark://h:7077",
            "--out",
            str(tmp_path / "o"),
            "--results",
            str(tmp_path / "r"),
            "--keep-runs",
        ]
    )
    assert (settings.events, settings.seed, settings.master) == (5000, 7, "spark://h:7077")
    assert settings.results_dir == (tmp_path / "r").resolve()
    assert settings.keep_runs


@pytest.mark.parametrize("argv", [["--events", "10"], ["--events", "x"]])
def test_bad_values_exit_2(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        parse_pipeline_settings([*argv, "--out", str(tmp_path / "o")])
    assert raised.value.code == 2


def test_an_out_that_holds_runs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    with pytest.raises(SystemExit):
        parse_pipeline_settings(["--out", str(tmp_path)])
