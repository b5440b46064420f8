"""The blind hunt's choice of the next schedule (`python -m chaos hunt`, docs/bugs.md,
"Blind hunt"): a fresh seed's schedule from the generic generator, or a mutation of a
schedule run before, preferring those that reached behaviours few runs reached.

    planner = Planner("7:kafka-1188", draw=lambda seed: draw_schedule(seed, 45.0))
    choice = planner.next()                    # fresh seed, or run k mutated
    ... run choice.schedule, read its coverage (`rundir.coverage`) ...
    planner.record(choice.schedule, behaviours)

The corpus holds every run's schedule with the behaviours it reached. A schedule's
weight is the sum, over its behaviours, of one over the number of runs that reached
each: a schedule that alone reached something is picked most. A mutation applies one or
two of: drop a step; add a step drawn from a fresh schedule at a time where it fits;
shift a step by up to `SHIFT_S` either way; retarget a step to another role of the same
kind of node; run the workload at the generator's other replication (`replicate`: pairs
for three replicas or back, `chaos.generator.replication`), so that a schedule reaching
rare behaviours on one is tried on the other; graft one of the generic mix's groups of
faults (`GRAFTS`: a correlated fault, a controller cut in turn, a lost registration
reply, a reset mid-failover, a race chasing one of the schedule's admin operations or a
reset of the controller's connection, with its forced controller election) drawn
whatever its share, the parent's steps it could not be beside dropped for it, and so are
its forced controller elections between a cut in turn's two cuts or inside a reset
mid-failover (`chaos.generator.correlated.outside_cut`; a race whose own would be is not
grafted): single steps never rebuild a group's timing, and a parent drawn without a race
never gets one otherwise. A `RARE_GRAFT_SHARE` of mutations first graft the group the
hunt's runs held least (`chaos.generator.groups`, ties drawn) that the parent lacks, so
that ten runs hold most of the groups (eight of the ten there were on 7 December on
average, against five when grafts were drawn alike: `test_blind_corpus.py`). A step
added, shifted or retargeted goes only where the generic mix's overlap rules
(`chaos.generator.overlap`, each fault's window counted to its latest end and the
recovery after it) let it be beside the faults it then overlaps, as the generic mix
would have let it: a shift can move a fault into or out of another's company, which is
what timing needs. Mutations keep every fault before the heal and the parent's seed
(roles resolve from the seed and the step) and actions (a race adds its
`move-controller`).

Every choice comes from one `random.Random(hunt_seed)` and the coverage recorded so far:
the same hunt seed and the same coverage give the same schedules. Pure apart from that
state; the caller's thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chaos.errors import ScheduleError
from chaos.generator.correlated import CORRELATED, GroupDraw, cut_in_turn_from, outside_cut
from chaos.generator.generic import generic_schedule
from chaos.generator.groups import groups_in
from chaos.generator.lost_registration import lost_registration_from
from chaos.generator.overlap import clashes
from chaos.generator.races import race_from
from chaos.generator.replication import PAIRS, TRIPLES
from chaos.generator.reset_mid_failover import reset_mid_failover_from
from chaos.generator.schedule import Action, FaultSpec, Schedule, Step

__all__ = [
    "FRESH_SHARE",
    "GRAFTS",
    "HEAL_S",
    "MUTATIONS",
    "RARE_GRAFT_SHARE",
    "Choice",
    "Corpus",
    "Entry",
    "Planner",
    "draw_schedule",
    "mutate",
]

#: How much of a blind run's schedule is its heal phase (seconds).
HEAL_S = 15.0
#: The share of runs (after the first) that start from a fresh seed's schedule.
FRESH_SHARE = 0.3
#: The largest shift of a step, either way (seconds).
SHIFT_S = 5.0
#: The least time between two faults that a mutation keeps (seconds).
GAP_S = 1.0
#: How long before the heal a step added or shifted ends, at the latest (seconds).
_BEFORE_HEAL_S = 0.1
#: The roles a step may be retargeted between: one node of the same kind each.
ROLE_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("controller", "non-controller", "busiest-leader", "random-broker"),
    ("zk-leader", "zk-follower"),
)
MUTATIONS = ("drop", "add", "shift", "retarget", "replicate", "graft")
#: The groups of faults a graft draws one of: the generic mix's correlated faults
#: (`chaos.generator.correlated`), its controller cut in turn, its lost registration
#: reply (`chaos.generator.lost_registration`), its reset mid-failover
#: (`chaos.generator.reset_mid_failover`) and its race (`chaos.generator.races`), each
#: by the name of its draw.
_GROUPS: dict[str, GroupDraw] = {draw.__name__.replace("_", "-"): draw for draw in CORRELATED}
GRAFTS = (*_GROUPS, "cut-in-turn", "lost-registration", "reset-mid-failover", "race")
#: The share of mutations that first graft the group the hunt's runs held least
#: (`Planner`): single-step mutations of a parent rarely build a group it lacks.
RARE_GRAFT_SHARE = 0.8
#: How many mutations are tried for one that was not run already, before a fresh seed.
MUTATION_TRIES = 4
_SEED_RANGE = 2**31


def draw_schedule(seed: int, duration_s: float) -> Schedule:
    """The generic generator's dense schedule for `seed` over `duration_s` seconds, the
    last `HEAL_S` of them the heal phase (`chaos.generator.generic.generic_schedule`:
    every fault family, overlapping where safe, triggered faults and admin operations):
    the one place the blind hunt draws fresh schedules from. Always dense: a sparse
    schedule keeps 15 s or more between its faults, so in a short run it holds one fault
    (186 of seeds 1 to 500 at 45 s did), a run spent on a single chance."""
    return generic_schedule(seed, duration_s, heal_s=HEAL_S, sparse=False)


@dataclass(frozen=True, slots=True)
class Entry:
    """One run of the hunt: its number (from 1), schedule and the behaviours it reached."""

    number: int
    schedule: Schedule
    behaviours: frozenset[str]


@dataclass(frozen=True, slots=True)
class Corpus:
    """Every run so far, in order, and how many runs reached each behaviour."""

    entries: tuple[Entry, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()

    @property
    def reached(self) -> frozenset[str]:
        """Every behaviour some run reached."""
        return frozenset(name for name, _ in self.counts)

    def add(self, schedule: Schedule, behaviours: frozenset[str]) -> Corpus:
        """The corpus with one more run."""
        counts = Counter(dict(self.counts))
        counts.update(behaviours)
        entry = Entry(len(self.entries) + 1, schedule, behaviours)
        return Corpus((*self.entries, entry), tuple(sorted(counts.items())))

    def weight(self, entry: Entry) -> float:
        """How rare `entry`'s behaviours are: the sum of one over the runs reaching each."""
        counts = dict(self.counts)
        return sum(1.0 / counts[b] for b in sorted(entry.behaviours))


