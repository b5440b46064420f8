"""random: a seeded mix of the faults that are safe together, one at a time.

Setup: topic `chaos-random`, 6 partitions, replication factor 3, min ISR 2, acks=all; two
producers at 50 values/s each and a consumer, for 90 s.

Steps:

1. `random_mix(seed, 90)` draws the schedule: a quiet period of 5 to 10 s, then a fault
   of a kind from `MIX_KINDS` (every kind but the whole-cluster `partition`) on a drawn
   role, held 5 to 15 s (a `bounce` is instant), then the next quiet period, and so on.
   Kinds rotate: each comes once per round, never twice in a row.
2. Faults never overlap, and none is active in the last 20 s.
3. Heal at 70 s; the load goes on until 90 s.

Without a seed the schedule is the one of seed 0. A failing seed replays exactly: the
schedule is a pure function of the seed, and `schedule.json` records it.

Verdict: the core invariants; convergence within 45 s of the heal.
"""

from __future__ import annotations

from chaos.generator.random_mix import MIX_KINDS, random_mix
from chaos.generator.scenarios.scenario import Scenario, Workload
from chaos.generator.schedule import Schedule

WORKLOAD = Workload("chaos-random", duration_s=90)


def plan(seed: int | None) -> Schedule:
    """`random_mix` over `MIX_KINDS` for the workload's duration (seed 0 without one)."""
    return random_mix(0 if seed is None else seed, WORKLOAD.duration_s, MIX_KINDS, heal_s=20)


SCENARIO = Scenario.from_runbook(__doc__, WORKLOAD, plan, convergence_s=45)
