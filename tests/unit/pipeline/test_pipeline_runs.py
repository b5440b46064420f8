"""Finding runs and judging one run without Spark: the pipeline's verdict of a synthetic
run equals the runner's verdict.json, for clean runs and for each way of breaking one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import verdicts
from pipeline.runs import PipelineInputError, discover, judge_run, read_config
from pipeline.testing import BREAKS, write_run
from pipeline.verdicts import VERDICT_KEYS, verdict_row
from rundir.results import InvariantResult, RunVerdict, Violation


def _runner_verdict(run: Path) -> dict[str, object]:
    document = json.loads((run / "verdict.json").read_text())
    return {k: document[k] for k in VERDICT_KEYS}


def test_a_clean_run_is_judged_ok_as_the_runner_judged_it(tmp_path: Path) -> None:
    write_run(tmp_path, "clean")
    verdict, recovery_ms = judge_run(read_config(tmp_path / "clean"))
    assert verdict.ok
    assert recovery_ms == 400
    assert json.loads(json.dumps(verdict.to_json())) == _runner_verdict(tmp_path / "clean")


@pytest.mark.parametrize(("brk", "invariant"), sorted(BREAKS.items()))
def test_each_break_violates_its_invariant_and_matches_the_runner(
    tmp_path: Path, brk: str, invariant: str
) -> None:
    write_run(tmp_path, brk, breaks=frozenset({brk}))
    row = verdict_row(read_config(tmp_path / brk))
    assert row["ok"] is False
    assert row["violated"] == [invariant]
    assert row["matches_runner"] is True
    assert row["runner_ok"] is False


def test_a_verdict_json_that_differs_is_reported(tmp_path: Path) -> None:
    write_run(tmp_path, "clean")
    path = tmp_path / "clean" / "verdict.json"
    document = json.loads(path.read_text())
    document["invariants"][0]["checked"] += 1
    path.write_text(json.dumps(document))
    assert verdict_row(read_config(tmp_path / "clean"))["matches_runner"] is False


def test_a_verdict_with_allowed_anomalies_matches_the_runners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the verdict's document lists its allowed results apart ("allowed"): only the keys
    # the invariants decide are compared
    write_run(tmp_path, "run")
    found = InvariantResult("lost-write", (Violation("t-0", "lost"),), checked=1, allowed=True)
    verdict = RunVerdict((found,))
    assert "allowed" in verdict.to_json()
    monkeypatch.setattr(verdicts, "judge_run", lambda *_args: (verdict, None))
    document = {**verdict.to_json(), "scenario": "broker-failure"}
    (tmp_path / "run" / "verdict.json").write_text(json.dumps(document))
    assert verdict_row(read_config(tmp_path / "run"))["matches_runner"] is True


def test_discover_takes_runs_and_directories_of_runs_and_skips_the_rest(tmp_path: Path) -> None:
    write_run(tmp_path / "a", "r2")
    write_run(tmp_path / "a", "r1")
    (tmp_path / "a" / "not-a-run").mkdir()
    write_run(tmp_path / "b", "r3")
    found = discover([tmp_path / "a", tmp_path / "b" / "r3"])
    assert [r.run_id for r in found.runs] == ["r1", "r2", "r3"]
    assert found.skipped == (str(tmp_path / "a" / "not-a-run"),)


def test_discover_takes_the_runs_of_a_hunt_directory_and_lists_it_as_skipped(
    tmp_path: Path,
) -> None:
    # runs/hunt-<time>/ holds a hunt's runs beside its summary.json: the runs are
    # taken, and the directory stays among the skipped for the hunt table to find
    write_run(tmp_path / "runs", "plain")
    write_run(tmp_path / "runs" / "hunt-1", "hunted")
    (tmp_path / "runs" / "hunt-1" / "summary.json").write_text("{}")
    (tmp_path / "runs" / "hunt-1" / "deeper" / "nested").mkdir(parents=True)
    write_run(tmp_path / "runs" / "hunt-1" / "deeper", "too-deep")
    found = discover([tmp_path / "runs"])
    assert [r.run_id for r in found.runs] == ["hunted", "plain"]
    assert found.skipped == (str(tmp_path / "runs" / "hunt-1"),)


def test_another_run_directory_version_is_refused(tmp_path: Path) -> None:
    write_run(tmp_path, "old")
    config = tmp_path / "old" / "config.json"
    config.write_text(json.dumps(json.loads(config.read_text()) | {"run_dir_version": 2}))
    with pytest.raises(PipelineInputError, match="run directory version 2"):
        discover([tmp_path])


def test_a_config_without_a_needed_field_is_refused(tmp_path: Path) -> None:
    write_run(tmp_path, "bad")
    config = tmp_path / "bad" / "config.json"
    document = json.loads(config.read_text())
    del document["started_ms"]
    config.write_text(json.dumps(document))
    with pytest.raises(PipelineInputError, match="started_ms"):
        read_config(tmp_path / "bad")


def test_the_bug_switches_a_run_recorded_are_read_and_none_before_they_were(
    tmp_path: Path,
) -> None:
    write_run(tmp_path, "buggy")
    config = tmp_path / "buggy" / "config.json"
    assert read_config(tmp_path / "buggy").bug_switches == ""
    document = json.loads(config.read_text()) | {"bug_switches": ["kafka-1188", "kip-380"]}
    config.write_text(json.dumps(document))
    assert read_config(tmp_path / "buggy").bug_switches == "kafka-1188,kip-380"


def test_a_run_whose_events_do_not_parse_gets_an_error_row(tmp_path: Path) -> None:
    write_run(tmp_path, "torn")
    log = tmp_path / "torn" / "events" / "broker2.jsonl"
    log.write_text('{"v": 9, "ts": 1, "node": "broker2", "kind": "x"}\n' + log.read_text())
    row = verdict_row(read_config(tmp_path / "torn"))
    assert row["ok"] is None
    assert "schema version 9" in row["error"]


def test_a_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PipelineInputError, match="not a directory"):
        discover([tmp_path / "nope"])


def test_a_verdict_json_from_before_the_lost_writes_ops_still_matches(tmp_path: Path) -> None:
    write_run(tmp_path, "old", breaks=frozenset({"lost_write"}))
    path = tmp_path / "old" / "verdict.json"
    document = json.loads(path.read_text())
    (lost,) = (r for r in document["invariants"] if r["violations"])
    assert all(v["ops"] for v in lost["violations"])  # the checker names the operations now
    for violation in lost["violations"]:
        del violation["ops"]
    path.write_text(json.dumps(document))
    assert verdict_row(read_config(tmp_path / "old"))["matches_runner"] is True
    lost["violations"][0]["ops"] = ["producer-0#999999"]
    path.write_text(json.dumps(document))
    assert verdict_row(read_config(tmp_path / "old"))["matches_runner"] is False
