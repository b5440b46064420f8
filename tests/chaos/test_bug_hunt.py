"""The bug hunt end to end on the chaos tier's compose project, for the switch it catches
quickest: `kafka-1188`, brokers that obey requests of an older controller epoch.

Setup: the tier's compose cluster (3 ZooKeeper servers, 3 brokers, 6 s sessions). The
plan is a short controller pause (a 35 s workload, the controller frozen from 8 s for
12 s, twice the session timeout), one seed.
Steps: `chaos.bug_hunt.hunt` with the tier's builds (`chaos.bug_builds.ComposeBuilds`):
the brokers recreated with `BUG_SWITCHES=kafka-1188`, the run, then the brokers recreated
without it and the same run again.
Validate: the buggy build's verdict fails with `controller_epoch_fencing` and its run
directory records the switch; the fixed build's verdict holds and records none; the
brokers end without switches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos import endpoints
from chaos.bug_builds import ComposeBuilds
from chaos.bug_hunt import HuntSettings, hunt
from chaos.bugs_plan import BugPlan
from chaos.cluster import ClusterHandle
from chaos.invariants.names import CONTROLLER_EPOCH_FENCING
from chaos.run_dir import RunDir
from chaos.runner import RunOutcome, RunRequest, run
from chaos.scenarios import Scenario
from chaos.scenarios.scenario import Workload, one_fault
from chaos.schedule import Schedule
from harness.compose import ComposeCluster

pytestmark = pytest.mark.chaos

REPO_ROOT = Path(__file__).resolve().parents[2]

SHORT_PAUSE_RUNBOOK = """short-controller-pause: freeze the controller for twice its session.

Setup: topic `chaos-bug-hunt`, the default workload for 35 s.

Steps: at 8 s freeze the controller for 12 s; heal at 22 s.

Verdict: the core invariants; convergence within 30 s of the heal.
"""
WORKLOAD = Workload("chaos-bug-hunt", duration_s=35)
SHORT_PAUSE = Scenario.from_runbook(
    SHORT_PAUSE_RUNBOOK,
    WORKLOAD,
    one_fault("pause", ("controller",), (8, 0), (12, 0), heal_at_s=22, end_s=35),
    30,
)


@pytest.mark.timeout(420)
def test_the_stale_epoch_switch_is_caught_and_the_fixed_build_is_clean(
    chaos_cluster: ComposeCluster,
) -> None:
    plan = BugPlan("kafka-1188", (SHORT_PAUSE,), frozenset({CONTROLLER_EPOCH_FENCING}), "why")

    def run_one(scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        request = RunRequest(scenario, seed, chaos_cluster.project, REPO_ROOT / "runs", schedule)
        return run(request)

    result = hunt(plan, ComposeBuilds(chaos_cluster), run_one, HuntSettings(runs=1, max_shrink=0))

    (buggy,) = result.buggy
    assert buggy.ok is False, buggy
    assert CONTROLLER_EPOCH_FENCING in buggy.fired
    assert buggy.run_dir is not None
    config = RunDir(buggy.run_dir).read_json(RunDir(buggy.run_dir).config)
    assert config["bug_switches"] == ["kafka-1188"]
    (fixed,) = result.fixed
    assert fixed.ok is True, fixed
    assert fixed.run_dir is not None
    assert RunDir(fixed.run_dir).read_json(RunDir(fixed.run_dir).config)["bug_switches"] == []
    assert result.ok
    with ClusterHandle.for_project(chaos_cluster.project) as handle:
        assert set(endpoints.bug_switches(handle).values()) == {()}
