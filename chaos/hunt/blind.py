"""The blind hunt of one switch (`python -m chaos hunt`, docs/bugs.md, "Blind hunt"): no
plan, only the generic generator's schedules, chosen by coverage (`chaos.hunt.corpus`).

    builds.use(("kafka-1188",))          # brokers recreated with the switch on
    run the planner's next schedule ...  # `runs` at most; stop at the first FAIL; after
                                         # each run record its coverage, recreate the
                                         # brokers only after a run that did not hold
    shrink the failing schedule          # as the planned hunt does (`hunt.shrink_failure`)
    builds.use(())                       # brokers recreated without it
    replay every buggy run's schedule    # each must pass: a failure is a false alarm

Every run is scenario `random` with the workload as long as the schedule (`run_s`).
The cluster is kept between runs of one build: a run that held had converged after its
heal (the core invariant `converges_after_heal`), and the runner checks before each run
that every service runs, every broker is registered and a controller is elected. A run
that failed, or could not be judged, may have left the brokers broken (KAFKA-2300's
controller fails every later state change): they are recreated and proven settled
(`Builds.use`) before the next run; when they do not come up, that run is recorded as not
judged, and the next one tries again. A run not judged (not set up, or not performing its
whole schedule in any of its tries) is recorded without its coverage, so the planner never
picks its schedule to mutate.

Like `chaos.hunt.hunt`, `blind_hunt` is handed its `Builds`, `RunOne`, the reader of a
run's coverage and a clock, so its order of work is tested with fakes. Caller's thread.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from chaos.generator.scenarios import SCENARIOS, Scenario
from chaos.generator.schedule import Schedule
from chaos.hunt.corpus import Planner, draw_schedule
from chaos.hunt.hunt import Attempt, Builds, RunOne, run_attempt, shrink_failure, word_of
from chaos.run.setup import RunSetupError
from rundir.errors import RunDirError

__all__ = [
    "DEFAULT_RUN_S",
    "BlindResult",
    "BlindRun",
    "BlindSettings",
    "blind_hunt",
    "blind_scenario",
    "cannot_hunt",
    "recreate_brokers",
]

#: A blind run's length (seconds): shorter than the `random` scenario's, faults denser.
DEFAULT_RUN_S = 45.0
#: Reads the behaviours a run reached (`rundir.coverage.read_coverage`).
ReadCoverage = Callable[[Path], frozenset[str]]


@dataclass(frozen=True, slots=True)
class BlindSettings:
    """What a blind hunt may spend and where its choices come from: buggy runs per switch,
    each run's length, replays to shrink with, the seeds fresh schedules take first, and
    the hunt's seed (each switch's planner is seeded by it and the switch's name)."""

    runs: int = 10
    run_s: float = DEFAULT_RUN_S
    max_shrink: int = 8
    seeds: tuple[int, ...] = ()
    hunt_seed: int = 1


@dataclass(frozen=True, slots=True)
class BlindRun:
    """One buggy run: where its schedule came from, the schedule, how it went, the
    behaviours it reached, how many of them no earlier run had, and the minutes since the
    switch's hunt started when it ended."""

    origin: str
    schedule: Schedule
    attempt: Attempt
    behaviours: frozenset[str]
    new: int
    minutes: float


@dataclass(frozen=True, slots=True)
class BlindResult:
    """One switch's blind hunt: the buggy runs (the last failed when it was caught), the
    shrunk schedule, the fixed build's replays, and the brokers' recreations."""

    bug: str
    runs: tuple[BlindRun, ...]
    fixed: tuple[Attempt, ...] = ()
    shrunk: Schedule | None = None
    shrink_note: str = ""
    recreated: int = 0
    error: str = ""

    @property
    def catching(self) -> BlindRun | None:
        """The buggy run whose verdict failed, if any."""
        return next((r for r in self.runs if r.attempt.ok is False), None)

    @property
    def caught(self) -> bool:
        """A buggy run failed its verdict."""
        return self.catching is not None

    @property
    def runs_to_catch(self) -> int | None:
        """The catching run's number (from 1)."""
        found = self.catching
        return None if found is None else self.runs.index(found) + 1

    @property
    def false_alarms(self) -> int:
        """Fixed-build replays whose verdict failed."""
        return sum(1 for a in self.fixed if a.ok is False)

    @property
    def fixed_clean(self) -> bool:
        """Every buggy run's schedule was replayed on the fixed build, and each held."""
        return bool(self.fixed) and all(a.ok is True for a in self.fixed)

    @property
    def ok(self) -> bool:
        """Caught on the buggy build, clean on the fixed one."""
        return self.caught and self.fixed_clean

    @property
    def reached(self) -> frozenset[str]:
        """Every behaviour the buggy runs reached."""
        return frozenset().union(*(r.behaviours for r in self.runs))

    @property
    def growth(self) -> tuple[int, ...]:
        """The behaviours reached so far, after each buggy run."""
        total, grown = 0, []
        for run in self.runs:
            total += run.new
            grown.append(total)
        return tuple(grown)


