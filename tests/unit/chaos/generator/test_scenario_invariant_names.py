"""Which invariants a scenario may name (`chaos.generator.scenarios.invariant_names`):
every invariant a verdict can hold, by the name the verdict gives it (the cluster and
scenario checks, the replication specifications' and Jepsen's queue classes), each with
words for docs/scenarios.md; a scenario naming another is refused when it is defined,
with the nearest known names.
"""

from __future__ import annotations

import re

import pytest

from chaos.generator.scenarios import SCENARIOS
from chaos.generator.scenarios.invariant_names import (
    CORE_INVARIANTS,
    EVERY_RUN_INVARIANTS,
    INVARIANTS,
    unknown_invariants,
)
from chaos.generator.scenarios.scenario import Scenario, Workload
from chaos.generator.schedule import Schedule
from rundir.invariants.judge import SCENARIO_CHECKS, RunInputs, judge
from rundir.invariants.names import LEADER_COMPLETENESS, LOG_MATCHING, SPEC_INVARIANTS

RUNBOOK = "named: a scenario naming invariants.\n\nSetup: x\n\nSteps: y\n\nVerdict: z\n"


def _plan(seed: int | None) -> Schedule:
    return SCENARIOS["broker-failure"].plan(seed)


def test_every_invariant_a_verdict_can_hold_is_nameable_with_words() -> None:
    verdict = judge(RunInputs(events={}, also=frozenset(SCENARIO_CHECKS)))
    assert {r.name for r in verdict.results} == INVARIANTS.keys()
    assert all(words.strip() for words in INVARIANTS.values())
    assert INVARIANTS.keys() >= CORE_INVARIANTS
    assert {*SPEC_INVARIANTS, "lost-write", "G1a"} <= EVERY_RUN_INVARIANTS


def test_a_scenario_may_name_specification_invariants_and_queue_classes() -> None:
    also = (LOG_MATCHING, LEADER_COMPLETENESS, "lost-write", "nonmonotonic-poll")
    scenario = Scenario.from_runbook(RUNBOOK, Workload("t"), _plan, 30, also)
    assert scenario.invariants == CORE_INVARIANTS | set(also)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("lost_write", "unknown invariants lost_write (did you mean lost-write?)"),
        ("log-matching", "unknown invariants log-matching (did you mean log_matching"),
        ("g1a", "unknown invariants g1a (did you mean G1a?)"),
        ("no-cake", "unknown invariants no-cake"),
    ],
)
def test_an_unknown_name_is_refused_at_definition_with_the_nearest_names(
    name: str, said: str
) -> None:
    assert unknown_invariants([name]).startswith(said)
    with pytest.raises(ValueError, match=f"^named: {re.escape(said)}"):
        Scenario.from_runbook(RUNBOOK, Workload("t"), _plan, 30, (LOG_MATCHING, name))


def test_known_names_pass_the_check() -> None:
    assert unknown_invariants(INVARIANTS) == ""
