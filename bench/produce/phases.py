"""The produce benchmark's measured phases and what they cost: `Phase` (a timed load with
its CPU and the events written meanwhile), the four phases of a run (`Phases`), CPU per
operation, and the lines printed under the report's rows.

Ratios compare produce with the gRPC floor measured in the same run: Produce requests/s
(each carrying one batch per partition its broker leads) against the Metadata RPC/s of as
many threads as there are producers, and the p50 request latency against the p50 of one
sequential Metadata round trip ("each request costs N round trips").
CPU is given per operation and per process, so that a slow phase shows where the box's
two cores went. Pure values and formatting; main thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bench.produce.options import ProduceOptions
from bench.produce.rpc_load import LoadResult
from bench.shared.report import ratio
from bench.shared.usage import CpuUsage

_LABEL_WIDTH = 44
#: Above this share of busy CPU outside the measured processes, the notes say so.
OTHER_CPU_WARNING = 0.15


@dataclass(frozen=True, slots=True)
class Phase:
    """One measured load with what it cost the machine."""

    key: str
    title: str
    load: LoadResult
    cpu: CpuUsage
    events: dict[str, int]

    @property
    def name(self) -> str:
        """`acks=all`, `acks=1`, or the key."""
        return {"acks_all": "acks=all", "acks_1": "acks=1"}.get(self.key, self.key)

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "title": self.title,
            **self.load.as_dict(),
            "cpu": self.cpu.as_dict(),
            "cpu_ms_per_op": cpu_ms_per_op(self),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class Phases:
    """The floors (one thread, then as many threads as producers) and the produce phases."""

    floor_sequential: Phase
    floor_concurrent: Phase
    acks_all: Phase
    acks_one: Phase

    @property
    def produce(self) -> tuple[Phase, Phase]:
        """acks=all, acks=1."""
        return self.acks_all, self.acks_one

    @property
    def every(self) -> tuple[Phase, Phase, Phase, Phase]:
        """All four, in the order they ran."""
        return self.floor_sequential, self.floor_concurrent, self.acks_all, self.acks_one


def cpu_ms_per_op(phase: Phase) -> dict[str, float | None]:
    """CPU milliseconds per successful operation: each process, other, and the box."""
    ops = phase.load.ok
    if ops == 0:
        return {}
    out: dict[str, float | None] = {
        name: round(s * 1000 / ops, 4) for name, s in phase.cpu.processes.items()
    }
    out["other"] = round(phase.cpu.other_s * 1000 / ops, 4)
    out["box"] = round(phase.cpu.box_busy_s * 1000 / ops, 4)
    return out


def own_cpu_ms(phase: Phase) -> float:
    """CPU ms per successful operation in the measured processes (bench, brokers,
    ZooKeeper), which other work on the machine does not inflate; NaN without operations."""
    if phase.load.ok == 0:
        return math.nan
    return sum(phase.cpu.processes.values()) * 1000 / phase.load.ok


def cpu_ceiling(phase: Phase, cores: int) -> float:
    """Operations per second the measured processes' CPU per operation allows on `cores`."""
    per_op = own_cpu_ms(phase)
    return math.nan if math.isnan(per_op) or per_op <= 0 else cores * 1000 / per_op


def _x(value: float, floor: float) -> float | None:
    x = ratio(value, floor)
    return None if x is None else round(x, 3)


