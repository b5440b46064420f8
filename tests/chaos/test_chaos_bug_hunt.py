"""The bug hunt end to end on the chaos tier's compose project, for a switch it catches at
the first run: `unclean-election`, a controller that elects an out-of-sync replica.

Setup: the tier's compose cluster (3 ZooKeeper servers, 3 brokers, 6 s sessions). The
plan is a short `last-replica-standing`: a topic with two replicas per partition and min
ISR 1 under a 42 s acks=all workload; the two brokers that are not the controller killed
9 s apart (past the 6 s session, so the first has left the ISRs and the second has
acknowledged writes alone), each for 20 s, so that the stale one comes back first. One
seed.
Steps: `chaos.hunt.hunt.hunt` with the tier's builds (`chaos.hunt.builds.ComposeBuilds`):
the brokers recreated with `BUG_SWITCHES=unclean-election`, the run, then the brokers
recreated without it and the same run again.
Validate: the buggy build's verdict fails with `acknowledged_writes` and its run
directory records the switch; the fixed build's verdict holds and records none; the
brokers end without switches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chaos.cluster import endpoints
from chaos.cluster.handle import ClusterHandle
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.builds import ComposeBuilds
from chaos.hunt.hunt import HuntSettings, hunt
from chaos.hunt.plan import BugPlan
from chaos.run.runner import RunOutcome, RunRequest, run
from chaos.testing import short_last_replica
from harness.compose import ComposeCluster
from rundir.invariants.names import ACKNOWLEDGED_WRITES
from rundir.layout import RunDir

pytestmark = pytest.mark.chaos

REPO_ROOT = Path(__file__).resolve().parents[2]

SHORT = short_last_replica("short-last-replica", "chaos-bug-hunt")


@pytest.mark.timeout(480)
def test_unclean_election_is_caught_and_the_fixed_build_is_clean(
    chaos_cluster: ComposeCluster,
) -> None:
    plan = BugPlan("unclean-election", (SHORT,), frozenset({ACKNOWLEDGED_WRITES}), "why")

    def run_one(scenario: Scenario, seed: int, schedule: Schedule | None) -> RunOutcome:
        request = RunRequest(scenario, seed, chaos_cluster.project, REPO_ROOT / "runs", schedule)
        return run(request)

    result = hunt(plan, ComposeBuilds(chaos_cluster), run_one, HuntSettings(runs=1, max_shrink=0))

    (buggy,) = result.buggy
    assert buggy.ok is False, buggy
    assert ACKNOWLEDGED_WRITES in buggy.fired
    assert buggy.run_dir is not None
    config = RunDir(buggy.run_dir).read_json(RunDir(buggy.run_dir).config)
    assert config["bug_switches"] == ["unclean-election"]
    (fixed,) = result.fixed
    assert fixed.ok is True, fixed
    assert fixed.run_dir is not None
    assert RunDir(fixed.run_dir).read_json(RunDir(fixed.run_dir).config)["bug_switches"] == []
    assert result.ok
    with ClusterHandle.for_project(chaos_cluster.project) as handle:
        assert set(endpoints.bug_switches(handle).values()) == {()}