@dataclass(frozen=True, slots=True)
class Choice:
    """The next run's schedule and where it came from (`fresh seed 17`, `run 3: drop step
    2, shift step 0 by +1.5s`)."""

    schedule: Schedule
    origin: str


def _with_steps(schedule: Schedule, steps: list[Step]) -> Schedule:
    ordered = tuple(sorted(steps, key=lambda s: s.at_s))
    return dataclasses.replace(schedule, steps=ordered)


def _tenths(low: float, high: float) -> tuple[int, int]:
    """The times in [low, high] on the 0.1 s grid, as tenths (empty when low > high)."""
    return math.ceil(round(low * 10, 6)), math.floor(round(high * 10, 6))


def _places(
    step: Step, others: Sequence[Step], heal_at: float, low: float, high: float
) -> list[float]:
    """The starts in [`low`, `high`] (on the 0.1 s grid, from `GAP_S` on) where `step`
    keeps the overlap rules beside `others` and ends a tenth of a second or more before
    `heal_at` (as the generic mix's steps do)."""
    latest = heal_at - _BEFORE_HEAL_S - (step.ends_s - step.at_s)
    first, last = _tenths(max(low, GAP_S), min(high, latest))
    beside = list(others)
    return [
        tenth / 10
        for tenth in range(first, last + 1)
        if next(clashes(dataclasses.replace(step, at_s=tenth / 10), beside), None) is None
    ]


#: A mutation's schedule (None: it does not apply) and what it did.
_Mutated = tuple[Schedule | None, str]
_Draw = Callable[[int], Schedule]


