"""The disk scenarios: each aims one disk fault at the role its runbook names, with the
runbook's nominal values, lasting long enough to be seen and ending well before the
heal; they name the invariants their faults exercise, and no other scenario needs the
disk layers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaos.faults.disk import DISK_KINDS
from chaos.generator.scenarios import SCENARIOS

SEEDS = st.one_of(st.none(), st.integers(min_value=0, max_value=2**63))

#: name -> (kind, role, the nominal params)
EXPECTED = {
    "disk-failure": (
        "disk-eio",
        "busiest-leader",
        {"op": "write", "glob": "*", "probability": 1.0},
    ),
    "slow-disk": ("disk-slow", "non-controller", {"op": "write", "delay_ms": 200}),
    "disk-full": ("disk-full", "controller", {"budget_bytes": 16 * 1024}),
}


@pytest.mark.parametrize("name", EXPECTED)
def test_the_nominal_schedule_is_the_runbook_s(name: str) -> None:
    kind, role, params = EXPECTED[name]
    (step,) = SCENARIOS[name].schedule(None).steps
    assert (step.fault.kind, step.fault.target, dict(step.fault.params)) == (kind, role, params)
    assert step.at_s == 15


@pytest.mark.parametrize("name", EXPECTED)
@given(seed=SEEDS)
@settings(max_examples=40, deadline=None)
def test_every_seed_leaves_time_to_take_effect_and_to_recover(name: str, seed: int | None) -> None:
    schedule = SCENARIOS[name].schedule(seed)
    (step,) = schedule.steps
    assert step.fault.kind == EXPECTED[name][0]
    assert step.duration_s >= 20, "the fault lasts long enough to be seen in the load"
    assert schedule.heal_at_s - step.ends_s >= 10, "the restart has time before the heal"


def test_the_failing_disks_judge_what_a_new_leader_must_hold() -> None:
    for name in ("disk-failure", "disk-full"):
        invariants = SCENARIOS[name].invariants
        assert {"acknowledged_writes", "acknowledged_kept", "leader_completeness"} <= invariants
    assert "isr_join_after_epoch_start" in SCENARIOS["slow-disk"].invariants


def test_only_the_disk_scenarios_need_the_disk_layers() -> None:
    needing = {
        name
        for name, scenario in SCENARIOS.items()
        if {s.fault.kind for s in scenario.schedule(None).steps} & DISK_KINDS
    }
    assert needing == set(EXPECTED)
