"""docs/scenarios.md keeps up with the code: a section per scenario holding its runbook,
invariants and nominal schedule, and a row for every fault kind, action, role and
invariant."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chaos.cluster.roles import ROLE_NAMES
from chaos.faults.registry import FAULT_TYPES
from chaos.generator.action_kinds import ACTION_KINDS
from chaos.generator.scenarios import SCENARIOS
from chaos.generator.scenarios.scenario import INVARIANTS
from chaos.generator.schedule import SCHEDULE_VERSION, Schedule

DOC = (Path(__file__).resolve().parents[4] / "docs" / "scenarios.md").read_text()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _section(name: str) -> str:
    match = re.search(rf"^### {re.escape(name)}\n(.*?)(?=^### |\Z)", DOC, re.MULTILINE | re.DOTALL)
    assert match, f"docs/scenarios.md has no section for {name}"
    return match.group(1)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_has_its_runbook_invariants_and_schedule(name: str) -> None:
    scenario = SCENARIOS[name]
    section = _section(name)
    body = scenario.runbook.split("\n", 1)[1]
    assert _flat(body) in _flat(section), f"{name}: the runbook in the doc is stale"
    assert scenario.schedule(None).describe() in section
    for invariant in scenario.invariants:
        assert f"`{invariant}`" in section


@pytest.mark.parametrize(
    "name", [*FAULT_TYPES, *ACTION_KINDS, *INVARIANTS, *(r.split(":")[0] for r in ROLE_NAMES)]
)
def test_every_kind_action_role_and_invariant_has_a_row(name: str) -> None:
    assert re.search(rf"^\| `{re.escape(name)}[`:]", DOC, re.MULTILINE), name


def test_the_schedule_version_is_the_one_documented() -> None:
    assert f"## schedule.json (version {SCHEDULE_VERSION})" in DOC
    assert f'"version": {SCHEDULE_VERSION},' in DOC


def test_the_documented_example_is_a_valid_schedule() -> None:
    match = re.search(r"```json\n(.*?)```", DOC, re.DOTALL)
    assert match
    schedule = Schedule.from_json(json.loads(match.group(1)))
    assert schedule.to_json() == json.loads(match.group(1))
