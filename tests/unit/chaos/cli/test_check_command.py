"""`python -m chaos check` and `export-history` on synthetic run directories
(`pipeline.testing.write_run`, as the runner writes them): the table, the JSON document
and the exit codes 0 / 1 / 2, and the history written as Jepsen's EDN. No cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.pipeline.synthetic import write_runs
from chaos.__main__ import main
from pipeline.testing import write_run
from rundir.invariants import names
from rundir.layout import RunDir


def test_a_clean_run_prints_its_table_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r")
    assert main(["check", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "one_controller_per_epoch" in out
    assert "history checker:" in out
    assert out.rstrip().endswith("check: OK")


def test_a_broken_run_exits_1_with_the_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r", breaks=frozenset({"two_controllers", "lost_write"}))
    assert main(["check", str(tmp_path / "r"), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"ok", "invariants", "anomalies", "allowed"}
    assert document["ok"] is False
    broken = {e["name"] for e in document["invariants"] if not e["ok"]}
    # Jepsen's classes see the lost write too: never read below a higher read offset, not
    # in the final read, and a gap inside a poll where a record is known to be
    assert broken == {
        names.ONE_CONTROLLER_PER_EPOCH,
        names.ACKNOWLEDGED_WRITES,
        "lost-write",
        "unseen",
        "int-poll-skip",
    }
    assert document["anomalies"]["lost_writes"] == 1
    assert document["anomalies"]["lost-write"] == 1
    assert document["allowed"] == []


def test_an_unreadable_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    write_run(tmp_path, "r")
    run = RunDir(tmp_path / "r")
    run.write_json(run.config, run.read_json(run.config) | {"run_dir_version": 7})
    assert main(["check", str(run.root)]) == 2
    assert "run directory version 7" in capsys.readouterr().err


def test_a_history_of_another_version_is_judged_in_part_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r")
    path = RunDir(tmp_path / "r").history / "final-read.jsonl"
    path.write_text(path.read_text().replace('"v":1', '"v":2'))
    assert main(["check", str(tmp_path / "r")]) == 2
    out = capsys.readouterr().out
    assert "not judged: acknowledged_writes" in out
    assert "unsupported history version 2" in out
    assert "one_controller_per_epoch     ok" in out


def test_export_history_writes_one_edn_op_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path, "r")
    out = tmp_path / "history.edn"
    assert (
        main(["export-history", str(tmp_path / "r"), "--format", "jepsen", "--out", str(out)]) == 0
    )
    lines = out.read_text().splitlines()
    history = [
        line
        for path in sorted((RunDir(tmp_path / "r").history).glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert len(lines) == len(history)
    assert lines[0].startswith("{:index 0, :time 0, :type :invoke,")
    assert ':f :poll, :value [[:poll {0 [[0 "producer-0-0"]' in "\n".join(lines)
    assert main(["export-history", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_export_history_refuses_what_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export-history", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_check_agrees_with_the_runner_on_runs_at_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = write_runs(tmp_path, 6_000, seed=3)
    assert made.runs >= 2
    for run in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        runner = RunDir(run).read_json(RunDir(run).verdict)
        code = main(["check", str(run), "--json"])
        document = json.loads(capsys.readouterr().out)
        assert code == (0 if runner["ok"] else 1), run.name
        mine = {e["name"]: e for e in document["invariants"]}
        for recorded in runner["invariants"]:
            assert mine[recorded["name"]]["ok"] == recorded["ok"], (run.name, recorded["name"])
            assert len(mine[recorded["name"]]["violations"]) == len(recorded["violations"])
