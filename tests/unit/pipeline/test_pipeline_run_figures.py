"""One run's recovery figures as numbers (`python -m pipeline figures`), on the synthetic
run of `pipeline.testing`: the same figures the report computes, each reduced to the run's
worst case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.__main__ import main
from pipeline.run_figures import FIGURE_NAMES, run_figures
from pipeline.runs import PipelineInputError
from pipeline.testing import ELECTED, FAULT_START, write_run


def test_the_synthetic_runs_figures(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", offset=100)
    found = run_figures(tmp_path / "r1")
    assert tuple(found) == FIGURE_NAMES
    # the killed broker is noticed by the election of the next controller
    assert found["detection_ms"] == ELECTED - FAULT_START
    # the first snapshot after the heal (400 ms + the offset) finds every partition whole
    assert found["convergence_ms"] == 500
    assert found["failover_ms"] is not None
    assert found["failover_ms"] >= found["detection_ms"]
    p50, p95, p99 = found["produce_p50_ms"], found["produce_p95_ms"], found["produce_p99_ms"]
    assert p50 is not None
    assert p95 is not None
    assert p99 is not None
    assert 0 < p50 <= p95 <= p99


def test_the_command_prints_each_runs_figures_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r1")
    write_run(tmp_path, "r2", offset=300)
    assert main(["figures", str(tmp_path / "r1"), str(tmp_path / "r2")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {str(tmp_path / "r1"), str(tmp_path / "r2")}
    assert printed[str(tmp_path / "r2")]["convergence_ms"] == 700


def test_a_directory_that_is_no_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PipelineInputError):
        run_figures(tmp_path)
    assert main(["figures", str(tmp_path)]) == 1