def _round(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def summary(phases: Phases, options: ProduceOptions, cores: int) -> dict[str, Any]:
    """The headline figures and ratios, for `bench.json`."""
    seq, conc = phases.floor_sequential.load, phases.floor_concurrent.load
    out: dict[str, Any] = {
        "floor_sequential_rpc_per_s": round(seq.rate, 1),
        "floor_sequential_p50_ms": round(seq.p50_s * 1000, 3),
        "floor_concurrent_rpc_per_s": round(conc.rate, 1),
        "floor_concurrent_p50_ms": round(conc.p50_s * 1000, 3),
    }
    for phase in phases.produce:
        load = phase.load
        out[phase.key] = {
            "records_per_s": round(load.units_rate, 1),
            "mb_per_s": round(load.units_rate * options.value_bytes / 1e6, 3),
            "requests_per_s": round(load.rate, 2),
            "p50_ms": round(load.p50_s * 1000, 3),
            "p99_ms": round(load.p99_s * 1000, 3),
            "requests_per_s_x_concurrent_floor": _x(load.rate, conc.rate),
            "p50_in_sequential_floor_round_trips": _x(load.p50_s, seq.p50_s),
            "p50_in_concurrent_floor_round_trips": _x(load.p50_s, conc.p50_s),
            "own_cpu_ms_per_request": _round(own_cpu_ms(phase)),
            "own_cpu_x_floor_rpc": _x(own_cpu_ms(phase), own_cpu_ms(phases.floor_concurrent)),
            "cpu_bound_requests_per_s": _round(cpu_ceiling(phase, cores)),
            "records_per_batch": options.batch,
        }
    out["acks_all_x_acks_1_throughput"] = _x(phases.acks_all.load.rate, phases.acks_one.load.rate)
    out["acks_all_minus_acks_1_p50_ms"] = round(
        (phases.acks_all.load.p50_s - phases.acks_one.load.p50_s) * 1000, 3
    )
    return out


def ms(seconds: float) -> str:
    """`0.25 ms`, `12.3 ms`, or `-` for NaN."""
    if math.isnan(seconds):
        return "-"
    return f"{seconds * 1000:.2f} ms" if seconds < 0.01 else f"{seconds * 1000:.1f} ms"


def errors(load: LoadResult) -> str:
    """`no errors`, or how many requests failed and which errors the attempts met."""
    if not load.errors and not load.failed:
        return "no errors"
    parts = [f"{name} x{count:,}" for name, count in load.errors.items()]
    return f"{load.failed:,} requests failed; attempt errors: " + (", ".join(parts) or "none")


def notes(phases: Phases, options: ProduceOptions, cores: int) -> list[str]:
    """Every phase's rate and latencies, the round-trip and CPU comparisons, where the CPU
    went, and the events written while producing."""
    lines = [f"{'':<{_LABEL_WIDTH}}{'rate':>16}{'p50':>11}{'p99':>11}"]
    for phase in phases.every:
        unit = "requests/s" if phase in phases.produce else "RPC/s"
        lines.append(
            f"{phase.title:<{_LABEL_WIDTH}}{f'{phase.load.rate:,.1f} {unit}':>16}"
            f"{ms(phase.load.p50_s):>11}{ms(phase.load.p99_s):>11}"
        )
    lines.append("")
    lines.extend(_ratios(phases, options, cores))
    lines.append("")
    lines.extend(_cpu_lines(phases))
    lines.extend(_event_lines(phases))
    return lines


def _ratios(phases: Phases, options: ProduceOptions, cores: int) -> list[str]:
    seq, conc = phases.floor_sequential.load, phases.floor_concurrent.load
    threads = options.producers
    lines = []
    for phase in phases.produce:
        load = phase.load
        lines.append(
            f"each {phase.name} request costs {_fmt_n(load.p50_s, seq.p50_s)} round trips of the "
            f"sequential floor's p50 ({ms(seq.p50_s)}), {_fmt_n(load.p50_s, conc.p50_s)} of "
            f"the {threads}-thread floor's ({ms(conc.p50_s)})"
        )
    floor_cpu = own_cpu_ms(phases.floor_concurrent)
    for phase in phases.produce:
        lines.append(
            f"CPU: each {phase.name} request costs {own_cpu_ms(phase):.2f} ms in the bench, "
            f"brokers and ZooKeeper = {_fmt_n(own_cpu_ms(phase), floor_cpu)}x a Metadata "
            f"RPC's ({floor_cpu:.2f} ms); {cores} cores allow "
            f"~{cpu_ceiling(phase, cores):,.0f} requests/s at that cost "
            f"(measured {phase.load.rate:,.0f})"
        )
    all_, one = phases.acks_all.load, phases.acks_one.load
    extra = all_.p50_s - one.p50_s
    x = _x(all_.rate, one.rate)
    lines.append(
        f"acks=all vs acks=1: {'-' if x is None else f'{x:.2f}x'} the requests/s; p50 "
        f"{extra * 1000:+.1f} ms (= {_fmt_n(extra, seq.p50_s)} floor round trips) waiting "
        "for the followers"
    )
    return lines


def _fmt_n(value: float, floor: float) -> str:
    x = _x(value, floor)
    return "-" if x is None else f"{x:.1f}"


def _cpu_lines(phases: Phases) -> list[str]:
    lines = ["CPU ms per operation (RPC or request), and how busy the 2 cores were:"]
    names = [*phases.floor_sequential.cpu.processes, "other", "box"]
    header = "".join(f"{n:>10}" for n in names)
    lines.append(f"  {'':<{_LABEL_WIDTH - 2}}{header}   busy")
    for phase in phases.every:
        per_op = cpu_ms_per_op(phase)
        cells = "".join(
            f"{per_op[n]:>10.3f}" if per_op.get(n) is not None else f"{'-':>10}" for n in names
        )
        lines.append(
            f"  {phase.title:<{_LABEL_WIDTH - 2}}{cells}   {phase.cpu.box_busy_fraction:4.0%}"
        )
    return lines


def _event_lines(phases: Phases) -> list[str]:
    lines = []
    for phase in phases.every:
        cpu = phase.cpu
        if cpu.box_busy_s > 0 and cpu.other_s / cpu.box_busy_s > OTHER_CPU_WARNING:
            top = ", ".join(f"{k} {v:.2f} s" for k, v in cpu.top_others.items()) or "none"
            lines.append(
                f"note: {cpu.other_s / cpu.box_busy_s:.0%} of the busy CPU during "
                f"'{phase.title}' ({cpu.other_s:.2f} s) was outside the bench, its brokers and "
                f"ZooKeeper: irq+softirq {cpu.irq_s:.2f} s; other processes: {top}"
            )
    for phase in phases.produce:
        if phase.events:
            counts = ", ".join(f"{k} x{v}" for k, v in phase.events.items())
            lines.append(f"events during {phase.title}: {counts}")
    return lines
