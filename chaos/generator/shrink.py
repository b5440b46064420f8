"""Shrinking a failing schedule: delta debugging (Zeller and Hildebrandt's ddmin) over its
steps, replaying ever smaller subsets until no single step can be left out and the run
still fail.

    result = shrink(schedule, fails=lambda s: run(s).failed, max_tests=30)
    result.minimal   # the smallest schedule found that still fails
    result.trail     # every replay: which steps it kept and whether it failed

A subset keeps the times of its steps and every action (actions are the scenario's set-up,
not a suspect). Its heal comes as long after its last fault as the original's did, and its
heal phase is as long as the original's (`sub_schedule`), so a shrunk run is shorter but
judged the same way. The seed is kept: a runner that resolves each step's roles from the
seed and the step (not from one shared stream of draws) resolves them the same way in
every subset.

Past the halves, each granularity tries the complements (every step but one chunk) before
the chunks alone: a failure that needs steps from both halves, as a correlated fault's
two steps do, has failed neither half, and a complement keeps most of what made it fail,
so a small budget is spent where a replay is most likely to fail again (ddmin proper tries
the chunks first).

ddmin assumes that a subset of a passing subset passes; a flaky oracle makes it return a
schedule that fails at least once, not necessarily a minimal one. Outcomes are cached, so
no subset is replayed twice. The search stops when `max_tests` replays have run; the
result then says so (`exhausted`) and holds the smallest failing schedule found so far.

Runs on the caller's thread: `fails` and `progress` are called there, one at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chaos.errors import ChaosError
from chaos.generator.schedule import Schedule, Step

__all__ = ["ShrinkProgress", "ShrinkResult", "Trial", "shrink", "sub_schedule"]


@dataclass(frozen=True, slots=True)
class Trial:
    """One replay: its number (from 1), the indices of the original steps it kept, and
    whether the run failed."""

    number: int
    kept: tuple[int, ...]
    failed: bool


@dataclass(frozen=True, slots=True)
class ShrinkProgress:
    """What a progress callback is told after each replay: the replay, the replays run and
    allowed, and the smallest failing subset so far."""

    trial: Trial
    tests_run: int
    max_tests: int
    smallest: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ShrinkResult:
    """The outcome: the smallest failing schedule found (`minimal`, with the original
    indices of its steps in `kept`), every replay in order, whether the original failed at
    all (`reproduced`; if not, `minimal` is the original), and whether the budget ended the
    search early (`exhausted`)."""

    original: Schedule
    minimal: Schedule
    kept: tuple[int, ...]
    trail: tuple[Trial, ...]
    reproduced: bool
    exhausted: bool

    @property
    def tests_run(self) -> int:
        """How many replays ran."""
        return len(self.trail)


def _anchor(schedule: Schedule, steps: tuple[Step, ...]) -> float:
    """The last fault's end or the last action, whichever is later (0 for neither)."""
    times = [s.ends_s for s in steps] + [a.at_s for a in schedule.actions]
    return max(times, default=0.0)


def sub_schedule(schedule: Schedule, kept: tuple[int, ...]) -> Schedule:
    """The schedule with only the steps at the indices `kept` (sorted, distinct), every
    action, the heal as long after the last fault or action as in `schedule`, and a heal
    phase as long as in `schedule`. `kept` holding every index gives `schedule` back."""
    if list(kept) != sorted(set(kept)) or any(not 0 <= i < len(schedule.steps) for i in kept):
        raise ValueError(f"kept must be sorted distinct step indices, got {kept}")
    if len(kept) == len(schedule.steps):
        return schedule
    steps = tuple(schedule.steps[i] for i in kept)
    heal = _anchor(schedule, steps) + schedule.heal_at_s - _anchor(schedule, schedule.steps)
    end = heal + schedule.end_s - schedule.heal_at_s
    return Schedule(schedule.seed, steps, heal, end, schedule.actions, schedule.replication)


class _BudgetSpent(ChaosError):
    pass


def _split(items: tuple[int, ...], n: int) -> list[tuple[int, ...]]:
    """`items` in `n` contiguous chunks whose sizes differ by at most one."""
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        chunks.append(items[start:end])
        start = end
    return [c for c in chunks if c]


def shrink(
    schedule: Schedule,
    fails: Callable[[Schedule], bool],
    max_tests: int = 64,
    progress: Callable[[ShrinkProgress], None] | None = None,
) -> ShrinkResult:
    """Replay `schedule` and, if it fails, ever smaller subsets of its steps (ddmin) until
    the failing subset is 1-minimal or `max_tests` replays have run. `fails` replays a
    schedule and says whether the run failed; an exception from it ends the shrink and
    propagates. `progress` is told about each replay."""
    if max_tests < 1:
        raise ValueError(f"max_tests must be at least 1, got {max_tests}")
    trail: list[Trial] = []
    outcomes: dict[tuple[int, ...], bool] = {}
    full = tuple(range(len(schedule.steps)))
    smallest = full

    def failing(kept: tuple[int, ...]) -> bool:
        nonlocal smallest
        if kept in outcomes:
            return outcomes[kept]
        if len(trail) >= max_tests:
            raise _BudgetSpent
        failed = bool(fails(sub_schedule(schedule, kept)))
        outcomes[kept] = failed
        trail.append(Trial(len(trail) + 1, kept, failed))
        if failed and len(kept) < len(smallest):
            smallest = kept
        if progress is not None:
            progress(ShrinkProgress(trail[-1], len(trail), max_tests, smallest))
        return failed

    def result(kept: tuple[int, ...], reproduced: bool, exhausted: bool) -> ShrinkResult:
        minimal = sub_schedule(schedule, kept)
        return ShrinkResult(schedule, minimal, kept, tuple(trail), reproduced, exhausted)

    try:
        if not failing(full):
            return result(full, reproduced=False, exhausted=False)
        current, n = full, 2
        while len(current) >= 2:
            chunks = _split(current, n)
            complements = [tuple(i for i in current if i not in c) for c in chunks]
            if n == 2:  # each half's complement is the other half
                complements = []
            reduced = next((c for c in complements if failing(c)), None)
            if reduced is not None:
                current, n = reduced, max(n - 1, 2)
                continue
            reduced = next((c for c in chunks if failing(c)), None)
            if reduced is not None:
                current, n = reduced, 2
                continue
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    except _BudgetSpent:
        return result(smallest, reproduced=True, exhausted=True)
    return result(current, reproduced=True, exhausted=False)
