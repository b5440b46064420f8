"""The CI subset of the chaos scenarios, end to end, each with seed 1: the runner performs
the scenario's schedule on the tier's own compose project with the workload running, and
every invariant the scenario names must hold.

Setup: the tier's compose cluster (3 ZooKeeper servers, 3 brokers, 6 s sessions).
Steps: `chaos.run.runner.run(scenario, seed 1)` for `broker-failure`, `controller-pause` and
`zk-isolation`, one after another on the same cluster.
Validate: the verdict holds; the run directory holds everything docs/runs.md lists; every
fault was recorded as started, in effect, stopped and undone; the heal state is empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaos.generator.scenarios import SCENARIOS
from chaos.run.heal_state import HealState
from chaos.run.runner import RunRequest, run
from eventlog.jsonlines import read_json_lines
from harness.compose import ComposeCluster
from rundir.invariants.names import EVERY_RUN
from rundir.layout import RUN_DIR_VERSION, RunDir
from rundir.rejudge import RUN_DIR_COMPLETE

pytestmark = pytest.mark.chaos

REPO_ROOT = Path(__file__).resolve().parents[2]
CI_SUBSET = ("broker-failure", "controller-pause", "zk-isolation")


def _lines(path: Path) -> list[dict[str, object]]:
    return [line for _, line in read_json_lines(path) if isinstance(line, dict)]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", CI_SUBSET)
def test_scenario_passes_its_verdict(chaos_cluster: ComposeCluster, name: str) -> None:
    scenario = SCENARIOS[name]
    outcome = run(
        RunRequest(scenario, 1, chaos_cluster.project, REPO_ROOT / "runs", force_plain=True)
    )
    assert outcome.ok, outcome.verdict.table()
    judged = {r.name for r in outcome.verdict.results}
    assert judged == {RUN_DIR_COMPLETE} | scenario.invariants | set(EVERY_RUN)
    assert outcome.verdict.results[0].name == RUN_DIR_COMPLETE
    assert outcome.recovery_s is not None
    assert outcome.recovery_s <= scenario.convergence_s

    run_dir = RunDir(outcome.run_dir)
    config = run_dir.read_json(run_dir.config)
    assert (config["run_dir_version"], config["scenario"], config["seed"]) == (
        RUN_DIR_VERSION,
        name,
        1,
    )
    assert json.loads(run_dir.schedule.read_text())["steps"]
    phases = [(line["fault"], line["phase"], line["ok"]) for line in _lines(run_dir.faults)]
    for fault in {f for f, _, _ in phases}:
        assert [(p, ok) for f, p, ok in phases if f == fault] == [
            ("start", True),
            ("took_effect", True),
            ("stop", True),
            ("undone", True),
        ], f"{fault}: {phases}"
    assert sorted(p.stem for p in run_dir.events.glob("*.jsonl")) == [
        "broker1",
        "broker2",
        "broker3",
    ]
    assert list(run_dir.history.glob("*.jsonl"))
    scrapes = _lines(run_dir.metrics)
    assert {line["node"] for line in scrapes if line["ok"]} == {"broker1", "broker2", "broker3"}
    assert _lines(run_dir.snapshots)
    verdict = run_dir.read_json(run_dir.verdict)
    assert (verdict["ok"], verdict["scenario"], verdict["failed_steps"]) == (True, name, [])
    assert HealState(run_dir.root, chaos_cluster.project).load() == []
