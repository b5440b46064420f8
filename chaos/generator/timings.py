"""The generic generator's time draws (`chaos.generator.generic`): heavy-tailed
lognormal values for how long faults last, the gaps between them and how long a trigger
is looked for. Pure values; `HeavyTail.draw` uses only the generator it is given.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

__all__ = [
    "BACKDROP_HOLD",
    "DENSE_GAP",
    "HOLD",
    "ISR_WAIT",
    "OP_GAP",
    "OUTAGE_HOLD",
    "REGISTER_WAIT",
    "SPARSE_GAP",
    "TRIGGER_WAIT",
    "HeavyTail",
]


@dataclass(frozen=True, slots=True)
class HeavyTail:
    """A lognormal draw with median `median` and shape `sigma`, clipped to
    [`low`, `high`] and rounded to 0.1 s: mostly near the median, now and then far
    beyond it."""

    low: float
    median: float
    high: float
    sigma: float = 0.8

    def draw(self, rng: random.Random) -> float:
        """One value, from `rng`."""
        value = rng.lognormvariate(math.log(self.median), self.sigma)
        return round(min(self.high, max(self.low, value)), 1)


#: How long a lasting fault lasts.
HOLD = HeavyTail(1.0, 8.0, 40.0)
#: The gap from one fault's start to the next one's in a dense schedule.
DENSE_GAP = HeavyTail(0.5, 4.0, 30.0, sigma=1.0)
#: The gap from one fault's window's end to the next fault in a sparse schedule: long
#: enough for every ISR to be full again.
SPARSE_GAP = HeavyTail(15.0, 18.0, 40.0, sigma=0.4)
#: How long each fault of a double outage lasts: beyond the session timeout (6 s).
OUTAGE_HOLD = HeavyTail(8.0, 12.0, 25.0, sigma=0.4)
#: How long a slowed broker under the other faults stays slow.
BACKDROP_HOLD = HeavyTail(10.0, 20.0, 60.0, sigma=0.5)
#: How long a trigger is looked for.
TRIGGER_WAIT = HeavyTail(8.0, 12.0, 30.0, sigma=0.5)
#: How long after a broker's restart its new registration is looked for: a new process
#: registers within seconds.
REGISTER_WAIT = HeavyTail(4.0, 6.0, 15.0, sigma=0.4)
#: How long an ISR change is looked for: a follower leaves the ISR only after lagging
#: `replica.lag.time.max.ms` (10 s in the fast profile).
ISR_WAIT = HeavyTail(15.0, 18.0, 30.0, sigma=0.3)
#: The gap between two operations on the side topic.
OP_GAP = HeavyTail(3.0, 8.0, 25.0, sigma=0.6)
