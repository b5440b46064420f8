"""What a scenario is: a runbook (its module docstring: Setup, Steps, Verdict), the
workload it runs, the schedule of faults a seed gives, how long the cluster may take to
converge after the heal, and which invariants its verdict checks.

`INVARIANTS` (`invariant_names`) names every invariant a verdict can check, which a
scenario may list (the run's checks are named after them), and says what each means;
`CORE_INVARIANTS` are those every scenario checks. A name outside it is refused when the
scenario is defined. A scenario whose schedule varies in what it does (`random`) may add,
per schedule, the invariants whose premise that schedule meets (`also_for`): its verdict
checks `invariants_for(schedule)`.

Values are immutable; `schedule(seed)` is pure. Any thread.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from admin.errors import InvalidTopicError
from admin.topic_names import validate_topic_name
from chaos.client.workload_run import WorkloadConfig
from chaos.generator.scenarios.invariant_names import (
    CORE_INVARIANTS,
    INVARIANTS,
    unknown_invariants,
)
from chaos.generator.schedule import FaultSpec, Schedule, Step
from domain.profiles import FAST, setting
from rundir.invariants.names import ACKNOWLEDGED_WRITES

__all__ = [
    "CORE_INVARIANTS",
    "INVARIANTS",
    "SESSION_TIMEOUT_S",
    "Draws",
    "Scenario",
    "Workload",
    "one_fault",
]

#: The brokers' ZooKeeper session timeout in the compose cluster, whose brokers run the
#: `fast` profile (`domain.profiles`); scenario timings are chosen around it.
SESSION_TIMEOUT_S = int(setting("--zk-session-timeout-ms").value(FAST) or 0) / 1000

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Workload:
    """The topic a scenario creates and the load it runs on it for `duration_s` seconds."""

    topic: str
    partitions: int = 6
    replication_factor: int = 3
    min_insync_replicas: int = 2
    acks: int = -1
    duration_s: float = 75.0
    producers: int = 2
    rate_per_s: float = 50.0
    unclean_leader_election: bool = False

    def __post_init__(self) -> None:
        try:
            validate_topic_name(self.topic)
        except InvalidTopicError as exc:
            raise ValueError(str(exc)) from None
        if not 1 <= self.min_insync_replicas <= self.replication_factor:
            raise ValueError(
                f"min ISR must be 1..replication factor ({self.replication_factor}), "
                f"got {self.min_insync_replicas}"
            )
        self.config()  # the workload's own checks

    def config(self) -> WorkloadConfig:
        """The workload run's configuration (`chaos.client.workload_run`)."""
        return WorkloadConfig(
            topic=self.topic,
            partitions=self.partitions,
            duration_s=self.duration_s,
            producers=self.producers,
            rate_per_s=self.rate_per_s,
            acks=self.acks,
        )


def one_fault(
    kind: str,
    targets: Sequence[str],
    at_s: tuple[float, float],
    hold_s: tuple[float, float],
    heal_at_s: float,
    end_s: float,
) -> Callable[[int | None], Schedule]:
    """A plan of one fault of `kind`: on `targets[0]` (with a seed, on a drawn one of
    `targets`), starting at `at_s[0]` and lasting `hold_s[0]` seconds (with a seed, each
    moved by up to its second number), healed at `heal_at_s`, ending at `end_s`."""

    def plan(seed: int | None) -> Schedule:
        draws = Draws(seed)
        target = draws.pick(targets)
        start, hold = draws.around(*at_s), draws.around(*hold_s)
        step = Step(start, hold, FaultSpec(kind, target))
        return Schedule(seed, (step,), heal_at_s, end_s)

    return plan


class Draws:
    """The seeded choices of one schedule: with a seed, values drawn from
    `random.Random(seed)` in the order asked; without one, the nominal values. Built inside
    a scenario's plan, so the plan stays a pure function of the seed. One thread."""

    def __init__(self, seed: int | None) -> None:
        self._rng = None if seed is None else random.Random(seed)

    def around(self, value: float, spread: float) -> float:
        """`value`, or with a seed a value within `spread` of it; rounded to 0.1 s."""
        if self._rng is None:
            return round(value, 1)
        return round(max(0.0, value + self._rng.uniform(-spread, spread)), 1)

    def pick(self, options: Sequence[_T]) -> _T:
        """The first option, or with a seed a drawn one."""
        return options[0] if self._rng is None else self._rng.choice(options)

    def order(self, items: Sequence[_T]) -> list[_T]:
        """`items` as given, or with a seed shuffled."""
        shuffled = list(items)
        if self._rng is not None:
            self._rng.shuffle(shuffled)
        return shuffled


