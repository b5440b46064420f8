"""The fixed build's soak (`python -m chaos soak`, docs/bugs.md, "False alarms on the
fixed build"): fresh generic schedules on brokers with no bug switch on, each judged by
every invariant scenario `random` judges. No switch is on, so a verdict that fails is a
false alarm of the testbed, or a bug of the code under test itself (as the deletion
deadlock docs/bugs.md describes was): either way a person reads the run.

    builds.use(())                               # brokers recreated without switches
    for each of `runs` seeds:                    # recreated again after a run that failed
        run draw_schedule(seed, run_s)           # or could not be judged

The seeds are `--seeds` first, then a stream of `random.Random("soak:<soak seed>")`: a
stream of its own, which the blind hunt's planners (seeded by `<hunt seed>:<switch>`)
never draw from, so the soak judges schedules no hunt was tuned on. A run that could not
be set up, or performed only part of its schedule (`chaos.hunt.hunt.run_attempt` tries
such a seed again first), is not judged: neither held nor an alarm.

Like `chaos.hunt.blind`, `soak` is handed its `Builds`, `RunOne` and a clock, so its order
of work is tested with fakes. Caller's thread.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from chaos.generator.schedule import Schedule
from chaos.hunt.blind import DEFAULT_RUN_S, blind_scenario, recreate_brokers
from chaos.hunt.corpus import draw_schedule
from chaos.hunt.hunt import Attempt, Builds, RunOne, run_attempt, word_of

__all__ = ["SEED_BOUND", "SoakResult", "SoakRun", "SoakSettings", "soak", "soak_seeds"]

#: Seeds drawn for the soak are below this (the planners draw theirs the same way).
SEED_BOUND = 2**31


@dataclass(frozen=True, slots=True)
class SoakSettings:
    """How many runs, each run's length, the seeds to take first, the soak's own seed."""

    runs: int = 100
    run_s: float = DEFAULT_RUN_S
    seeds: tuple[int, ...] = ()
    soak_seed: int = 1


@dataclass(frozen=True, slots=True)
class SoakRun:
    """One run: its schedule, how it went, and the minutes since the soak started when it
    ended."""

    schedule: Schedule
    attempt: Attempt
    minutes: float


@dataclass(frozen=True, slots=True)
class SoakResult:
    """Every run of the soak and how often the brokers were recreated."""

    runs: tuple[SoakRun, ...]
    recreated: int = 0

    @property
    def held(self) -> int:
        """Runs whose verdict held."""
        return sum(1 for r in self.runs if r.attempt.ok is True)

    @property
    def alarms(self) -> tuple[SoakRun, ...]:
        """Runs whose verdict failed: false alarms, unless the fixed build has a bug."""
        return tuple(r for r in self.runs if r.attempt.ok is False)

    @property
    def not_judged(self) -> int:
        """Runs that could not be set up or performed only part of their schedule."""
        return sum(1 for r in self.runs if r.attempt.ok is None)

    @property
    def fired(self) -> dict[str, int]:
        """How many alarms each invariant raised, most first."""
        counts = Counter(name for r in self.alarms for name in r.attempt.fired)
        return dict(counts.most_common())

    @property
    def ok(self) -> bool:
        """At least one run was judged, and none raised an alarm."""
        return self.held > 0 and not self.alarms


def soak_seeds(settings: SoakSettings) -> Iterator[int]:
    """`settings.seeds`, then the soak's own stream (see the module docstring)."""
    yield from settings.seeds
    rng = random.Random(f"soak:{settings.soak_seed}")
    while True:
        yield rng.randrange(1, SEED_BOUND)


def soak(
    builds: Builds,
    run_one: RunOne,
    settings: SoakSettings,
    clock: Callable[[], float] = time.monotonic,
    say: Callable[[str], None] = print,
    on_run: Callable[[SoakResult], object] | None = None,
) -> SoakResult:
    """Run the soak (see the module docstring); `say` is told what happens, `on_run` is
    handed the result so far after every run."""
    scenario = blind_scenario(settings.run_s)
    builds.use(())
    started = clock()
    runs: list[SoakRun] = []
    recreated = 0
    damaged = False
    seeds = soak_seeds(settings)
    for number in range(1, settings.runs + 1):
        seed = next(seeds)
        schedule = draw_schedule(seed, settings.run_s)
        say(f"soak: run {number}/{settings.runs}: seed {seed}")
        error = recreate_brokers(builds, ()) if damaged else ""
        recreated += 1 if damaged else 0
        if error:
            attempt = Attempt(scenario.name, seed, None, None, error=error)
        else:
            attempt = run_attempt(run_one, scenario, seed, schedule)
        damaged = attempt.ok is not True
        runs.append(SoakRun(schedule, attempt, (clock() - started) / 60))
        say(f"soak: {word_of(attempt)}")
        if on_run is not None:
            on_run(SoakResult(tuple(runs), recreated))
    return SoakResult(tuple(runs), recreated)