def blind_scenario(run_s: float) -> Scenario:
    """Scenario `random` with the workload `run_s` seconds long, its seed's schedule
    `draw_schedule(seed, run_s)` (the invariants are those of `random`)."""
    base = SCENARIOS["random"]
    workload = dataclasses.replace(base.workload, duration_s=run_s)

    def plan(seed: int | None) -> Schedule:
        return draw_schedule(0 if seed is None else seed, run_s)

    return dataclasses.replace(base, workload=workload, plan=plan)


def _covered(read: ReadCoverage, attempt: Attempt) -> frozenset[str]:
    if attempt.run_dir is None:
        return frozenset()
    try:
        return read(attempt.run_dir)
    except (OSError, RunDirError):
        return frozenset()


def recreate_brokers(builds: Builds, switches: tuple[str, ...]) -> str:
    """Recreate the brokers with `switches`; why they did not come up, or ""."""
    try:
        builds.use(switches)
    except RunSetupError as exc:
        return f"recreating the brokers: {exc}"
    return ""


def blind_hunt(
    bug: str,
    builds: Builds,
    run_one: RunOne,
    settings: BlindSettings,
    read_coverage: ReadCoverage,
    clock: Callable[[], float] = time.monotonic,
    say: Callable[[str], None] = print,
) -> BlindResult:
    """Hunt `bug` blind (see the module docstring); `say` is told what happens."""
    scenario = blind_scenario(settings.run_s)
    planner = Planner(
        f"{settings.hunt_seed}:{bug}",
        lambda seed: draw_schedule(seed, settings.run_s),
        settings.seeds,
    )
    recreated = 0
    builds.use((bug,))
    started = clock()
    runs: list[BlindRun] = []
    damaged = False
    for number in range(1, settings.runs + 1):
        choice = planner.next()
        say(f"{bug}: buggy build, run {number}/{settings.runs}: {choice.origin}")
        seed = choice.schedule.seed if choice.schedule.seed is not None else 0
        error = recreate_brokers(builds, (bug,)) if damaged else ""
        recreated += 1 if damaged else 0
        if error:
            attempt = Attempt(scenario.name, seed, None, None, error=error)
        else:
            attempt = run_attempt(run_one, scenario, seed, choice.schedule)
        damaged = attempt.ok is not True
        behaviours = _covered(read_coverage, attempt)
        # a run not judged did not perform its schedule as drawn: never mutated
        judged = behaviours if attempt.ok is not None else frozenset()
        new = planner.record(choice.schedule, judged)
        minutes = (clock() - started) / 60
        runs.append(BlindRun(choice.origin, choice.schedule, attempt, behaviours, new, minutes))
        reached = len(planner.corpus.reached)
        say(f"{bug}: {word_of(attempt)}; {new} new behaviour(s), {reached} in all")
        if attempt.ok is False:
            break
    result = BlindResult(bug, tuple(runs), recreated=recreated)
    catching = result.catching
    shrunk, note = None, "not caught"
    if catching is not None:
        failing = (scenario, catching.schedule)
        shrunk, note = shrink_failure(bug, failing, builds, run_one, settings.max_shrink, say)
    builds.use(())
    fixed: list[Attempt] = []
    damaged = False
    for number, run in enumerate(runs, 1):
        say(f"{bug}: fixed build, replay {number}/{len(runs)}: {run.origin}")
        error = recreate_brokers(builds, ()) if damaged else ""
        recreated += 1 if damaged else 0
        if error:
            again = Attempt(scenario.name, run.attempt.seed, None, None, error=error)
        else:
            again = run_attempt(run_one, scenario, run.attempt.seed, run.schedule)
        damaged = again.ok is not True
        fixed.append(again)
        say(f"{bug}: fixed build {word_of(again)}")
    return dataclasses.replace(
        result, fixed=tuple(fixed), shrunk=shrunk, shrink_note=note, recreated=recreated
    )


def cannot_hunt(bug: str, error: RunSetupError) -> BlindResult:
    """The result of a switch whose build could not be brought up."""
    return BlindResult(bug, (), error=str(error))
