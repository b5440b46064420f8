"""Every node's events on the host's time line, whatever the nodes' wall clocks say.

A node's `ts` is its own wall clock, which a clock fault moves by minutes
(`chaos.faults.clock`); comparing the `ts` of two nodes, or a node's `ts` with the host's
`started_ms`, would judge a skewed run differently from the same run unskewed. Each event
also carries `mono_ms`, the node's CLOCK_MONOTONIC, which no fault moves and which every
container of a docker host reads from the host's kernel. The runner records in
`config.json` one `clock` anchor, `{"wall_ms", "mono_ms"}`, both read on the host at the
same moment; an event's host time is then `wall_ms + (its mono_ms - mono_ms)`.

`on_host_time` gives the records of a run directory that time as `ts`, and keeps the
node's own under `node_ts`; a record without `mono_ms` (an older writer), and every
record of a run without an anchor, keeps its `ts`. Within one node, events stay in log
order (their `seq`). This rests on one kernel for every node: a cluster spread over
machines would need the causal order alone. Pure; any thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

__all__ = ["CLOCK_KEY", "ClockAnchor", "on_host_time"]

#: The key of the anchor in `config.json`.
CLOCK_KEY = "clock"


@dataclass(frozen=True, slots=True)
class ClockAnchor:
    """The host's wall clock and monotonic clock, in ms, read at one moment."""

    wall_ms: int
    mono_ms: int

    @classmethod
    def now(cls) -> ClockAnchor:
        """Both clocks of this host, now."""
        return cls(time.time_ns() // 1_000_000, time.monotonic_ns() // 1_000_000)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ClockAnchor | None:
        """The anchor a run's `config.json` records, or None when it has none that reads."""
        found = config.get(CLOCK_KEY)
        if not isinstance(found, Mapping):
            return None
        wall, mono = found.get("wall_ms"), found.get("mono_ms")
        if not (_is_int(wall) and _is_int(mono)):
            return None
        return cls(wall, mono)

    def to_json(self) -> dict[str, int]:
        """`{"wall_ms": ..., "mono_ms": ...}`."""
        return {"wall_ms": self.wall_ms, "mono_ms": self.mono_ms}

    def host_ms(self, mono_ms: int) -> int:
        """The host's wall time at which its monotonic clock read `mono_ms`."""
        return self.wall_ms + (mono_ms - self.mono_ms)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def on_host_time(
    records: list[tuple[int, dict[str, Any]]], anchor: ClockAnchor | None
) -> list[tuple[int, dict[str, Any]]]:
    """`records` (numbered event lines of one node) with `ts` the host's time of each and
    the node's own `ts` under `node_ts` (see the module docstring)."""
    if anchor is None:
        return records
    placed = []
    for number, record in records:
        mono, ts = record.get("mono_ms"), record.get("ts")
        if _is_int(mono) and "node_ts" not in record:
            record = {**record, "ts": anchor.host_ms(mono), "node_ts": ts}
        placed.append((number, record))
    return placed
