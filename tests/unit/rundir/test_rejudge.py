"""Re-judging a recorded run directory (`rundir.rejudge`, `rundir.check_report`): a whole
run passes, a broken one names its invariant, and every kind of bad input of a crashed
run is judged as far as it can be, with what was not judged named (never an exception,
never a silent pass)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eventlog import SCHEMA_VERSION
from pipeline.testing import write_run
from rundir.check_report import EXIT_BROKEN, EXIT_OK, EXIT_UNREADABLE, CheckReport, check_run
from rundir.checker import check_files
from rundir.checker.queue import UNCLEAN_ELECTION
from rundir.errors import RunDirError
from rundir.history_stream import HistoryFiles
from rundir.invariants import names
from rundir.invariants.replication import AUDIT_INVARIANTS
from rundir.layout import RunDir, RunDirVersionError
from rundir.rejudge import (
    ACKNOWLEDGED_LOSS_ALLOWED,
    RUN_DIR_COMPLETE,
    finished_run_completeness,
    read_recorded,
    settings_of,
)
from rundir.results import InvariantResult, RunVerdict, Violation

POWER_LOSS_REASON = "power-loss under log-flush-interval-messages never"
EVENT_INVARIANTS = (
    names.ONE_CONTROLLER_PER_EPOCH,
    names.CONTROLLER_EPOCH_FENCING,
    names.BROKER_EPOCH_FENCING,
    names.ONE_LEADER_PER_LEADER_EPOCH,
)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    write_run(tmp_path, "r")
    return tmp_path / "r"


def _status(report: CheckReport, name: str) -> str:
    return report.verdict.result(name).status()


def test_a_whole_run_passes_with_every_invariant_judged(run: Path) -> None:
    report = check_run(run)
    assert report.exit_code == EXIT_OK
    unjudged = {names.CONVERGES_AFTER_HEAL, *AUDIT_INVARIANTS}  # the run has no audit.json
    assert all(r.judged for r in report.verdict.results if r.name not in unjudged)
    assert report.verdict.results[0].name == RUN_DIR_COMPLETE
    assert report.anomalies()["lost_writes"] == 0
    assert report.allowed() == []


def test_the_verdict_equals_the_runners_for_the_same_invariants(run: Path) -> None:
    runner = json.loads(RunDir(run).verdict.read_text())
    mine = {r.name: r.to_json() for r in check_run(run).verdict.results}
    for recorded in runner["invariants"]:
        assert mine[recorded["name"]] == recorded


def test_a_lost_write_breaks_the_run_and_is_counted(tmp_path: Path) -> None:
    write_run(tmp_path, "r", breaks=frozenset({"lost_write"}))
    report = check_run(tmp_path / "r")
    assert report.exit_code == EXIT_BROKEN
    assert _status(report, names.ACKNOWLEDGED_WRITES) == "VIOLATED"
    assert report.anomalies()["lost_writes"] == 1
    document = report.to_json()
    assert set(document) == {"ok", "invariants", "anomalies", "allowed"}
    assert document["ok"] is False
    entry = next(e for e in document["invariants"] if e["name"] == names.ACKNOWLEDGED_WRITES)
    assert {"name", "ok", "violations"} <= set(entry)
    assert entry["ok"] is False


def test_a_torn_last_line_is_named_and_the_rest_judged(run: Path) -> None:
    path = RunDir(run).history / "producer-0.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines) + '{"v":1,"type":"invo')
    report = check_run(run)
    complete = report.verdict.result(RUN_DIR_COMPLETE)
    assert f"history/producer-0.jsonl:{len(lines) + 1}" in complete.note
    assert report.verdict.result(names.ACKNOWLEDGED_WRITES).judged
    assert report.exit_code == EXIT_OK
    assert "torn lines skipped" in report.table()


def test_a_torn_event_line_in_the_middle_is_named(run: Path) -> None:
    path = RunDir(run).events / "broker2.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + '{"ts": 1, "no\n' + "".join(lines[2:]))
    complete = check_run(run).verdict.result(RUN_DIR_COMPLETE)
    assert "events/broker2.jsonl:3" in complete.note


def test_an_unknown_history_version_leaves_the_history_unjudged(run: Path) -> None:
    path = RunDir(run).history / "producer-0.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[5]) | {"v": 99}
    path.write_text("".join(lines[:5]) + json.dumps(record) + "\n" + "".join(lines[6:]))
    report = check_run(run)
    assert report.exit_code == EXIT_UNREADABLE
    assert report.history is None
    writes = report.verdict.result(names.ACKNOWLEDGED_WRITES)
    assert not writes.judged
    assert "unsupported history version 99" in writes.note
    assert all(report.verdict.result(n).judged for n in EVENT_INVARIANTS)
    complete = report.verdict.result(RUN_DIR_COMPLETE)
    assert [v.subject for v in complete.violations] == ["history/"]
    assert "not judged: acknowledged_writes" in report.table()


def test_missing_event_logs_leave_the_event_invariants_unjudged(run: Path) -> None:
    for path in RunDir(run).events.glob("*.jsonl"):
        path.unlink()
    report = check_run(run)
    assert report.exit_code == EXIT_BROKEN
    for name in EVENT_INVARIANTS:
        assert _status(report, name) == "not judged"
    assert report.verdict.result(names.ACKNOWLEDGED_WRITES).judged
    assert "events/" in str(report.verdict.result(RUN_DIR_COMPLETE).violations[0])


def test_a_missing_final_read_is_named_and_fails(run: Path) -> None:
    (RunDir(run).history / "final-read.jsonl").unlink()
    report = check_run(run)
    assert report.exit_code == EXIT_BROKEN
    subjects = [v.subject for v in report.verdict.result(RUN_DIR_COMPLETE).violations]
    assert subjects == ["history/final-read.jsonl"]
    writes = report.verdict.result(names.ACKNOWLEDGED_WRITES)
    assert not writes.judged
    assert "no completed final read" in writes.note


def test_a_run_without_history_names_it(run: Path) -> None:
    for path in RunDir(run).history.glob("*.jsonl"):
        path.unlink()
    report = check_run(run)
    assert report.exit_code == EXIT_BROKEN
    assert report.history is None
    assert report.anomalies() == {}
    assert _status(report, names.ACKNOWLEDGED_WRITES) == "not judged"


@pytest.mark.parametrize(("content", "said"), [(None, "is missing"), ('{"ok": tr', "half-written")])
def test_a_missing_or_half_written_verdict_is_named(
    run: Path, content: str | None, said: str
) -> None:
    verdict = RunDir(run).verdict
    if content is None:
        verdict.unlink()
    else:
        verdict.write_text(content)
    report = check_run(run)
    assert report.exit_code == EXIT_BROKEN
    (problem,) = report.verdict.result(RUN_DIR_COMPLETE).violations
    assert problem.subject == "verdict.json"
    assert said in problem.explanation


def test_a_bad_snapshot_line_leaves_convergence_unjudged(run: Path) -> None:
    with RunDir(run).snapshots.open("a") as f:
        f.write('{"after_heal_ms": "soon"}\n')
    report = check_run(run)
    assert report.exit_code == EXIT_UNREADABLE
    assert _status(report, names.CONVERGES_AFTER_HEAL) == "not judged"
    assert report.verdict.result(names.ACKNOWLEDGED_WRITES).judged


def test_a_directory_that_is_no_run_is_refused(tmp_path: Path, run: Path) -> None:
    with pytest.raises(RunDirError, match=r"no config\.json"):
        read_recorded(tmp_path)
    with pytest.raises(RunDirError, match="not a directory"):
        read_recorded(tmp_path / "absent")
    config = RunDir(run).read_json(RunDir(run).config) | {"run_dir_version": 99}
    RunDir(run).write_json(RunDir(run).config, config)
    with pytest.raises(RunDirVersionError, match="version 99"):
        read_recorded(run)


def test_settings_come_from_the_config(tmp_path: Path) -> None:
    config = {
        "started_ms": 5,
        "topic": "t",
        "invariants": [names.ONE_CONTROLLER_PER_EPOCH, names.NO_OFFLINE_PARTITIONS],
        "convergence_bound_s": 1.5,
        "workload": {"unclean_leader_election": True},
    }
    settings = settings_of(config, tmp_path)
    assert settings == {
        "unclean_leader_election": True,
        "acknowledged_loss_allowed": None,
        "convergence_bound_ms": 1500,
        "also": frozenset({names.NO_OFFLINE_PARTITIONS}),
        "since_ms": 5,
        "topics": ("t",),
    }
    with pytest.raises(RunDirError, match="started_ms"):
        settings_of({"topic": "t"}, tmp_path)


@pytest.mark.parametrize("reason", [POWER_LOSS_REASON, None])
def test_a_recorded_power_loss_under_a_lazy_flush_allows_lost_writes_on_its_own(
    tmp_path: Path, reason: str | None
) -> None:
    config = {"started_ms": 5, "topic": "t", ACKNOWLEDGED_LOSS_ALLOWED: reason}
    settings = settings_of(config, tmp_path)
    assert settings["acknowledged_loss_allowed"] == reason
    assert settings["unclean_leader_election"] is False


def test_a_power_loss_runs_verdict_names_the_power_loss_never_unclean_election(
    tmp_path: Path,
) -> None:
    write_run(tmp_path, "r", breaks=frozenset({"lost_write"}))
    run = RunDir(tmp_path / "r")
    assert check_run(run.root).exit_code == EXIT_BROKEN
    config = run.read_json(run.config) | {ACKNOWLEDGED_LOSS_ALLOWED: POWER_LOSS_REASON}
    run.write_json(run.config, config)
    report = check_run(run.root)
    assert "lost-write" in report.allowed()
    text = report.table()
    assert f"history checker (allowed: {POWER_LOSS_REASON}; anomalies fail nothing)" in text
    writes = report.verdict.result(names.ACKNOWLEDGED_WRITES)
    assert not writes.judged
    assert POWER_LOSS_REASON in writes.note
    assert "unclean" not in text.lower()
    assert "unclean" not in json.dumps(report.to_json()).lower()


def test_an_unclean_election_runs_verdict_still_names_unclean_election(tmp_path: Path) -> None:
    write_run(tmp_path, "r", breaks=frozenset({"lost_write"}))
    run = RunDir(tmp_path / "r")
    workload = run.read_json(run.config)["workload"] | {"unclean_leader_election": True}
    run.write_json(run.config, run.read_json(run.config) | {"workload": workload})
    report = check_run(run.root)
    assert "lost-write" in report.allowed()
    assert not report.verdict.result(names.ACKNOWLEDGED_WRITES).judged
    assert "(allowed: unclean election; anomalies fail nothing)" in report.table()
    assert "power" not in report.table()


@dataclass(frozen=True, slots=True)
class _AllowedResult(InvariantResult):
    """A history checker result carrying the `allowed` flag."""

    allowed: bool = True


def test_an_allowed_class_is_reported_but_fails_nothing(tmp_path: Path) -> None:
    skip = _AllowedResult("poll-skip", (Violation("t-0", "skipped offsets 3..5"),))
    lost = InvariantResult("lost-write", (Violation("t-0", "lost"),))
    clean = RunVerdict((InvariantResult("ok-check"),))
    allowed = CheckReport(tmp_path, clean, RunVerdict((skip,)))
    assert allowed.ok
    assert allowed.exit_code == EXIT_OK
    assert allowed.allowed() == ["poll-skip"]
    assert allowed.anomalies() == {"poll-skip": 1}
    broken = CheckReport(tmp_path, clean, RunVerdict((skip, lost)))
    assert broken.exit_code == EXIT_BROKEN
    assert broken.to_json()["anomalies"] == {"poll-skip": 1, "lost-write": 1}
    unclean = CheckReport(tmp_path, clean, RunVerdict((lost,)), loss_allowed=UNCLEAN_ELECTION)
    assert unclean.exit_code == EXIT_OK
    assert "anomalies fail nothing" in unclean.table()


def test_an_event_log_of_another_version_leaves_the_event_invariants_unjudged(run: Path) -> None:
    path = RunDir(run).events / "broker3.jsonl"
    path.write_text(path.read_text().replace(f'"v": {SCHEMA_VERSION},', '"v": 4,', 1))
    report = check_run(run)
    assert report.exit_code == EXIT_UNREADABLE
    for name in EVENT_INVARIANTS:
        assert "event schema version 4" in report.verdict.result(name).note
    assert report.verdict.result(names.ACKNOWLEDGED_WRITES).judged
    assert report.anomalies()["lost_writes"] == 0


def test_a_half_written_config_is_refused(run: Path) -> None:
    RunDir(run).config.write_text('{"run_dir_version": 1, "scen')
    with pytest.raises(RunDirError, match="unreadable"):
        read_recorded(run)


def test_an_invariant_the_config_names_but_no_check_knows_is_not_judged(run: Path) -> None:
    config = RunDir(run).read_json(RunDir(run).config)
    config["invariants"] = [*config["invariants"], "from_a_newer_testbed"]
    RunDir(run).write_json(RunDir(run).config, config)
    report = check_run(run)
    assert _status(report, "from_a_newer_testbed") == "not judged"
    lines = report.table().splitlines()
    assert any(x.startswith("not judged:") and "from_a_newer_testbed" in x for x in lines)


def test_an_event_line_that_is_no_object_is_named(run: Path) -> None:
    with (RunDir(run).events / "broker1.jsonl").open("a") as f:
        f.write("[1, 2]\n")
    lines = len((RunDir(run).events / "broker1.jsonl").read_text().splitlines())
    note = check_run(run).verdict.result(RUN_DIR_COMPLETE).note
    assert f"events/broker1.jsonl:{lines}" in note


def test_the_history_is_judged_once_as_its_files_are_read(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, ...]] = []

    def counted(paths: tuple[Path, ...], *args: Any) -> RunVerdict:
        calls.append(tuple(paths))
        return check_files(paths, *args)

    judging = sys.modules["rundir.invariants.judge"]  # the package exports `judge` itself
    monkeypatch.setattr(judging, "check_files", counted)
    monkeypatch.setattr(judging, "check", _never)

    report = check_run(run)

    assert len(calls) == 1
    assert report.history is not None
    assert isinstance(read_recorded(run).inputs.history, HistoryFiles)  # no operation held
    assert report.verdict.result(names.ACKNOWLEDGED_WRITES).judged
    assert report.anomalies()["lost-write"] == 0


def _never(*args: object) -> RunVerdict:
    raise AssertionError("the whole history was judged in memory")


def test_a_finished_run_with_its_logs_and_final_read_is_complete(run: Path) -> None:
    result = finished_run_completeness(run)
    assert result.name == RUN_DIR_COMPLETE
    assert result.violations == ()


def test_a_finished_run_whose_final_read_never_completed_is_incomplete(run: Path) -> None:
    final = RunDir(run).history / "final-read.jsonl"
    kept = [line for line in final.read_text().splitlines() if '"type":"ok"' not in line]
    assert len(kept) < len(final.read_text().splitlines())
    final.write_text("".join(f"{line}\n" for line in kept))
    result = finished_run_completeness(run)
    assert [v.subject for v in result.violations] == ["history/final-read.jsonl"]


def test_a_finished_run_without_event_logs_is_incomplete(run: Path) -> None:
    for path in RunDir(run).events.glob("*.jsonl"):
        path.unlink()
    result = finished_run_completeness(run)
    assert [v.subject for v in result.violations] == ["events/"]