def _drop(rng: random.Random, schedule: Schedule, _: _Draw) -> _Mutated:
    if len(schedule.steps) < 2:
        return None, ""
    i = rng.randrange(len(schedule.steps))
    kept = [s for k, s in enumerate(schedule.steps) if k != i]
    return _with_steps(schedule, kept), f"drop step {i}"


def _add(rng: random.Random, schedule: Schedule, draw: _Draw) -> _Mutated:
    donor = draw(rng.randrange(_SEED_RANGE))
    step = rng.choice(donor.steps)
    places = _places(step, schedule.steps, schedule.heal_at_s, 0.0, schedule.heal_at_s)
    if not places:
        return None, ""
    placed = dataclasses.replace(step, at_s=rng.choice(places))
    what = f"add {placed.fault.describe()} at {placed.at_s:g}s"
    return _with_steps(schedule, [*schedule.steps, placed]), what


def _shift(rng: random.Random, schedule: Schedule, _: _Draw) -> _Mutated:
    if not schedule.steps:
        return None, ""
    i = rng.randrange(len(schedule.steps))
    step = schedule.steps[i]
    others = schedule.steps[:i] + schedule.steps[i + 1 :]
    # any other tenth of a second within the shift where the rules let it be: a step
    # that cannot move one way still moves the other
    around = _places(step, others, schedule.heal_at_s, step.at_s - SHIFT_S, step.at_s + SHIFT_S)
    places = [t for t in around if round(t * 10) != round(step.at_s * 10)]
    if not places:
        return None, ""
    at = rng.choice(places)
    steps = [dataclasses.replace(s, at_s=at) if k == i else s for k, s in enumerate(schedule.steps)]
    return _with_steps(schedule, steps), f"shift step {i} by {at - step.at_s:+.1f}s"


def _retarget(rng: random.Random, schedule: Schedule, _: _Draw) -> _Mutated:
    options = []
    for i, step in enumerate(schedule.steps):
        family = next((f for f in ROLE_FAMILIES if step.fault.target in f), ())
        for role in family:
            if role == step.fault.target:
                continue
            try:
                fault = FaultSpec(step.fault.kind, role, step.fault.params)
            except ScheduleError:
                continue
            others = schedule.steps[:i] + schedule.steps[i + 1 :]
            # a fault the overlap rules let beside another only under its role
            if next(clashes(dataclasses.replace(step, fault=fault), others), None) is None:
                options.append((i, fault))
    if not options:
        return None, ""
    i, fault = rng.choice(options)
    steps = list(schedule.steps)
    steps[i] = dataclasses.replace(steps[i], fault=fault)
    return _with_steps(schedule, steps), f"retarget step {i} to {fault.target}"


def _replicate(rng: random.Random, schedule: Schedule, _: _Draw) -> _Mutated:
    if schedule.replication is None:  # the scenario's own: not the generator's to change
        return None, ""
    other = TRIPLES if schedule.replication == PAIRS else PAIRS
    what = f"replicate at factor {other.factor}, min ISR {other.min_insync}"
    return dataclasses.replace(schedule, replication=other), what


def _graft(rng: random.Random, schedule: Schedule, _: _Draw, name: str | None = None) -> _Mutated:
    name = rng.choice(GRAFTS) if name is None else name
    actions: tuple[Action, ...] = ()
    if name == "race":
        race = race_from(rng, schedule.actions, schedule.heal_at_s)
        steps, actions = (race.steps, race.actions) if race is not None else ((), ())
    elif name == "cut-in-turn":
        steps = cut_in_turn_from(rng, schedule.heal_at_s)
    elif name == "lost-registration":
        steps = lost_registration_from(rng, schedule.heal_at_s)
    elif name == "reset-mid-failover":
        steps = reset_mid_failover_from(rng, schedule.heal_at_s)
    else:
        steps = _GROUPS[name](rng, schedule.heal_at_s, always=True)
    if not steps:
        return None, ""
    # the parent's steps the group could not be beside make way for it, in time order
    placed = list(steps)
    for step in schedule.steps:
        if next(clashes(step, placed), None) is None:
            placed.append(step)
    kept = placed[len(steps) :]
    merged = sorted([*schedule.actions, *actions], key=lambda a: a.at_s)
    # no forced election between a cut in turn's two cuts (the race's own makes it none)
    kept_actions = outside_cut(placed, merged)
    if not set(actions) <= set(kept_actions):
        return None, ""
    grafted = dataclasses.replace(_with_steps(schedule, placed), actions=tuple(kept_actions))
    dropped = len(schedule.steps) - len(kept)
    what = f"graft {name} at {min(s.at_s for s in steps):g}s" + (
        f" (dropped {dropped} step{'s' if dropped != 1 else ''})" if dropped else ""
    )
    return grafted, what


