"""The bug hunt's plan: one plan per switch of the catalog, scenarios that judge the
invariants expected to fire, the order of a hunt's runs, picking bugs by name, and
docs/bugs.md showing each plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bugs import CATALOG
from chaos.generator.scenarios import SCENARIOS
from chaos.hunt.plan import PLANS, BugPlan, attempts, plans_for
from rundir.invariants.names import ACKNOWLEDGED_WRITES, CONVERGES_AFTER_HEAL, EVERY_RUN


def test_every_switch_of_the_catalog_has_one_plan_in_catalog_order() -> None:
    assert [p.bug for p in PLANS] == [bug.name for bug in CATALOG]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.bug)
def test_each_plan_names_scenarios_that_judge_what_it_expects(plan: BugPlan) -> None:
    assert plan.scenarios
    assert plan.catches
    assert plan.why
    judged = set(EVERY_RUN).union(*(s.invariants for s in plan.scenarios))
    assert plan.catches <= judged
    assert all(SCENARIOS[s.name] is s for s in plan.scenarios)


def test_a_plan_expecting_an_invariant_its_scenarios_do_not_judge_is_refused() -> None:
    unclean = SCENARIOS["broker-failure"]
    with pytest.raises(ValueError, match="no scenario of the plan judges"):
        BugPlan("kafka-1188", (unclean,), frozenset({"reassignment_completes"}), "why")
    with pytest.raises(ValueError, match="at least one scenario"):
        BugPlan("kafka-1188", (), frozenset({ACKNOWLEDGED_WRITES}), "why")


def test_runs_take_seed_after_seed_through_every_scenario() -> None:
    two = BugPlan(
        "x",
        (SCENARIOS["broker-bounce"], SCENARIOS["network-partition"]),
        frozenset({CONVERGES_AFTER_HEAL}),
        "why",
    )
    order = [(s.name, seed) for s, seed in attempts(two, 5)]
    assert order == [
        ("broker-bounce", 1),
        ("network-partition", 1),
        ("broker-bounce", 2),
        ("network-partition", 2),
        ("broker-bounce", 3),
    ]
    given = [(s.name, seed) for s, seed in attempts(two, 3, seeds=(7, 9))]
    assert given == [("broker-bounce", 7), ("network-partition", 7), ("broker-bounce", 9)]
    with pytest.raises(ValueError, match="at least one run"):
        attempts(two, 0)


def test_bugs_are_picked_by_name_in_the_order_given() -> None:
    assert plans_for(None) == PLANS
    assert plans_for([""]) == PLANS
    picked = plans_for(["unclean-election", " KAFKA-1188", "unclean-election"])
    assert [p.bug for p in picked] == ["unclean-election", "kafka-1188"]
    with pytest.raises(KeyError, match="no bug switch kafka-9999"):
        plans_for(["kafka-9999"])


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.bug)
def test_docs_bugs_md_shows_each_plan(plan: BugPlan) -> None:
    doc = (Path(__file__).resolve().parents[4] / "docs" / "bugs.md").read_text()
    section = doc.split("## What catches each bug", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| `{plan.bug}` |"))
    _, scenarios, invariants, _why = row.split(" | ")
    assert re.findall(r"\[`([a-z-]+)`\]", scenarios) == list(plan.scenario_names)
    assert sorted(re.findall(r"`([a-z_]+)`", invariants)) == sorted(plan.catches)
