"""The bug hunt of one switch (`python -m chaos bugs`, docs/bugs.md): run the plan's
scenarios on the buggy build until a verdict fails, shrink that run's schedule with the
switch still on, then run the same scenarios and seeds on the fixed build, which must pass.

    builds.use(("kafka-1188",))        # brokers recreated with the switch on
    run (scenario, seed) ...            # attempts(plan, runs); stop at the first FAIL
    shrink the failing schedule         # chaos.generator.shrink, each replay on the buggy build,
                                        # on fresh brokers after a run that did not hold
    builds.use(())                      # brokers recreated without it
    run the same (scenario, seed) ...   # every one must pass

`hunt` does not touch docker itself: it is handed a `Builds` (which switches the brokers
run with) and a `RunOne` (one chaos run), so its order of work is tested with fakes. A
run that could not be set up (the cluster was not ready, a fault could not be reached) is
recorded with its error and counts as neither caught nor clean. A run that held although
a step of its schedule failed (a `docker pause` the runtime refused under load, a cut that
could not prove it took effect) did not test the build: it is run once more with the same
seed, and if that one is not exercised either, it too counts as neither. The buggy and
the fixed runs are judged against each other by the comparison of two builds
(`BugResult.comparison`, `chaos.compare.judgement`): the switched build is the head, the
fixed build its base, as `python -m chaos compare --head switches:<bug>` would run them.
Runs on the caller's thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from chaos.compare.judgement import BuildRun, Comparison, Pair, compare
from chaos.errors import FaultError
from chaos.generator.scenarios import Scenario
from chaos.generator.schedule import Schedule
from chaos.generator.shrink import ShrinkProgress, shrink
from chaos.hunt.plan import BugPlan, attempts
from chaos.run.runner import RunOutcome
from chaos.run.setup import RunSetupError

__all__ = [
    "Attempt",
    "BugResult",
    "Builds",
    "HuntSettings",
    "RunOne",
    "hunt",
    "run_attempt",
    "shrink_failure",
    "word_of",
]


class Builds(Protocol):
    """Which historical bug switches the cluster's brokers run with."""

    def use(self, switches: tuple[str, ...]) -> None:
        """Recreate the brokers with exactly `switches` on and wait until the cluster is
        settled (every broker registered, a stable controller)."""
        ...


#: One chaos run: the scenario, the seed, and a schedule to replay instead (shrinking).
RunOne = Callable[[Scenario, int, Schedule | None], RunOutcome]


@dataclass(frozen=True, slots=True)
class HuntSettings:
    """How much a hunt may spend: buggy runs per bug, replays to shrink, explicit seeds."""

    runs: int = 5
    max_shrink: int = 8
    seeds: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of a hunt: scenario and seed, its directory, whether it held (None: it
    could not be set up, `error` says why), and the invariants that were broken."""

    scenario: str
    seed: int
    run_dir: Path | None
    ok: bool | None
    fired: tuple[str, ...] = ()
    error: str = ""

    def build_run(self) -> BuildRun:
        """The attempt as one build's run of a comparison (`chaos.compare.judgement`)."""
        return BuildRun(self.run_dir, self.ok, self.fired, self.error)

    def to_json(self) -> dict[str, object]:
        """The attempt as a JSON object (the hunt's summary.json)."""
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "run_dir": None if self.run_dir is None else str(self.run_dir),
            "ok": self.ok,
            "fired": list(self.fired),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class BugResult:
    """What the hunt for one bug found: the buggy runs (the last one failed when it was
    caught), the shrunk schedule and how the shrink went, and the fixed build's runs."""

    plan: BugPlan
    buggy: tuple[Attempt, ...]
    fixed: tuple[Attempt, ...]
    shrunk: Schedule | None = None
    shrink_note: str = ""

    @property
    def bug(self) -> str:
        """The switch's name."""
        return self.plan.bug

    @property
    def catching(self) -> Attempt | None:
        """The buggy run whose verdict failed, if any."""
        return next((a for a in self.buggy if a.ok is False), None)

    @property
    def caught(self) -> bool:
        """A buggy run failed its verdict."""
        return self.catching is not None

    @property
    def expected(self) -> bool:
        """The catching run broke one of the invariants the plan expects."""
        found = self.catching
        return found is not None and bool(set(found.fired) & self.plan.catches)

    @property
    def fixed_clean(self) -> bool:
        """The fixed build ran every buggy run's scenario and seed, and each held."""
        return bool(self.fixed) and all(a.ok is True for a in self.fixed)

    @property
    def ok(self) -> bool:
        """Caught on the buggy build, clean on the fixed one."""
        return self.caught and self.fixed_clean

    def comparison(self) -> Comparison:
        """The buggy build judged as a head against the fixed build as its base, by the
        comparison of two builds (`chaos.compare.judgement`): each buggy run paired with
        the fixed run of the same scenario and seed; its regressions name what the switch
        broke that the fixed build held."""
        pairs = [
            Pair(buggy.scenario, buggy.seed, fixed.build_run(), buggy.build_run())
            for buggy, fixed in zip(self.buggy, self.fixed, strict=False)
        ]
        return compare("the fixed build", f"bug switch {self.bug}", pairs)


