"""A schedule's replication of its workload topic: `Replication(factor, min_insync)`.

A scenario's `Workload` fixes the replication its topic is created with. A schedule that
carries a `Replication` (`chaos.generator.schedule.Schedule.replication`) overrides it,
so that one scenario (`random`) runs its workload at the replication its seed drew and a
replay of its `schedule.json` does the same. `draw_replication(seed)` is the generic
generator's draw: replication factor 3 with min ISR 2 (the workloads' default), or,
one seed in `PAIRS_SHARE`, replication factor 2 with min ISR 1, the pairs six planned
scenarios run on (a partition loses every replica to two brokers down at once, and its
leader acknowledges writes alone once its follower lags out).

In `schedule.json`: `"replication": {"factor": 2, "min_insync": 1}`, absent when the
scenario's own applies. Errors are `chaos.errors.ScheduleError`s. Values are immutable;
pure; any thread.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from chaos.errors import ScheduleError, ScheduleFormatError

__all__ = ["PAIRS", "PAIRS_SHARE", "TRIPLES", "Replication", "draw_replication"]

#: The most replicas a partition can have: the compose cluster's brokers.
MAX_FACTOR = 3


@dataclass(frozen=True, slots=True)
class Replication:
    """A topic's replication factor and its `min.insync.replicas`."""

    factor: int
    min_insync: int

    def __post_init__(self) -> None:
        for name in ("factor", "min_insync"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ScheduleError(f"replication {name} must be an integer, got {value!r}")
        if not 1 <= self.factor <= MAX_FACTOR:
            raise ScheduleError(f"replication factor must be 1..{MAX_FACTOR}, got {self.factor}")
        if not 1 <= self.min_insync <= self.factor:
            raise ScheduleError(
                f"min ISR must be 1..replication factor ({self.factor}), got {self.min_insync}"
            )

    def describe(self) -> str:
        """`replication factor 2, min ISR 1`."""
        return f"replication factor {self.factor}, min ISR {self.min_insync}"

    def to_json(self) -> dict[str, Any]:
        """The `schedule.json` object."""
        return {"factor": self.factor, "min_insync": self.min_insync}

    @classmethod
    def from_json(cls, data: object) -> Replication:
        """The replication a `to_json` object describes; `ScheduleFormatError` when it is
        not one, other `ScheduleError`s for values out of range."""
        if not isinstance(data, dict) or set(data) != {"factor", "min_insync"}:
            raise ScheduleFormatError(
                f"replication must be a JSON object of factor and min_insync, got {data!r}"
            )
        return cls(data["factor"], data["min_insync"])


#: The workloads' default replication.
TRIPLES = Replication(3, 2)
#: Pairs: every partition on two of the three brokers.
PAIRS = Replication(2, 1)
#: The chance that a generic schedule runs its workload on pairs.
PAIRS_SHARE = 0.4
#: Mixed into the draw's seed.
_SALT = "replication"


def draw_replication(seed: int) -> Replication:
    """The generic generator's replication for `seed` (module docstring), from a
    generator of its own: drawing it moves no other draw of the seed."""
    return PAIRS if random.Random(f"{_SALT}:{seed}").random() < PAIRS_SHARE else TRIPLES
