"""`chaos.hunt.reach_runs`: which runs of a hunt directory had their switch's shape, read
from the run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.generator.scenarios.empty_broker_failure import plan
from chaos.generator.schedule import Schedule
from chaos.hunt.reach_runs import HuntRun, main, read_runs, render

SWITCH = "kafka-13225"


def _run(hunt: Path, name: str, switches: list[str], schedule: Schedule, ok: bool | None) -> None:
    run = hunt / name
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"bug_switches": switches}))
    (run / "schedule.json").write_text(json.dumps(schedule.to_json()))
    if ok is not None:
        (run / "verdict.json").write_text(json.dumps({"ok": ok}))


@pytest.fixture
def hunt(tmp_path: Path) -> Path:
    quiet = Schedule(1, (), heal_at_s=30, end_s=45)
    _run(tmp_path, "20261207-010000-random-s1", [SWITCH], plan(1), ok=False)
    _run(tmp_path, "20261207-010100-random-s2", [SWITCH], quiet, ok=True)
    _run(tmp_path, "20261207-010200-random-s3", [SWITCH], plan(2), ok=None)
    _run(tmp_path, "20261207-010300-random-s1", [], plan(1), ok=True)  # the fixed build
    (tmp_path / "20261207-010400-random-s4").mkdir()  # no config.json
    (tmp_path / ".chaos-state").mkdir()
    return tmp_path


def test_each_buggy_run_is_read_with_its_shape_and_verdict(hunt: Path) -> None:
    skipped: list[str] = []
    runs = list(read_runs(hunt, skipped))
    assert runs == [
        HuntRun("20261207-010000-random-s1", SWITCH, True, "failed"),
        HuntRun("20261207-010100-random-s2", SWITCH, False, "held"),
        HuntRun("20261207-010200-random-s3", SWITCH, True, "no verdict"),
    ]
    (why,) = skipped
    assert why.startswith("20261207-010400-random-s4: FileNotFoundError")


def test_the_table_counts_the_shaped_runs_per_switch(hunt: Path) -> None:
    table = render(list(read_runs(hunt, [])))
    assert table.splitlines()[2] == (
        f"| `{SWITCH}` | 3 | 2 | 20261207-010000-random-s1 failed, "
        "20261207-010200-random-s3 no verdict |"
    )


def test_main_prints_the_table_and_refuses_what_is_not_a_hunt(
    hunt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(hunt)]) == 0
    out, err = capsys.readouterr()
    assert f"| `{SWITCH}` | 3 | 2 |" in out
    assert "skipped 20261207-010400-random-s4" in err
    assert main([str(tmp_path / "none")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty)]) == 2
    assert "no run with a bug switch" in capsys.readouterr().err