#: How many times a hunt runs one scenario and seed whose schedule was not fully performed.
EXERCISE_TRIES = 2


def run_attempt(
    run_one: RunOne, scenario: Scenario, seed: int, schedule: Schedule | None
) -> Attempt:
    """One run, repeated (up to `EXERCISE_TRIES` in all) while it held without performing
    its whole schedule; a failed verdict counts whatever the steps did, since the
    invariants judge only what happened."""
    attempt = Attempt(scenario.name, seed, None, None, error="not run")
    for _ in range(EXERCISE_TRIES):
        try:
            outcome = run_one(scenario, seed, schedule)
        except (RunSetupError, FaultError) as exc:
            return Attempt(scenario.name, seed, None, None, error=str(exc))
        fired = tuple(r.name for r in outcome.verdict.results if not r.ok)
        if not outcome.ok or outcome.exercised:
            return Attempt(scenario.name, seed, outcome.run_dir, outcome.ok, fired)
        missed = "; ".join(outcome.failed_steps)
        attempt = Attempt(
            scenario.name, seed, outcome.run_dir, None, error=f"not exercised: {missed}"
        )
    return attempt


def hunt(
    plan: BugPlan,
    builds: Builds,
    run_one: RunOne,
    settings: HuntSettings,
    say: Callable[[str], None] = print,
) -> BugResult:
    """Hunt `plan.bug` (see the module docstring); `say` is told what happens."""
    builds.use((plan.bug,))
    buggy: list[Attempt] = []
    failing: tuple[Scenario, Schedule] | None = None
    pairs = attempts(plan, settings.runs, settings.seeds)
    for number, (scenario, seed) in enumerate(pairs, 1):
        say(f"{plan.bug}: buggy build, run {number}/{len(pairs)}: {scenario.name} seed {seed}")
        attempt = run_attempt(run_one, scenario, seed, None)
        buggy.append(attempt)
        say(f"{plan.bug}: {word_of(attempt)}")
        if attempt.ok is False:
            failing = (scenario, scenario.schedule(seed))
            break
    shrunk, note = None, "not caught"
    if failing is not None:
        shrunk, note = shrink_failure(plan.bug, failing, builds, run_one, settings.max_shrink, say)
    builds.use(())
    fixed = []
    for number, attempt in enumerate(buggy, 1):
        scenario = next(s for s in plan.scenarios if s.name == attempt.scenario)
        what = f"{scenario.name} seed {attempt.seed}"
        say(f"{plan.bug}: fixed build, run {number}/{len(buggy)}: {what}")
        again = run_attempt(run_one, scenario, attempt.seed, None)
        fixed.append(again)
        say(f"{plan.bug}: fixed build {word_of(again)}")
    return BugResult(plan, tuple(buggy), tuple(fixed), shrunk, note)


def word_of(attempt: Attempt) -> str:
    if attempt.ok is None:
        return f"NOT RUN ({attempt.error})"
    if attempt.ok:
        return f"PASS ({attempt.run_dir})"
    return f"FAIL: {', '.join(attempt.fired)} ({attempt.run_dir})"


def shrink_failure(
    bug: str,
    failing: tuple[Scenario, Schedule],
    builds: Builds,
    run_one: RunOne,
    max_shrink: int,
    say: Callable[[str], None],
) -> tuple[Schedule | None, str]:
    """The failing schedule shrunk on the buggy build, and a note on how it went. A replay
    after a run that did not hold starts on brokers recreated with the switch, as the
    catching run did: a bug may leave the cluster broken (KAFKA-2300's controller fails
    every later state change), and a replay on it would be judged by the damage of the run
    before. A replay that cannot be set up counts as passing, and says why."""
    scenario, schedule = failing
    if max_shrink < 1 or len(schedule.steps) < 2:
        return schedule, "one step, nothing to shrink" if max_shrink else "not shrunk"
    damaged = True  # the catching run failed on these brokers
    last: Attempt | None = None

    def fails(candidate: Schedule) -> bool:
        nonlocal damaged, last
        seed = candidate.seed if candidate.seed is not None else 0
        try:
            if damaged:
                builds.use((bug,))
        except RunSetupError as exc:
            last = Attempt(scenario.name, seed, None, None, error=str(exc))
        else:
            last = run_attempt(run_one, scenario, seed, candidate)
        damaged = last.ok is not True
        return last.ok is False

    def progress(step: ShrinkProgress) -> None:
        if step.trial.failed:
            verdict = "fails"
        elif last is not None and last.ok is None:
            verdict = f"could not be judged ({last.error}), counted as passing"
        else:
            verdict = "passes"
        say(
            f"{bug}: shrink replay {step.tests_run}/{step.max_tests}: steps "
            f"{list(step.trial.kept)} {verdict}; smallest failing {list(step.smallest)}"
        )

    result = shrink(schedule, fails, max_tests=max_shrink, progress=progress)
    if not result.reproduced:
        return None, "the failure did not come back on replay"
    budget = ", budget spent" if result.exhausted else ""
    steps = f"{len(schedule.steps)} -> {len(result.minimal.steps)} steps"
    note = f"{steps} in {result.tests_run} replays{budget}"
    return result.minimal, note
