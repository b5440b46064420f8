"""The bug hunt's table: a row per bug (caught with its run and invariants, runs needed,
the shrunk schedule in short form, fixed build clean), markdown and JSON summaries."""

from __future__ import annotations

import json
from pathlib import Path

from chaos.generator.scenarios import SCENARIOS
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step, Trigger
from chaos.hunt.hunt import Attempt, BugResult
from chaos.hunt.plan import plans_for
from chaos.hunt.report import HEADERS, markdown, row_of, short_schedule, write_summary

(PLAN,) = plans_for(["kafka-1188"])


def _caught() -> BugResult:
    buggy = (
        Attempt("controller-pause", 1, Path("r1"), True),
        Attempt("controller-pause", 2, Path("r2"), False, ("controller_epoch_fencing",)),
    )
    fixed = (
        Attempt("controller-pause", 1, Path("f1"), True),
        Attempt("controller-pause", 2, Path("f2"), True),
    )
    shrunk = SCENARIOS["controller-pause"].schedule(2)
    return BugResult(PLAN, buggy, fixed, shrunk, "one step, nothing to shrink")


def test_short_schedules_list_faults_and_actions_by_time() -> None:
    schedule = Schedule(
        3,
        (Step(21.0, 15.0, FaultSpec("kill", "controller")),),
        heal_at_s=50,
        end_s=75,
        actions=(Action(20.0, "reassign", (("topic", "t"), ("shift", 1))),),
    )
    assert short_schedule(schedule) == "reassign @20s; kill controller @21s+15s"
    assert short_schedule(None) == "-"


def test_a_triggered_step_shows_its_event() -> None:
    trigger = Trigger("partition_state_change", (("target", "OnlinePartition"),), 25)
    schedule = Schedule(1, (Step(49.3, 0, FaultSpec("zk-reset", "controller"), trigger),), 80, 110)
    assert short_schedule(schedule) == (
        "zk-reset controller @49.3s on partition_state_change target=OnlinePartition within 25s"
    )


def test_a_caught_bug_row() -> None:
    row = row_of(_caught())
    assert row.ok
    assert row.cells()[:4] == (
        "kafka-1188",
        "controller-pause (seed 2)",
        "yes, run 2: controller_epoch_fencing",
        "2",
    )
    assert row.shrunk.startswith("pause controller @")
    assert row.fixed == "yes"


def test_a_missed_bug_and_a_dirty_fixed_build() -> None:
    buggy = (
        Attempt("controller-pause", 1, Path("r1"), True),
        Attempt("controller-pause", 2, None, None, error="not ready"),
    )
    fixed = (Attempt("controller-pause", 1, Path("f1"), False, ("converges_after_heal",)),)
    row = row_of(BugResult(PLAN, buggy, fixed))
    assert not row.ok
    assert row.caught == "no (1 not run: not ready)"
    assert (row.runs, row.shrunk) == ("> 1", "-")
    assert row.fixed == "no: controller-pause seed 1 converges_after_heal"


def test_the_summary_is_written_as_json_and_markdown(tmp_path: Path) -> None:
    json_path, md_path = write_summary(tmp_path / "bugs-x", [_caught()], {"runs": 5})
    summary = json.loads(json_path.read_text())
    assert summary["ok"] is True
    assert summary["settings"] == {"runs": 5}
    (bug,) = summary["bugs"]
    assert (bug["bug"], bug["caught"], bug["expected"], bug["fixed_clean"]) == (
        "kafka-1188",
        True,
        True,
        True,
    )
    assert [r["seed"] for r in bug["buggy_runs"]] == [1, 2]
    text = md_path.read_text()
    assert "| " + " | ".join(HEADERS) + " |" in text
    assert markdown([row_of(_caught())]).count("\n") == 2
