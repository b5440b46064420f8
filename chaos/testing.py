"""Test doubles for the workload: the in-process cluster of `client.testing` (`FakeBrokers`,
`ProduceFault`, re-exported here), a history writer that keeps its lines (`RecordingHistory`),
a clock that only moves when slept on (`FakeClock`), and a short scenario that an
unclean election fails at its first seed (`short_last_replica`, for the tiers that run
real clusters); hand-written histories are `rundir.testing.HistoryBuilder`'s. For tests
only; any thread unless said otherwise.
"""

from __future__ import annotations

import threading

from chaos.generator.scenarios import Scenario
from chaos.generator.scenarios.scenario import Workload
from chaos.generator.schedule import FaultSpec, Schedule, Step
from client.testing import FakeBrokers, ProduceFault
from rundir.history import HistoryOp
from rundir.history_writer import HistoryWriter


class RecordingHistory(HistoryWriter):
    """A `HistoryWriter(None, process)` that keeps every line it is given. Any thread."""

    def __init__(self, process: str, clock: FakeClock | None = None) -> None:
        if clock is None:
            super().__init__(None, process)
        else:
            super().__init__(None, process, clock_ns=clock.monotonic_ns, wall_ms=clock.wall_ms)
        self._kept_lock = threading.Lock()
        self._kept: list[HistoryOp] = []

    def write(self, op: HistoryOp) -> None:
        """Count the line as `HistoryWriter` does, and keep it."""
        super().write(op)
        with self._kept_lock:
            self._kept.append(op)

    @property
    def ops(self) -> list[HistoryOp]:
        """Every line so far, in order."""
        with self._kept_lock:
            return list(self._kept)


class FakeClock:
    """Monotonic time that advances only through `sleep` or `advance`. Any thread."""

    def __init__(self, start_s: float = 1000.0) -> None:
        self._lock = threading.Lock()
        self._now = start_s

    def monotonic(self) -> float:
        """Seconds."""
        with self._lock:
            return self._now

    def monotonic_ns(self) -> int:
        """Nanoseconds; strictly increasing between calls so history lines stay ordered."""
        with self._lock:
            self._now += 1e-9
            return int(self._now * 1e9)

    def wall_ms(self) -> int:
        """Wall-clock ms derived from the fake time."""
        return int(self.monotonic() * 1000)

    def sleep(self, seconds: float) -> None:
        """Advance instead of sleeping."""
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        with self._lock:
            self._now += seconds


__all__ = [
    "FakeBrokers",
    "FakeClock",
    "ProduceFault",
    "RecordingHistory",
]


_SHORT_RUNBOOK = """{name}: kill both replicas of a partition in turn, the stale one back first

Setup: topic `{topic}`, replication factor 2, min ISR 1, for 42 s.

Steps: at 5 s kill the first broker that is not the controller for 20 s; at 14 s the
second, for 20 s; heal at 36 s.

Verdict: the core invariants; convergence within 30 s of the heal.
"""


def short_last_replica(name: str, topic: str) -> Scenario:
    """A 42 s `last-replica-standing`: two replicas per partition, min ISR 1, acks=all;
    the two brokers that are not the controller killed 9 s apart (past a 6 s session, so
    the first has left the ISRs and the second has acknowledged writes alone), each for
    20 s, so that the stale one comes back first. A build whose elections may go unclean
    loses acknowledged writes at its first seed; a correct one does not."""
    workload = Workload(topic, replication_factor=2, min_insync_replicas=1, duration_s=42)

    def plan(seed: int | None) -> Schedule:
        steps = (
            Step(5, 20, FaultSpec("kill", "non-controller:1")),
            Step(14, 20, FaultSpec("kill", "non-controller:2")),
        )
        return Schedule(seed, steps, heal_at_s=36, end_s=workload.duration_s)

    return Scenario.from_runbook(_SHORT_RUNBOOK.format(name=name, topic=topic), workload, plan, 30)
