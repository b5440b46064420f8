"""The results of one failover benchmark: a short table for people, `bench.json` for tools.

Ratios compare the controller's own `duration_ms` with the read floor (the best of the
pipelined reloads); when the write floor was measured, the footnote also compares with
read + write floor, which is closer to what a failover that moves every leader must do.
Pure formatting plus one file write; main thread.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.floor import ReadSample, WriteSample
from bench.populate import PopulateResult
from bench.timeline import FailoverTimeline

FIRST_ELECTION = "first_election"
AFTER_KILL = "after_kill"
_LABEL_WIDTH = 52


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One measured failover."""

    number: int
    kind: str
    controller_id: int
    controller_epoch: int
    duration_s: float
    timeline: FailoverTimeline
    killed_broker: int | None = None
    kill_to_elected_s: float | None = None
    kill_to_done_s: float | None = None
    release_to_done_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "round": self.number,
            "kind": self.kind,
            "controller_id": self.controller_id,
            "controller_epoch": self.controller_epoch,
            "failover_s": self.duration_s,
            "killed_broker": self.killed_broker,
            "kill_to_elected_s": self.kill_to_elected_s,
            "kill_to_done_s": self.kill_to_done_s,
            "controller_released_to_done_s": self.release_to_done_s,
            **self.timeline.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class BenchResult:
    """Everything one run measured."""

    settings: dict[str, Any]
    environment: dict[str, Any]
    populate: PopulateResult
    reads: list[ReadSample]
    writes: list[WriteSample]
    rounds: list[RoundResult]

    @property
    def read_floor(self) -> ReadSample:
        """The fastest reload."""
        return min(self.reads, key=lambda s: s.seconds)

    @property
    def write_floor(self) -> WriteSample | None:
        """The fastest fenced rewrite, if measured."""
        return min(self.writes, key=lambda s: s.seconds) if self.writes else None

    def rounds_of(self, kind: str) -> list[RoundResult]:
        """The rounds of one kind, in order."""
        return [r for r in self.rounds if r.kind == kind]


def _ratio(value: float, floor: float) -> str:
    return f"{value / floor:.1f}x" if floor > 0 else "-"


def _spread(values: list[float]) -> str:
    """`; median of n, min-max s` when there are several values, else nothing."""
    if len(values) < 2:
        return ""
    return f"; median of {len(values)}, {min(values):.2f}-{max(values):.2f} s"


def render_table(result: BenchResult) -> str:
    """The human summary, e.g. `failover (first election)  2.95 s  1.7x floor`."""
    s = result.settings
    floor = result.read_floor
    write = result.write_floor
    lines = [
        f"controller failover, {s['partitions']:,} partitions in {s['topics']:,} topics, "
        f"{s['brokers']} brokers (ZooKeeper: 3 local servers)",
        _row(f"floor: pipelined read of {floor.znodes:,} znodes", f"{floor.seconds:.2f} s"),
    ]
    if write is not None:
        lines.append(
            _row(
                f"floor: fenced write of {write.writes:,} states ({write.multis} multis)",
                f"{write.seconds:.2f} s",
            )
        )
    first = result.rounds_of(FIRST_ELECTION)
    for r in first:
        lines.append(
            _row(
                "failover (first election)",
                f"{r.duration_s:.2f} s",
                f"{_ratio(r.duration_s, floor.seconds)} floor   "
                f"{r.timeline.leaders_elected:,} leaders moved",
            )
        )
        lines.extend(_load_row([r], floor.seconds))
    kills = result.rounds_of(AFTER_KILL)
    if kills:
        work = [r.duration_s for r in kills]
        moved = statistics.median(r.timeline.leaders_elected for r in kills)
        lines.append(
            _row(
                "failover after kill -9 (new controller's work)",
                f"{statistics.median(work):.2f} s",
                f"{_ratio(statistics.median(work), floor.seconds)} floor   "
                f"{moved:,.0f} leaders moved{_spread(work)}",
            )
        )
        lines.extend(_load_row(kills, floor.seconds))
        total = [r.kill_to_done_s for r in kills if r.kill_to_done_s is not None]
        if total:
            session_s = s["session_timeout_ms"] / 1000
            lines.append(
                _row(
                    f"kill -9 -> failover done (incl. {session_s:g} s session)",
                    f"{statistics.median(total):.2f} s",
                    _spread(total).removeprefix("; "),
                )
            )
    lines.append(_footnote(result))
    return "\n".join(lines)


def _load_row(rounds: list[RoundResult], floor_s: float) -> list[str]:
    """`  of which loading ...`: election to the first request sent (the reads)."""
    loads = [r.timeline.load_s for r in rounds if r.timeline.load_s is not None]
    if not loads:
        return []
    load = statistics.median(loads)
    return [
        _row(
            "  of which loading (until the first request sent)",
            f"{load:.2f} s",
            f"{_ratio(load, floor_s)} floor",
        )
    ]


def _row(label: str, value: str, extra: str = "") -> str:
    return f"{label:<{_LABEL_WIDTH}}{value:>8}   {extra}".rstrip()


def _footnote(result: BenchResult) -> str:
    floor = result.read_floor
    text = (
        f"floor = best of {len(result.reads)} reloads on a fresh session (decoded); "
        "failover = the new controller's own duration_ms"
    )
    write = result.write_floor
    if write is not None and result.rounds:
        both = floor.seconds + write.seconds
        ratios = ", ".join(f"round {r.number} {_ratio(r.duration_s, both)}" for r in result.rounds)
        text += f"\nvs read + write floor ({both:.2f} s): {ratios}"
    return text


def to_json(result: BenchResult) -> dict[str, Any]:
    """Every figure of the run as plain values."""
    floor = result.read_floor
    write = result.write_floor
    kills = result.rounds_of(AFTER_KILL)
    summary: dict[str, Any] = {
        "read_floor_s": floor.seconds,
        "write_floor_s": write.seconds if write is not None else None,
        "first_election_failover_s": next(
            (r.duration_s for r in result.rounds_of(FIRST_ELECTION)), None
        ),
        "after_kill_failover_s_median": (
            statistics.median(r.duration_s for r in kills) if kills else None
        ),
        "kill_to_done_s_median": (
            statistics.median(r.kill_to_done_s for r in kills if r.kill_to_done_s is not None)
            if kills
            else None
        ),
    }
    summary["first_election_x_floor"] = _x(summary["first_election_failover_s"], floor.seconds)
    summary["after_kill_x_floor"] = _x(summary["after_kill_failover_s_median"], floor.seconds)
    return {
        "settings": result.settings,
        "environment": result.environment,
        "summary": summary,
        "populate": {
            "znodes": result.populate.znodes,
            "transactions": result.populate.transactions,
            "seconds": result.populate.seconds,
            "znodes_per_s": result.populate.rate,
        },
        "floor": {
            "read": [
                {
                    "seconds": s.seconds,
                    "list_s": s.list_seconds,
                    "topics_s": s.topics_seconds,
                    "states_s": s.states_seconds,
                    "znodes": s.znodes,
                }
                for s in result.reads
            ],
            "write": [
                {"seconds": s.seconds, "writes": s.writes, "multis": s.multis}
                for s in result.writes
            ],
        },
        "rounds": [r.as_dict() for r in result.rounds],
    }


def _x(value: float | None, floor: float) -> float | None:
    return None if value is None or floor <= 0 else round(value / floor, 2)


def write_json(result: BenchResult, path: Path) -> None:
    """Write `to_json(result)` to `path`, indented."""
    path.write_text(json.dumps(to_json(result), indent=2) + "\n", encoding="utf-8")
