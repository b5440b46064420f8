"""The runner's verdict starts with the run directory's completeness, then keeps the
scenario's invariants, the replication specifications' and Jepsen's queue classes, judged
on every run, in the judge's order, with the history's measures."""

from __future__ import annotations

from chaos.run.runner import _only, with_completeness
from rundir.invariants.names import (
    CONVERGES_AFTER_HEAL,
    LOG_MATCHING,
    NO_OFFLINE_PARTITIONS,
    SPEC_INVARIANTS,
)
from rundir.rejudge import RUN_DIR_COMPLETE
from rundir.results import InvariantResult, RunVerdict, Violation


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


def test_the_runner_puts_the_run_directorys_completeness_first() -> None:
    gap = Violation("history/final-read.jsonl", "holds no completed final read")
    verdict = RunVerdict((InvariantResult(CONVERGES_AFTER_HEAL),))
    judged = with_completeness(verdict, InvariantResult(RUN_DIR_COMPLETE, (gap,), checked=1))
    assert [r.name for r in judged.results] == [RUN_DIR_COMPLETE, CONVERGES_AFTER_HEAL]
    assert not judged.ok
