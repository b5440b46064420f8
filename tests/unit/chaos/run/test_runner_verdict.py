"""The runner's verdict keeps the scenario's invariants and the replication
specifications', judged on every run, in the judge's order."""

from __future__ import annotations

from chaos.run.runner import _only
from rundir.invariants.names import (
    CONVERGES_AFTER_HEAL,
    LOG_MATCHING,
    NO_OFFLINE_PARTITIONS,
    SPEC_INVARIANTS,
)
from rundir.results import InvariantResult, RunVerdict


def test_the_runner_keeps_the_specification_invariants_whatever_the_scenario_names() -> None:
    names = [CONVERGES_AFTER_HEAL, *SPEC_INVARIANTS, NO_OFFLINE_PARTITIONS, "unseen"]
    verdict = RunVerdict(tuple(InvariantResult(n) for n in names))
    kept = _only(verdict, frozenset({CONVERGES_AFTER_HEAL}))
    assert [r.name for r in kept.results] == [CONVERGES_AFTER_HEAL, *SPEC_INVARIANTS]
    assert LOG_MATCHING in [r.name for r in kept.results]
