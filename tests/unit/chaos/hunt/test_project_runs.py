"""`ProjectRuns`: a run refused for an earlier run's work in flight is run again once the
project is tidied; after a run that allowed a stall, what it left is tidied before the
next run without waiting for the refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chaos.cluster.leftovers import Leftovers
from chaos.hunt import command
from chaos.hunt.blind import blind_scenario
from chaos.run.runner import RunOutcome, RunRequest
from chaos.run.setup import LeftoverWork, RunSetupError
from rundir.invariants import InvariantResult, RunVerdict, Violation
from rundir.invariants.names import REASSIGNMENT_COMPLETES

STUCK = Leftovers(reassigning=("t-side-0",), deleting=("t-side",))


def test_a_run_refused_for_leftovers_runs_after_tidying(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[Any] = []
    outcome = RunOutcome(tmp_path, RunVerdict(()), 1.0, 3)

    def run(request: RunRequest) -> RunOutcome:
        calls.append(("run", request.seed))
        if len(calls) == 1:
            raise LeftoverWork("an earlier run's admin work", STUCK)
        return outcome

    monkeypatch.setattr(command, "run", run)
    monkeypatch.setattr(command, "tidy", lambda project, seen: calls.append(("tidy", seen)))
    monkeypatch.setattr(command, "present", lambda project: pytest.fail("looked"))
    runs = command.ProjectRuns("p", tmp_path, plain=True)
    assert runs(blind_scenario(45), 7, None) is outcome
    assert calls == [("run", 7), ("tidy", STUCK), ("run", 7)]
    assert (runs.performed, runs.tidied) == (1, 1)


def test_other_set_up_errors_are_not_tidied(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def run(request: RunRequest) -> RunOutcome:
        raise RunSetupError("no controller")

    monkeypatch.setattr(command, "run", run)
    monkeypatch.setattr(command, "tidy", lambda project, seen: pytest.fail("tidied"))
    runs = command.ProjectRuns("p", tmp_path, plain=True)
    with pytest.raises(RunSetupError, match="no controller"):
        runs(blind_scenario(45), 7, None)
    assert (runs.performed, runs.tidied) == (1, 0)


@pytest.mark.parametrize(("left", "tidied"), [(STUCK, 1), (Leftovers(), 0)])
def test_after_an_allowed_stall_the_next_run_tidies_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, left: Leftovers, tidied: int
) -> None:
    stall = InvariantResult(
        REASSIGNMENT_COMPLETES, (Violation("t-side-0", "never completed"),), 1, allowed=True
    )
    outcomes = iter(
        [
            RunOutcome(tmp_path, RunVerdict((stall,)), 1.0, 3),
            RunOutcome(tmp_path, RunVerdict(()), 1.0, 3),
        ]
    )
    calls: list[Any] = []
    monkeypatch.setattr(command, "run", lambda request: next(outcomes))
    monkeypatch.setattr(command, "present", lambda project: left)
    monkeypatch.setattr(command, "tidy", lambda project, seen: calls.append(("tidy", seen)))
    runs = command.ProjectRuns("p", tmp_path, plain=True)
    runs(blind_scenario(45), 7, None)
    assert calls == []
    runs(blind_scenario(45), 8, None)
    assert calls == [("tidy", STUCK)] * tidied
    assert (runs.performed, runs.tidied) == (2, tidied)