@dataclass(frozen=True, slots=True)
class Scenario:
    """A runbook scenario (see the module docstring). `plan(seed)` builds its schedule;
    call `schedule(seed)`, which also checks that the schedule spans the workload."""

    name: str
    summary: str
    workload: Workload
    plan: Callable[[int | None], Schedule]
    convergence_s: float
    invariants: frozenset[str]
    runbook: str
    also_for: Callable[[Schedule], frozenset[str]] | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z-]*", self.name):
            raise ValueError(f"a scenario name is lowercase words with '-', got {self.name!r}")
        unknown = unknown_invariants(self.invariants)
        if unknown:
            raise ValueError(f"{self.name}: {unknown}")
        if self.workload.unclean_leader_election and ACKNOWLEDGED_WRITES in self.invariants:
            raise ValueError(f"{self.name}: data loss cannot be judged with unclean election on")
        if self.convergence_s <= 0:
            raise ValueError(f"{self.name}: the convergence bound must be positive")
        if not all(part in self.runbook for part in ("Setup", "Steps", "Verdict")):
            raise ValueError(f"{self.name}: the runbook needs Setup, Steps and Verdict")

    @classmethod
    def from_runbook(
        cls,
        runbook: str | None,
        workload: Workload,
        plan: Callable[[int | None], Schedule],
        convergence_s: float,
        also: Iterable[str] = (),
        also_for: Callable[[Schedule], frozenset[str]] | None = None,
    ) -> Scenario:
        """A scenario named and summed up by its runbook's first line, `<name>: <summary>.`,
        that checks the core invariants and those in `also`, and for a schedule those
        `also_for` gives; `acknowledged_writes` is left out when the workload's topic
        allows unclean leader election."""
        text = runbook or ""
        name, _, summary = text.partition("\n")[0].partition(": ")
        if not summary:
            raise ValueError(f"a runbook starts with '<name>: <summary>.', got {text[:60]!r}")
        invariants = CORE_INVARIANTS | frozenset(also)
        if workload.unclean_leader_election:
            invariants -= {ACKNOWLEDGED_WRITES}
        summary = summary.rstrip(".")
        return cls(name, summary, workload, plan, convergence_s, invariants, text, also_for)

    def invariants_for(self, schedule: Schedule) -> frozenset[str]:
        """The invariants a run of `schedule` is judged on: the scenario's, and those its
        `also_for` gives for the schedule. `ValueError` for a name it gives that is not an
        invariant (a bug in the scenario)."""
        if self.also_for is None:
            return self.invariants
        more = self.also_for(schedule)
        unknown = unknown_invariants(more)
        if unknown:
            raise ValueError(f"{self.name}: {unknown}")
        if self.workload.unclean_leader_election:
            more -= {ACKNOWLEDGED_WRITES}
        return self.invariants | more

    def schedule(self, seed: int | None = None) -> Schedule:
        """The schedule for `seed` (the nominal one for None). Raises `ValueError` if the
        plan does not end with the workload (a bug in the scenario)."""
        schedule = self.plan(seed)
        if schedule.end_s != self.workload.duration_s:
            raise ValueError(
                f"{self.name}: the schedule ends at {schedule.end_s} s, the workload at "
                f"{self.workload.duration_s} s"
            )
        return schedule

    def for_schedule(self, schedule: Schedule) -> Scenario:
        """The scenario as a run of `schedule` performs it: its workload at the schedule's
        replication when the schedule sets one (`chaos.generator.replication`), else
        itself."""
        r = schedule.replication
        if r is None or (r.factor, r.min_insync) == (
            self.workload.replication_factor,
            self.workload.min_insync_replicas,
        ):
            return self
        workload = dataclasses.replace(
            self.workload, replication_factor=r.factor, min_insync_replicas=r.min_insync
        )
        return dataclasses.replace(self, workload=workload)