_OPERATIONS = {
    "drop": _drop,
    "add": _add,
    "shift": _shift,
    "retarget": _retarget,
    "replicate": _replicate,
    "graft": _graft,
}


def mutate(
    rng: random.Random,
    schedule: Schedule,
    draw: Callable[[int], Schedule],
    graft: str | None = None,
) -> tuple[Schedule, tuple[str, ...]] | None:
    """`schedule` with one or two mutations (see the module docstring; the second never
    gives the schedule back) and what they were; None when no mutation applies (no step
    to drop, shift or retarget, and no room to add one). With `graft` (one of `GRAFTS`),
    the first is that group grafted when it finds room."""
    done: list[str] = []
    original = schedule
    if graft is not None:
        with contextlib.suppress(ScheduleError):
            changed, what = _graft(rng, schedule, draw, graft)
            if changed is not None and changed != original:
                schedule = changed
                done.append(what)
    for _ in range(rng.randint(1, 2) - len(done)):
        order = list(MUTATIONS)
        rng.shuffle(order)
        for name in order:
            try:
                changed, what = _OPERATIONS[name](rng, schedule, draw)
            except ScheduleError:  # a step that does not fit where it went: try another
                continue
            if changed is not None and changed != original:  # not undoing the first
                schedule = changed
                done.append(what)
                break
    return (schedule, tuple(done)) if done else None


class Planner:
    """The next schedule of one switch's blind hunt, from `random.Random(hunt_seed)` and
    the coverage recorded so far. Fresh schedules use `seeds` in order, then seeds drawn
    from the generator. Caller's thread."""

    def __init__(
        self,
        hunt_seed: int | str,
        draw: Callable[[int], Schedule],
        seeds: Sequence[int] = (),
        fresh_share: float = FRESH_SHARE,
    ) -> None:
        self._rng = random.Random(hunt_seed)
        self._draw = draw
        self._seeds = list(seeds)
        self._fresh_share = fresh_share
        self.corpus = Corpus()

    def _fresh(self) -> Choice:
        seed = self._seeds.pop(0) if self._seeds else self._rng.randrange(_SEED_RANGE)
        return Choice(self._draw(seed), f"fresh seed {seed}")

    def next(self) -> Choice:
        """The next run's schedule: fresh for the first run, for a `fresh_share` of the
        others and whenever no run has reached anything; else a mutation of a run picked
        by weight, not one run already (else fresh after `MUTATION_TRIES`)."""
        entries = [e for e in self.corpus.entries if e.behaviours and e.schedule.steps]
        if not entries or self._rng.random() < self._fresh_share:
            return self._fresh()
        weights = [self.corpus.weight(e) for e in entries]
        ran = {e.schedule for e in self.corpus.entries}
        for _ in range(MUTATION_TRIES):
            parent = self._rng.choices(entries, weights)[0]
            graft = self._rarest(parent) if self._rng.random() < RARE_GRAFT_SHARE else None
            mutated = mutate(self._rng, parent.schedule, self._draw, graft)
            if mutated is not None and mutated[0] not in ran:
                schedule, done = mutated
                return Choice(schedule, f"run {parent.number}: {', '.join(done)}")
        return self._fresh()

    def _rarest(self, parent: Entry) -> str | None:
        """The group (`GRAFTS`) that `parent` lacks and the fewest runs so far held
        (`chaos.generator.groups`), ties drawn; None when it holds every one."""
        held = Counter(g for e in self.corpus.entries for g in groups_in(e.schedule))
        lacking = [g for g in GRAFTS if g not in groups_in(parent.schedule)]
        if not lacking:
            return None
        fewest = min(held[g] for g in lacking)
        return self._rng.choice([g for g in lacking if held[g] == fewest])

    def record(self, schedule: Schedule, behaviours: frozenset[str]) -> int:
        """Add a run's schedule and coverage; how many behaviours no run had reached."""
        new = len(behaviours - self.corpus.reached)
        self.corpus = self.corpus.add(schedule, behaviours)
        return new
