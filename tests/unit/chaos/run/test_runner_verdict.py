"""The runner's verdict keeps the scenario's invariants, the replication specifications'
and Jepsen's queue classes, judged on every run, in the judge's order, with the history's
measures."""

from __future__ import annotations

from chaos.run.runner import _only
from rundir.invariants.names import (
    CONVERGES_AFTER_HEAL,
    LOG_MATCHING,
    NO_OFFLINE_PARTITIONS,
    SPEC_INVARIANTS,
)
from rundir.results import InvariantResult, RunVerdict


def test_the_runner_keeps_what_every_run_is_judged_on_whatever_the_scenario_names() -> None:
    names = [CONVERGES_AFTER_HEAL, *SPEC_INVARIANTS, NO_OFFLINE_PARTITIONS, "unseen", "G1a"]
    verdict = RunVerdict(tuple(InvariantResult(n) for n in names), stats={"worst_lag_ms": 7})
    kept = _only(verdict, frozenset({CONVERGES_AFTER_HEAL}))
    assert [r.name for r in kept.results] == [
        CONVERGES_AFTER_HEAL,
        *SPEC_INVARIANTS,
        "unseen",
        "G1a",
    ]
    assert LOG_MATCHING in [r.name for r in kept.results]
    assert kept.stats == {"worst_lag_ms": 7}
